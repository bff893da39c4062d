package egress

import (
	"bufio"
	"errors"
	"io"
	"net/netip"
	"strconv"
	"strings"
)

// The CONNECT reader's bounds: a client sends one request line and a few
// headers (Host, User-Agent, Proxy-Connection); nothing more is needed,
// and a client that sends more is not one to wait for.
const (
	maxConnectHead  = 8 << 10 // bytes of request line and headers
	maxConnectLines = 64
	connectBufSize  = 4 << 10 // the longest line, and the reader's buffer
)

// connectRequest is what a CONNECT request asks for: a name (normalised)
// or an address (IP set), and a port.
type connectRequest struct {
	Name string
	IP   bool // Name is an IP literal, as written
	Port uint16
}

// requestError is a CONNECT request the proxy answers with an HTTP error
// status rather than a decision on a destination.
type requestError struct {
	status int // 400 or 405
	msg    string
}

func (e *requestError) Error() string { return e.msg }

var errHeadTooLong = errors.New("request head longer than 8 KiB or 64 lines")

// readConnect reads a CONNECT request head from r: "CONNECT host:port
// HTTP/1.1", headers (ignored: nothing a client says there changes the
// decision), and the empty line. Bytes after the head stay in r: a
// client may send its TLS hello without waiting for the 200. The caller
// sets the deadline: a client that never finishes its head is cut by it.
func readConnect(r *bufio.Reader) (connectRequest, error) {
	read := 0
	var line string
	for n := 0; ; n++ {
		b, err := r.ReadSlice('\n')
		read += len(b)
		switch {
		case errors.Is(err, bufio.ErrBufferFull) || read > maxConnectHead || n >= maxConnectLines:
			return connectRequest{}, &requestError{400, errHeadTooLong.Error()}
		case errors.Is(err, io.EOF) && read == 0:
			return connectRequest{}, io.EOF
		case errors.Is(err, io.EOF):
			return connectRequest{}, io.ErrUnexpectedEOF // a head cut short
		case err != nil:
			return connectRequest{}, err
		}
		s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		if n == 0 {
			line = s
			continue
		}
		if s == "" {
			break
		}
	}
	method, rest, ok1 := strings.Cut(line, " ")
	target, version, ok2 := strings.Cut(rest, " ")
	switch {
	case !ok1 || !ok2 || strings.Contains(version, " "):
		return connectRequest{}, &requestError{400, "not an HTTP request line"}
	case version != "HTTP/1.1" && version != "HTTP/1.0":
		return connectRequest{}, &requestError{400, "not HTTP/1.0 or HTTP/1.1"}
	case method != "CONNECT":
		return connectRequest{}, &requestError{405, "this proxy only tunnels (CONNECT host:port); plain http:// URLs go without a proxy"}
	}
	return parseTarget(target)
}

// parseTarget reads a CONNECT target, host:port or [v6]:port.
func parseTarget(t string) (connectRequest, error) {
	i := strings.LastIndexByte(t, ':')
	if i <= 0 {
		return connectRequest{}, &requestError{400, "the target is not host:port"}
	}
	host, portText := t[:i], t[i+1:]
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		return connectRequest{}, &requestError{400, "the target's port is not a number from 1 to 65535"}
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")); err == nil {
		// Recorded in canonical form, without a zone: its text is the
		// client's to choose and goes into the report.
		return connectRequest{Name: a.WithZone("").String(), IP: true, Port: uint16(port)}, nil
	}
	name, why := normalizeName(host)
	if why != "" {
		return connectRequest{}, &requestError{400, "the target is not a host name: " + why}
	}
	return connectRequest{Name: name, Port: uint16(port)}, nil
}

// refusal is the proxy's reply to a request it does not tunnel. The
// decision's words go in the status line as well as the body: clients
// print the status line (Python's "Tunnel connection failed: 403 ..."),
// so the analysis, and whoever reads its error, learns what refused it
// and why. The words are the package's own, with names already checked
// to be plain ASCII, so they cannot break the response.
func refusal(status int, why string) []byte {
	why = strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, "scidex-jail egress: "+why)
	body := why + "\n"
	return []byte("HTTP/1.1 " + strconv.Itoa(status) + " " + why + "\r\n" +
		"Content-Type: text/plain\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n" +
		"Connection: close\r\n\r\n" + body)
}

// established is the reply to a CONNECT the proxy tunnels.
var established = []byte("HTTP/1.1 200 Connection established\r\n\r\n")
