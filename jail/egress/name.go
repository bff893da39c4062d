package egress

import (
	"net/netip"
	"strings"

	"golang.org/x/net/idna"
)

// maxName is the longest host name DNS can carry in text form: 255 bytes
// on the wire (RFC 1035 3.1) are 253 characters without the final dot.
const maxName = 253

// normalizeName lowers a host name's case and drops one trailing dot, and
// says why the result is not a host name this package will match: every
// label 1 to 63 characters of ASCII letters, digits, hyphens and
// underscores (underscores appear in real service names), no label
// starting or ending with a hyphen, and a last label that is not all
// digits (a top-level domain never is; a resolver may read "127.1" or
// "2130706433" as an IPv4 address). Names arrive here from the DNS stub
// and CONNECT lines, where non-ASCII means punycode was not applied:
// refused, not mapped; a policy's names go through toASCII first.
func normalizeName(s string) (string, string) {
	s = strings.ToLower(strings.TrimSuffix(s, "."))
	if s == "" {
		return "", "an empty name"
	}
	if len(s) > maxName {
		return "", "a name longer than 253 characters"
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if why := checkLabel(l); why != "" {
			return "", why
		}
	}
	if allDigits(labels[len(labels)-1]) {
		return "", "its last label is a number, which reads as an IP address"
	}
	return s, ""
}

func checkLabel(l string) string {
	switch {
	case l == "":
		return "an empty label (two dots in a row, or a leading dot)"
	case len(l) > 63:
		return "a label longer than 63 characters"
	case l[0] == '-' || l[len(l)-1] == '-':
		return "a label starting or ending with a hyphen"
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return "a character other than letters, digits, hyphens and underscores"
		}
	}
	return ""
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// toASCII maps a name a profile wrote in Unicode (bücher.example) to the
// form DNS carries (xn--bcher-kva.example), by IDNA2008's lookup rules,
// which refuse what cannot be a registered name. Mapping rather than
// refusing: whoever wrote the profile meant that name, and the analysis
// will ask for its ASCII form.
func toASCII(s string) (string, string) {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s, ""
	}
	a, err := idna.Lookup.ToASCII(s)
	if err != nil {
		return "", "not a valid internationalised name (" + err.Error() + ")"
	}
	return a, ""
}

// isIPLiteral says whether s is an IP address (with or without brackets
// or a zone), which a host entry and a CONNECT line may not name.
func isIPLiteral(s string) bool {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	_, err := netip.ParseAddr(s)
	return err == nil
}
