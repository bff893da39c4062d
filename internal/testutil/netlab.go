package testutil

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A test internet (NewLab): a network namespace of its own holding an
// HTTPS server with its own CA, a DNS server answering its test names,
// and listeners where a jail must never connect: a PostgreSQL-like one on
// a private address, a metadata-like one on 169.254.169.254, the lab's
// own loopback, and a server for names no profile allows. What dials from
// the lab's namespace (Lab.Dial) is "the host" of a jail's supervisor;
// nothing in it reaches the real network. A process started there
// (Lab.Net.Start: a jail binary, for end-to-end runs) keeps the host's
// files, and its resolver reaches the lab's DNS server all the same: the
// server also answers on each IPv4 address the host's /etc/resolv.conf
// names, which the lab puts on its own lo.
//
// Its public servers sit in 198.18.0.0/15 and 2001:2::/48, the ranges
// RFC 2544 and RFC 5180 set aside for benchmarking labs, so they can
// never shadow a real address. A real policy counts those ranges as not
// public: the egress package's tests mark them public through a hook
// only they can reach, and runs through the binary name them as allowed
// ranges (CIDR) in their profile, as a user would name an institute's own
// range.
const (
	LabDomain   = "lab.test"             // every lab name is under it (RFC 2606 reserves .test)
	LabWeb      = "api.lab.test"         // the public HTTPS server
	LabWildcard = "svc.lab.test"         // every name under it is the public server too
	LabEvil     = "evil.lab.test"        // a public server no profile should allow
	LabLoopback = "loopback.lab.test"    // resolves to 127.0.0.1, where the lab has a listener
	LabPrivate  = "db.lab.test"          // resolves to the PostgreSQL-like listener's private address
	LabMetadata = "metadata.lab.test"    // resolves to 169.254.169.254
	LabRebind   = "rebind.lab.test"      // the public address at the first A lookup, the private one after
	LabMixed    = "mixed.lab.test"       // the public address and the private one in one answer
	LabLoop6    = "loopback6.lab.test"   // only an AAAA answer: ::1
	LabWeb6     = "v6.lab.test"          // only an AAAA answer: the public server's IPv6 address
	LabULA      = "ula.lab.test"         // only an AAAA answer: a unique-local (private) address
	LabNoAnswer = "nonexistent.lab.test" // NXDOMAIN, as every name the table lacks
)

// The lab's addresses and ports.
var (
	LabPublic       = netip.MustParsePrefix("198.18.0.0/15")
	LabPublic6      = netip.MustParsePrefix("2001:2::/48") // benchmarking too (RFC 5180)
	LabWebAddr      = netip.MustParseAddr("198.18.0.10")
	LabWeb6Addr     = netip.MustParseAddr("2001:2::10")
	LabULAAddr      = netip.MustParseAddr("fd00:1ab::5")
	LabEvilAddr     = netip.MustParseAddr("198.18.0.66")
	LabDNSAddr      = netip.AddrPortFrom(netip.MustParseAddr("198.18.0.53"), 53)
	LabPrivateAddr  = netip.MustParseAddr("10.0.0.5")
	LabMetadataAddr = netip.MustParseAddr("169.254.169.254")
)

const (
	LabHTTPS    = 443  // HTTPS on the web and evil servers, and a listener on every address that must not be reached
	LabHTTPSAlt = 8443 // HTTPS on the web server, for a port no profile allows
	LabBytes    = 9000 // plain TCP on the web server: "get N\n" sends N bytes; "put\n" reads to the end and answers the count
	LabPostgres = 5432 // the PostgreSQL-like listener, on the private address
	LabHTTP     = 80   // the metadata-like HTTP server, on 169.254.169.254
)

// Lab is a running test internet; NewLab makes one, cleaned up with the
// test.
type Lab struct {
	Net      *Netns
	CA       *x509.CertPool // the lab's CA, the only one its servers' certificates chain to
	CAPEM    []byte         // the same in PEM, for clients that read a file (curl --cacert, SSL_CERT_FILE)
	Resolver *net.Resolver  // asks the lab's DNS server from inside the lab

	dns       *labDNS
	mu        sync.Mutex
	accepted  map[netip.AddrPort]int // connections accepted, by listener
	listeners []net.Listener
	servers   []*http.Server
	wg        sync.WaitGroup
}

// NewLab starts a test internet, or fails the test (root is needed to
// make its network namespace).
func NewLab(t testing.TB) *Lab {
	t.Helper()
	lab, err := startLab()
	if err != nil {
		t.Fatalf("start the test internet: %v", err)
	}
	t.Cleanup(lab.close)
	return lab
}

func startLab() (_ *Lab, err error) {
	ns, err := NewNetns()
	if err != nil {
		return nil, err
	}
	lab := &Lab{Net: ns, accepted: map[netip.AddrPort]int{}}
	defer func() {
		if err != nil {
			lab.close()
		}
	}()
	for _, a := range []netip.Addr{LabWebAddr, LabWeb6Addr, LabEvilAddr, LabDNSAddr.Addr(), LabPrivateAddr, LabMetadataAddr, LabULAAddr} {
		if err := ns.AddAddr(a); err != nil {
			return nil, err
		}
	}
	ca, caPEM, cert, err := labCerts()
	if err != nil {
		return nil, err
	}
	lab.CA, lab.CAPEM = ca, caPEM
	lab.dns, err = startLabDNS(ns)
	if err != nil {
		return nil, err
	}
	lab.Resolver = ns.Resolver(LabDNSAddr)
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}}
	for _, ap := range []netip.AddrPort{
		netip.AddrPortFrom(LabWebAddr, LabHTTPS),
		netip.AddrPortFrom(LabWeb6Addr, LabHTTPS),
		netip.AddrPortFrom(LabWebAddr, LabHTTPSAlt),
		netip.AddrPortFrom(LabEvilAddr, LabHTTPS),
	} {
		if err := lab.serveHTTPS(ap, tlsConf); err != nil {
			return nil, err
		}
	}
	if err := lab.serve(netip.AddrPortFrom(LabWebAddr, LabBytes), serveBytes); err != nil {
		return nil, err
	}
	if err := lab.serve(netip.AddrPortFrom(LabPrivateAddr, LabPostgres), servePostgres); err != nil {
		return nil, err
	}
	if err := lab.serve(netip.AddrPortFrom(LabMetadataAddr, LabHTTP), serveMetadata); err != nil {
		return nil, err
	}
	for _, ap := range []netip.AddrPort{
		netip.AddrPortFrom(LabULAAddr, LabHTTPS),
		netip.AddrPortFrom(LabPrivateAddr, LabHTTPS),
		netip.AddrPortFrom(LabMetadataAddr, LabHTTPS),
		netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), LabHTTPS),
	} {
		if err := lab.serve(ap, func(c net.Conn) { c.Close() }); err != nil {
			return nil, err
		}
	}
	return lab, nil
}

// Accepted is how many connections the lab's listener at ap accepted:
// 0 for every listener a jail must never reach.
func (l *Lab) Accepted(ap netip.AddrPort) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.accepted[ap]
}

// Queries is how many questions the lab's DNS server was asked about
// name: 0 for every name a jail's DNS stub must not forward.
func (l *Lab) Queries(name string) int { return l.dns.count(name) }

// Dial dials from inside the lab, as a jail's supervisor does from the
// host.
func (l *Lab) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	return l.Net.DialContext(ctx, network, address)
}

// TLSConfig is a client's TLS configuration for name: the lab's CA, and
// nothing else, to verify the server.
func (l *Lab) TLSConfig(name string) *tls.Config {
	return &tls.Config{RootCAs: l.CA, ServerName: name}
}

func (l *Lab) listen(ap netip.AddrPort) (net.Listener, error) {
	ln, err := l.Net.Listen("tcp", ap.String())
	if err != nil {
		return nil, fmt.Errorf("listen on %s in the test internet: %w", ap, err)
	}
	l.mu.Lock()
	l.listeners = append(l.listeners, ln)
	l.mu.Unlock()
	return countingListener{ln, ap, l}, nil
}

type countingListener struct {
	net.Listener
	ap  netip.AddrPort
	lab *Lab
}

func (c countingListener) Accept() (net.Conn, error) {
	conn, err := c.Listener.Accept()
	if err == nil {
		c.lab.mu.Lock()
		c.lab.accepted[c.ap]++
		c.lab.mu.Unlock()
	}
	return conn, err
}

// serve accepts on ap and hands each connection to handle, in a
// goroutine of its own, until the lab closes.
func (l *Lab) serve(ap netip.AddrPort, handle func(net.Conn)) error {
	ln, err := l.listen(ap)
	if err != nil {
		return err
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return nil
}

func (l *Lab) serveHTTPS(ap netip.AddrPort, conf *tls.Config) error {
	ln, err := l.listen(ap)
	if err != nil {
		return err
	}
	// A config of its own: ServeTLS configures HTTP/2 into it in place.
	// Clients that close before a handshake (tests of refusals and
	// budgets do) are no news: the server keeps quiet about them.
	srv := &http.Server{Handler: http.HandlerFunc(labHandler), TLSConfig: conf.Clone(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)}
	l.mu.Lock()
	l.servers = append(l.servers, srv)
	l.mu.Unlock()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		_ = srv.ServeTLS(ln, "", "")
	}()
	return nil
}

// labHandler answers "/" with "hello from HOST", and "/bytes?n=N" with N
// zero bytes.
func labHandler(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/bytes" {
		n, err := strconv.ParseInt(r.URL.Query().Get("n"), 10, 64)
		if err != nil || n < 0 {
			http.Error(w, "n: a byte count", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		_, _ = io.CopyN(w, zeros{}, n)
		return
	}
	fmt.Fprintf(w, "hello from %s\n", r.Host)
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// serveBytes speaks the bytes port's protocol: "get N\n" is answered with
// N zero bytes, "put\n" by reading to the end and answering the count.
func serveBytes(c net.Conn) {
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		return
	}
	cmd, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch cmd {
	case "get":
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil {
			return
		}
		_, _ = io.CopyN(c, zeros{}, n)
	case "put":
		n, _ := io.Copy(io.Discard, br)
		fmt.Fprintf(c, "%d\n", n)
	}
}

// servePostgres looks like PostgreSQL to a client: it declines TLS ('N'
// to an SSLRequest) and answers a startup message with a FATAL error
// naming the lab, so that a client that got here says so.
func servePostgres(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	for {
		var hdr [8]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(hdr[:4]))
		if n == 8 && binary.BigEndian.Uint32(hdr[4:]) == 80877103 { // SSLRequest
			if _, err := c.Write([]byte{'N'}); err != nil {
				return
			}
			continue
		}
		if n < 8 || n > 10000 {
			return
		}
		if _, err := io.CopyN(io.Discard, c, int64(n-8)); err != nil {
			return
		}
		msg := "SFATAL\x00C28000\x00Mthe test internet's PostgreSQL-like listener: no jail should get here\x00\x00"
		resp := append([]byte{'E'}, binary.BigEndian.AppendUint32(nil, uint32(4+len(msg)))...)
		_, _ = c.Write(append(resp, msg...))
		return
	}
}

// serveMetadata answers HTTP as a cloud instance's metadata endpoint
// does, with a secret no jail should read.
func serveMetadata(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return
	}
	body := "lab-instance-secret for " + req.URL.Path + "\n"
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
}

func (l *Lab) close() {
	l.mu.Lock()
	servers, listeners := l.servers, l.listeners
	l.mu.Unlock()
	for _, s := range servers {
		_ = s.Close()
	}
	for _, ln := range listeners {
		_ = ln.Close()
	}
	if l.dns != nil {
		l.dns.close()
	}
	l.wg.Wait()
	if l.Net != nil {
		l.Net.Close()
	}
}

// labCerts makes the lab's CA and a server certificate for every name
// under lab.test, signed by it.
func labCerts() (*x509.CertPool, []byte, tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, tls.Certificate{}, fmt.Errorf("lab CA key: %w", err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "scidex-jail test internet CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, tls.Certificate{}, fmt.Errorf("lab CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, tls.Certificate{}, fmt.Errorf("lab CA certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, tls.Certificate{}, fmt.Errorf("lab server key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: LabWeb},
		DNSNames:     []string{LabDomain, "*." + LabDomain, "*." + LabWildcard},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, tls.Certificate{}, fmt.Errorf("lab server certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return pool, caPEM, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
