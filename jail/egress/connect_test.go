package egress

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadConnect(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   connectRequest
		status int    // of a requestError; 0: no error
		rest   string // what stays in the reader
	}{
		{"plain", "CONNECT api.example:443 HTTP/1.1\r\nHost: api.example:443\r\n\r\n", connectRequest{Name: "api.example", Port: 443}, 0, ""},
		{"bare newlines", "CONNECT api.example:443 HTTP/1.0\n\n", connectRequest{Name: "api.example", Port: 443}, 0, ""},
		{"normalised", "CONNECT API.Example.:8443 HTTP/1.1\r\n\r\n", connectRequest{Name: "api.example", Port: 8443}, 0, ""},
		{"hello follows", "CONNECT api.example:443 HTTP/1.1\r\n\r\n\x16\x03\x01hello", connectRequest{Name: "api.example", Port: 443}, 0, "\x16\x03\x01hello"},
		{"IPv4 literal", "CONNECT 10.0.0.5:5432 HTTP/1.1\r\n\r\n", connectRequest{Name: "10.0.0.5", IP: true, Port: 5432}, 0, ""},
		{"IPv6 literal", "CONNECT [::1]:443 HTTP/1.1\r\n\r\n", connectRequest{Name: "::1", IP: true, Port: 443}, 0, ""},
		{"IPv6 literal with a zone", "CONNECT [fe80::0001%eth0\x1b[31m]:443 HTTP/1.1\r\n\r\n", connectRequest{Name: "fe80::1", IP: true, Port: 443}, 0, ""},
		{"GET", "GET http://api.example/ HTTP/1.1\r\n\r\n", connectRequest{}, 405, ""},
		{"lower-case method", "connect api.example:443 HTTP/1.1\r\n\r\n", connectRequest{}, 405, ""},
		{"HTTP/2", "CONNECT api.example:443 HTTP/2\r\n\r\n", connectRequest{}, 400, ""},
		{"no port", "CONNECT api.example HTTP/1.1\r\n\r\n", connectRequest{}, 400, ""},
		{"port 0", "CONNECT api.example:0 HTTP/1.1\r\n\r\n", connectRequest{}, 400, ""},
		{"port too big", "CONNECT api.example:65536 HTTP/1.1\r\n\r\n", connectRequest{}, 400, ""},
		{"bad name", "CONNECT a_b/c:443 HTTP/1.1\r\n\r\n", connectRequest{}, 400, ""},
		{"numeric name", "CONNECT 2130706433:443 HTTP/1.1\r\n\r\n", connectRequest{}, 400, ""},
		{"extra words", "CONNECT api.example:443 HTTP/1.1 x\r\n\r\n", connectRequest{}, 400, ""},
		{"long line", "CONNECT " + strings.Repeat("a", 5000) + ":443 HTTP/1.1\r\n\r\n", connectRequest{}, 400, ""},
		{"many headers", "CONNECT api.example:443 HTTP/1.1\r\n" + strings.Repeat("X: y\r\n", 100) + "\r\n", connectRequest{}, 400, ""},
		{"big head", "CONNECT api.example:443 HTTP/1.1\r\n" + strings.Repeat("X: "+strings.Repeat("y", 1000)+"\r\n", 10) + "\r\n", connectRequest{}, 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(tt.in), connectBufSize)
			got, err := readConnect(r)
			var re *requestError
			switch {
			case tt.status == 0 && err != nil:
				t.Fatalf("readConnect(%.40q) = %v, want %+v", tt.in, err, tt.want)
			case tt.status != 0 && (!errors.As(err, &re) || re.status != tt.status):
				t.Fatalf("readConnect(%.40q) = %+v, %v, want a %d", tt.in, got, err, tt.status)
			case got != tt.want:
				t.Errorf("readConnect(%.40q) = %+v, want %+v", tt.in, got, tt.want)
			}
			if tt.status == 0 {
				rest, _ := io.ReadAll(r)
				if string(rest) != tt.rest {
					t.Errorf("readConnect(%.40q) left %q, want %q", tt.in, rest, tt.rest)
				}
			}
		})
	}
}

// TestReadConnectCut: a head cut short is an error, not a request.
func TestReadConnectCut(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"", io.EOF}, // nothing asked
		{"CONNECT api.example:443 HTTP/1.1\r\n", io.ErrUnexpectedEOF},
		{"CONNECT api.exa", io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		if got, err := readConnect(bufio.NewReader(strings.NewReader(tt.in))); err != tt.want {
			t.Errorf("readConnect(%q) = %+v, %v, want %v", tt.in, got, err, tt.want)
		}
	}
}

// TestRefusalText: the reply's status line carries the reason, with
// nothing in it that could end the line early.
func TestRefusalText(t *testing.T) {
	got := string(refusal(403, "evil.example:443 is not in the profile\r\nX: y"))
	line, _, _ := strings.Cut(got, "\r\n")
	if want := "HTTP/1.1 403 scidex-jail egress: evil.example:443 is not in the profile??X: y"; line != want {
		t.Errorf("refusal status line = %q, want %q", line, want)
	}
}

// FuzzReadConnect: whatever a client sends, the reader returns a request
// with a normalised name (or an IP literal) and a real port, or an
// error; it never reads more than its head budget.
func FuzzReadConnect(f *testing.F) {
	f.Add("CONNECT api.example:443 HTTP/1.1\r\nHost: api.example:443\r\n\r\n")
	f.Add("CONNECT [::1]:443 HTTP/1.1\r\n\r\n")
	f.Add("GET / HTTP/1.1\r\n\r\n")
	f.Add("CONNECT a:1 HTTP/1.0\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		src := &countingReader{r: strings.NewReader(in)}
		got, err := readConnect(bufio.NewReaderSize(src, connectBufSize))
		if src.n > maxConnectHead+connectBufSize {
			t.Fatalf("read %d bytes, more than the head budget and a buffer", src.n)
		}
		if err != nil {
			return
		}
		if got.Port == 0 {
			t.Fatalf("request %+v with port 0", got)
		}
		if got.IP {
			if !isIPLiteral(got.Name) {
				t.Fatalf("request %+v marked IP is not an address", got)
			}
			return
		}
		if n, why := normalizeName(got.Name); why != "" || n != got.Name {
			t.Fatalf("request name %q is not normal (%s)", got.Name, why)
		}
	})
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
