package egress

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		hosts  []string
		ranges []string
		want   []string // Hosts as strings
		ports  []uint16
	}{
		{"a name takes 443", []string{"eutils.ncbi.nlm.nih.gov"}, nil, []string{"eutils.ncbi.nlm.nih.gov:443"}, []uint16{443}},
		{"case, trailing dot, spaces", []string{" EUtils.NCBI.nlm.nih.gov. "}, nil, []string{"eutils.ncbi.nlm.nih.gov:443"}, []uint16{443}},
		{"wildcard with a port", []string{"*.uniprot.org:80"}, nil, []string{"*.uniprot.org:80"}, []uint16{80}},
		{"duplicates merge, ports sort", []string{"a.example:80", "a.example", "a.example:443", "b.example:8443"}, nil,
			[]string{"a.example:443", "a.example:80", "b.example:8443"}, []uint16{80, 443, 8443}},
		{"unicode maps to punycode", []string{"bücher.example"}, nil, []string{"xn--bcher-kva.example:443"}, []uint16{443}},
		{"underscore", []string{"my_bucket.s3.example"}, nil, []string{"my_bucket.s3.example:443"}, []uint16{443}},
		{"ranges", nil, []string{"10.20.0.0/16", "2001:db8::/32", "10.20.0.0/16"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.hosts, tt.ranges)
			if err != nil {
				t.Fatalf("Parse(%q, %q) = %v", tt.hosts, tt.ranges, err)
			}
			var got []string
			for _, h := range p.Hosts {
				got = append(got, h.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Parse(%q).Hosts = %q, want %q", tt.hosts, got, tt.want)
			}
			if got := p.Ports(); !slices.Equal(got, tt.ports) {
				t.Errorf("Parse(%q).Ports() = %v, want %v", tt.hosts, got, tt.ports)
			}
			if len(tt.ranges) > 0 && len(p.Ranges) != 2 {
				t.Errorf("Parse(ranges %q).Ranges = %v, want two", tt.ranges, p.Ranges)
			}
			if err := p.check(); err != nil {
				t.Errorf("Parse(%q).check() = %v, want nil", tt.hosts, err)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		entry string
		host  bool // a host entry; else a range
		want  string
	}{
		{"", true, "empty"},
		{"*", true, "a bare * would allow every host"},
		{"*.", true, "a bare *"},
		{"*.org", true, "a whole top-level domain"},
		{"a.*.example", true, "whole first label"},
		{"*foo.example", true, "whole first label"},
		{"1.2.3.4", true, "an IP address"},
		{"1.2.3.4:443", true, "an IP address"},
		{"[::1]:443", true, "an IP address"},
		{"::1", true, "an IP address"},
		{"127.1", true, "reads as an IP address"},
		{"2130706433", true, "reads as an IP address"},
		{"a.example:0", true, "port 0 is not a port"},
		{"a.example:65536", true, "not a number from 1 to 65535"},
		{"a.example:https", true, "not a number"},
		{"db.example:5432", true, "PostgreSQL"},
		{"a..example", true, "empty label"},
		{"-a.example", true, "hyphen"},
		{"a b.example", true, "a character other than"},
		{"a/b.example", true, "a character other than"},
		{strings.Repeat("a", 64) + ".example", true, "longer than 63"},
		{strings.Repeat("abcdefg.", 40) + "example", true, "longer than 253"},
		{"xn--.example", true, "hyphen"},
		{"10.0.0.0", false, "write it as 10.0.0.0/32"},
		{"10.0.0.1/8", false, "write 10.0.0.0/8"},
		{"0.0.0.0/0", false, "every address"},
		{"::/0", false, "every address"},
		{"::ffff:10.0.0.0/104", false, "IPv4 range written as IPv6"},
		{"ten.example/8", false, "not an address range"},
	}
	for _, tt := range tests {
		var err error
		if tt.host {
			_, err = Parse([]string{tt.entry}, nil)
		} else {
			_, err = Parse(nil, []string{tt.entry})
		}
		var ee *EntryError
		if !errors.Is(err, ErrBadPolicy) || !errors.As(err, &ee) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want an *EntryError saying %q", tt.entry, err, tt.want)
			continue
		}
		if ee.Entry != tt.entry {
			t.Errorf("Parse(%q): EntryError.Entry = %q, want the entry as written", tt.entry, ee.Entry)
		}
	}
}

func TestAllows(t *testing.T) {
	p, err := Parse([]string{"eutils.ncbi.nlm.nih.gov", "*.uniprot.org", "files.rcsb.org:80"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		port      uint16
		want      bool
		wantNamed bool
	}{
		{"eutils.ncbi.nlm.nih.gov", 443, true, true},
		{"eutils.ncbi.nlm.nih.gov", 80, false, true},
		{"ncbi.nlm.nih.gov", 443, false, false},
		{"x.eutils.ncbi.nlm.nih.gov", 443, false, false},
		{"rest.uniprot.org", 443, true, true},
		{"a.b.uniprot.org", 443, true, true},
		{"uniprot.org", 443, false, false},
		{"evilunipro.org", 443, false, false},
		{"xuniprot.org", 443, false, false},
		{"files.rcsb.org", 80, true, true},
		{"files.rcsb.org", 443, false, true},
		{"evil.example", 443, false, false},
	}
	for _, tt := range tests {
		if got := p.Allows(tt.name, tt.port); got != tt.want {
			t.Errorf("Allows(%s, %d) = %v, want %v", tt.name, tt.port, got, tt.want)
		}
		if got := p.AllowsName(tt.name); got != tt.wantNamed {
			t.Errorf("AllowsName(%s) = %v, want %v", tt.name, got, tt.wantNamed)
		}
	}
}

// TestCheckRefusesHandBuilt: a Policy built without Parse is held to its
// rules when an engine is made from it.
func TestCheckRefusesHandBuilt(t *testing.T) {
	tests := []struct {
		name string
		p    Policy
		want string
	}{
		{"postgres port", Policy{Hosts: []Host{{Name: "db.example", Port: postgresPort}}}, "PostgreSQL"},
		{"port 0", Policy{Hosts: []Host{{Name: "a.example"}}}, "port 0"},
		{"upper case", Policy{Hosts: []Host{{Name: "A.example", Port: 443}}}, "normal form"},
		{"bare wildcard", Policy{Hosts: []Host{{Wildcard: true, Port: 443}}}, "a bare *"},
	}
	for _, tt := range tests {
		if _, err := New(Config{Policy: tt.p}); !errors.Is(err, ErrBadPolicy) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: New = %v, want ErrBadPolicy saying %q", tt.name, err, tt.want)
		}
	}
}

// FuzzParse: whatever a profile says, Parse refuses it with an
// *EntryError, or returns hosts in normal form that read back as
// themselves, on a real port other than PostgreSQL's.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"eutils.ncbi.nlm.nih.gov", "*.uniprot.org:80", "bücher.example", "1.2.3.4", "[::1]:443", "*", "a..b", "x:5432"} {
		f.Add(s, "10.0.0.0/8")
	}
	f.Fuzz(func(t *testing.T, host, cidr string) {
		p, err := Parse([]string{host}, []string{cidr})
		if err != nil {
			var ee *EntryError
			if !errors.As(err, &ee) || !errors.Is(err, ErrBadPolicy) {
				t.Fatalf("Parse(%q, %q) = %v, want an *EntryError", host, cidr, err)
			}
			return
		}
		if err := p.check(); err != nil {
			t.Fatalf("Parse(%q) = %+v, which check refuses: %v", host, p, err)
		}
		for _, h := range p.Hosts {
			if h.Port == 0 || h.Port == postgresPort {
				t.Fatalf("Parse(%q) allowed port %d", host, h.Port)
			}
			if h.Wildcard && !strings.Contains(h.Name, ".") {
				t.Fatalf("Parse(%q) = *.%s, a wildcard over a top-level domain", host, h.Name)
			}
		}
		for _, r := range p.Ranges {
			if r.Bits() == 0 || r.Masked() != r {
				t.Fatalf("Parse(range %q) = %v", cidr, r)
			}
		}
	})
}
