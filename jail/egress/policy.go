package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// ErrBadPolicy is the sentinel every refused policy entry matches with
// errors.Is; the concrete error is an *EntryError.
var ErrBadPolicy = errors.New("egress: bad policy entry")

// EntryError says which entry of a policy was refused, why, and how to
// write it instead. It names neither a flag nor a profile field: the
// caller knows where the entry came from and says so around it.
type EntryError struct {
	Entry  string // as written
	Kind   string // "host" or "range"
	Reason string // what is wrong with it
	Fix    string // how to write what was probably meant; may be empty
}

func (e *EntryError) Error() string {
	s := fmt.Sprintf("%s entry %q: %s", e.Kind, e.Entry, e.Reason)
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

// Is makes errors.Is(err, ErrBadPolicy) true.
func (e *EntryError) Is(target error) bool { return target == ErrBadPolicy }

// DefaultPort is the port a host entry allows when it names none: HTTPS.
const DefaultPort = 443

// postgresPort can never be allowed: the jail promises that no analysis
// reaches PostgreSQL, whatever its profile says (the same rule as
// --net host's TCP ports).
const postgresPort = 5432

// Host is one allowed destination: a name, or every name under a domain
// (Wildcard: "*.uniprot.org" allows rest.uniprot.org and
// a.b.uniprot.org, not uniprot.org itself), on one port.
type Host struct {
	Name     string // normalised: lower case, ASCII, no trailing dot; the domain for a wildcard
	Wildcard bool
	Port     uint16
}

// String is the entry as Parse reads it back.
func (h Host) String() string {
	s := h.Name
	if h.Wildcard {
		s = "*." + s
	}
	return s + ":" + strconv.Itoa(int(h.Port))
}

func (h Host) matches(name string) bool {
	if !h.Wildcard {
		return name == h.Name
	}
	return strings.HasSuffix(name, "."+h.Name)
}

// Policy is what a run may reach: names on ports, and the address ranges
// an allowed name may resolve into beyond the public internet. Build it
// with Parse; the zero Policy allows nothing.
type Policy struct {
	Hosts  []Host         // sorted, without duplicates
	Ranges []netip.Prefix // named by the profile: allowed although not public

	// labPublic marks the test internet's addresses as public. Only the
	// package's own tests set it (export_test.go); no profile, flag or
	// exported field reaches it. Runs through the binary in a test
	// internet name the lab's range in Ranges instead, as a user would.
	labPublic []netip.Prefix
}

// Parse reads host entries ("eutils.ncbi.nlm.nih.gov",
// "*.uniprot.org", "files.rcsb.org:80") and address ranges in CIDR
// notation ("10.20.0.0/16"). It returns the first entry it refuses as an
// *EntryError.
func Parse(hosts, ranges []string) (Policy, error) {
	var p Policy
	for _, e := range hosts {
		h, err := parseHost(e)
		if err != nil {
			return Policy{}, err
		}
		p.Hosts = append(p.Hosts, h)
	}
	slices.SortFunc(p.Hosts, func(a, b Host) int { return strings.Compare(a.String(), b.String()) })
	p.Hosts = slices.Compact(p.Hosts)
	for _, e := range ranges {
		r, err := parseRange(e)
		if err != nil {
			return Policy{}, err
		}
		p.Ranges = append(p.Ranges, r)
	}
	slices.SortFunc(p.Ranges, func(a, b netip.Prefix) int { return strings.Compare(a.String(), b.String()) })
	p.Ranges = slices.Compact(p.Ranges)
	return p, nil
}

func parseHost(entry string) (Host, error) {
	bad := func(reason, fix string) (Host, error) {
		return Host{}, &EntryError{Entry: entry, Kind: "host", Reason: reason, Fix: fix}
	}
	s := strings.TrimSpace(entry)
	if s == "" {
		return bad("empty", "name a host, such as eutils.ncbi.nlm.nih.gov")
	}
	if isIPLiteral(s) {
		return bad("an IP address, not a name", "name the host; an address range an allowed name may resolve into is allowed by CIDR")
	}
	port := uint16(DefaultPort)
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		if strings.Count(s, ":") > 1 || strings.HasPrefix(s, "[") {
			return bad("an IP address, not a name", "name the host; an address range an allowed name may resolve into is allowed by CIDR")
		}
		n, err := strconv.ParseUint(s[i+1:], 10, 16)
		switch {
		case err != nil:
			return bad("port "+strconv.Quote(s[i+1:])+" is not a number from 1 to 65535", "write host:port, such as files.rcsb.org:80")
		case n == 0:
			return bad("port 0 is not a port", "write a port from 1 to 65535, or none for 443")
		case n == postgresPort:
			return bad("port 5432 is PostgreSQL's, which can never be opened to an analysis", "")
		}
		port, s = uint16(n), s[:i]
		if isIPLiteral(s) {
			return bad("an IP address, not a name", "name the host; an address range an allowed name may resolve into is allowed by CIDR")
		}
	}
	h := Host{Port: port}
	switch {
	case s == "*" || s == "*.":
		return bad("a bare * would allow every host", "name hosts, or a domain's subdomains as *.example.org")
	case strings.HasPrefix(s, "*."):
		h.Wildcard, s = true, s[2:]
	}
	if strings.Contains(s, "*") {
		return bad("a * stands only as the whole first label", "write *.example.org for every name under example.org")
	}
	s, why := toASCII(s)
	if why != "" {
		return bad(why, "")
	}
	name, why := normalizeName(s)
	if why != "" {
		return bad("not a host name: "+why, "")
	}
	if h.Wildcard && !strings.Contains(name, ".") {
		return bad("*."+name+" would allow a whole top-level domain", "name the domain under it, such as *.uniprot.org")
	}
	h.Name = name
	return h, nil
}

func parseRange(entry string) (netip.Prefix, error) {
	bad := func(reason, fix string) (netip.Prefix, error) {
		return netip.Prefix{}, &EntryError{Entry: entry, Kind: "range", Reason: reason, Fix: fix}
	}
	s := strings.TrimSpace(entry)
	p, err := netip.ParsePrefix(s)
	switch {
	case err != nil:
		if a, aerr := netip.ParseAddr(s); aerr == nil {
			return bad("an address, not a range", "write it as "+netip.PrefixFrom(a, a.BitLen()).String())
		}
		return bad("not an address range in CIDR notation", "write one such as 10.20.0.0/16 or 2001:db8::/32")
	case p.Addr().Is4In6():
		return bad("an IPv4 range written as IPv6", "write the IPv4 range")
	case p.Addr().Zone() != "":
		return bad("an address with a zone", "")
	case p.Masked() != p:
		return bad("host bits set after the prefix length", "write "+p.Masked().String())
	case p.Bits() == 0:
		return bad("every address: the policy would stop no private or local address", "name the ranges that should be reachable")
	}
	return p, nil
}

// Allows says whether a connection to name on port is allowed; name must
// be normalised.
func (p Policy) Allows(name string, port uint16) bool {
	for _, h := range p.Hosts {
		if h.Port == port && h.matches(name) {
			return true
		}
	}
	return false
}

// AllowsName says whether name is allowed on some port: the DNS stub
// answers it.
func (p Policy) AllowsName(name string) bool {
	for _, h := range p.Hosts {
		if h.matches(name) {
			return true
		}
	}
	return false
}

// Ports are the ports some host is allowed on, in order: the ports on
// which the run's namespace needs a listener.
func (p Policy) Ports() []uint16 {
	var ports []uint16
	for _, h := range p.Hosts {
		ports = append(ports, h.Port)
	}
	slices.Sort(ports)
	return slices.Compact(ports)
}

// check runs every entry through Parse's rules again, so that a Policy
// built by hand is held to them too.
func (p Policy) check() error {
	for _, h := range p.Hosts {
		got, err := parseHost(h.String())
		if err != nil {
			return err
		}
		if got != h {
			return &EntryError{Entry: h.String(), Kind: "host", Reason: "not in normal form (lower case, ASCII, no trailing dot)", Fix: "build the policy with Parse"}
		}
	}
	for _, r := range p.Ranges {
		if _, err := parseRange(r.String()); err != nil {
			return err
		}
	}
	return nil
}
