package egress

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Names is the supervisor's side of a run with no network (the none
// mode): the name lookups the analysis makes are answered, refused, and
// recorded, so that its report can say "the analysis tried to reach
// eutils.ncbi.nlm.nih.gov; this profile allows no network" where the
// analysis only saw "Name or service not known".
//
// It needs no inet socket in the run, whose seccomp filter refuses them
// there: it speaks the protocol of glibc's name service cache daemon
// (nscd) on a unix socket of the run's view (/var/run/nscd/socket), which
// the C library asks before any other source, for getaddrinfo (and so
// Python, curl, R, most C programs), gethostbyname, and users and groups.
// It answers getaddrinfo and gethostbyname for the names of the host's
// /etc/hosts, which the view shows (localhost), as the library would from
// the file; refuses every other name (HOST_NOT_FOUND: "Name or service
// not known") and records it; and hangs up on every other request (users,
// groups, services), which sends the library to its own files (the
// view's /etc/passwd), as with no daemon at all. A program that does not use the C library's resolver
// (Go's own, musl's) tries DNS itself and meets seccomp's EAFNOSUPPORT,
// unrecorded.
type Names struct {
	rec   *recorder
	hosts map[string][]netip.Addr
	left  int // lookups left in the budget
	mu    sync.Mutex
	wg    sync.WaitGroup
	l     net.Listener
}

// The requests of nscd's protocol (glibc's nscd/nscd-client.h) this
// reads, and its version.
const (
	nscdVersion         = 2
	nscdGetHostByName   = 4
	nscdGetHostByNameV6 = 5
	nscdGetAI           = 14
	nscdMaxKey          = 1024
	hostNotFound        = 1 // h_errno's HOST_NOT_FOUND
)

// NewNames is a name service recording at most entries lookups (repeats
// count up; 0: DefaultBudgets') and answering the names of hostsFile (""
// or unreadable: none).
func NewNames(entries int, hostsFile string) *Names {
	b := Budgets{Entries: entries}.withDefaults()
	return &Names{rec: newRecorder(b.Entries), hosts: readHosts(hostsFile), left: b.Lookups}
}

// namesAtOnce bounds the requests answered at once: the supervisor's
// work is not in the run's cgroup, and one that opens connections and
// sends nothing holds each for its deadline. The rest wait in the
// socket's backlog, the kernel's.
const namesAtOnce = 16

// Serve serves l (the view's socket) until Stop.
func (n *Names) Serve(l net.Listener) {
	n.l = l
	slots := make(chan struct{}, namesAtOnce)
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for {
			slots <- struct{}{}
			c, err := l.Accept()
			if err != nil {
				<-slots
				if errors.Is(err, net.ErrClosed) {
					return
				}
				time.Sleep(10 * time.Millisecond)
				continue
			}
			n.wg.Add(1)
			go func() {
				defer n.wg.Done()
				defer func() { <-slots }()
				defer c.Close()
				n.answer(c)
			}()
		}
	}()
}

// Stop closes the socket, waits for what is being answered and returns
// the log.
func (n *Names) Stop() Log {
	if n.l != nil {
		n.l.Close()
	}
	n.wg.Wait()
	return n.rec.snapshot()
}

// answer reads one request and answers it; a request it cannot read is
// hung up on (the library then goes to its own sources).
func (n *Names) answer(c net.Conn) {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(io.LimitReader(c, 12+nscdMaxKey))
	var h [3]int32
	if binary.Read(r, binary.NativeEndian, &h) != nil || h[0] != nscdVersion || h[2] < 0 || h[2] > nscdMaxKey {
		return
	}
	key := make([]byte, h[2])
	if _, err := io.ReadFull(r, key); err != nil {
		return
	}
	typ := h[1]
	if typ != nscdGetAI && typ != nscdGetHostByName && typ != nscdGetHostByNameV6 {
		return // users, groups, services, the cache's shared memory: the library's own sources
	}
	asked := strings.TrimSuffix(string(key), "\x00")
	name, why := normalizeName(asked)
	// Every hosts request is answered, never hung up on: the C library
	// takes a hang-up for a daemon gone and asks none for its next 100
	// lookups, which would then go unrecorded.
	if addrs, ok := n.hosts[name]; ok && why == "" {
		switch typ {
		case nscdGetAI:
			c.Write(aiFound(name, addrs))
		case nscdGetHostByName:
			c.Write(hostFound(name, addrs, true))
		default:
			c.Write(hostFound(name, addrs, false))
		}
		return
	}
	if !n.spend() {
		return
	}
	l := Lookup{Name: name, Type: "getaddrinfo", Decision: Refused, Reason: ReasonNoNetwork, Detail: "the profile allows no network"}
	if typ != nscdGetAI {
		l.Type = "gethostbyname"
	}
	if why != "" {
		l = malformed(quoteName(asked) + ": " + why)
	}
	n.rec.lookup(l)
	// found 0: no address, and h_errno HOST_NOT_FOUND, final (the library
	// asks no other source).
	if typ == nscdGetAI {
		c.Write(aiHeader(0, 0, 0, 0, hostNotFound))
	} else {
		c.Write(hostHeader(0, 0, 0, 0, 0, 0, hostNotFound))
	}
}

// hostHeader is nscd's hst_response_header: version, found, h_name_len,
// h_aliases_cnt, h_addrtype, h_length, h_addr_list_cnt, error.
func hostHeader(found, nameLen, aliases, addrType, addrLen, addrs, herr int32) []byte {
	b := make([]byte, 0, 32)
	for _, v := range []int32{nscdVersion, found, nameLen, aliases, addrType, addrLen, addrs, herr} {
		b = binary.NativeEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// hostFound is gethostbyname's answer for a name of the hosts file: its
// addresses of the family asked (IPv4, or IPv6), the name, no aliases;
// none of that family is HOST_NOT_FOUND, as the file would say.
func hostFound(name string, addrs []netip.Addr, v4 bool) []byte {
	var data []byte
	n := int32(0)
	for _, a := range addrs {
		if a.Is4() == v4 {
			data = append(data, a.AsSlice()...)
			n++
		}
	}
	if n == 0 {
		return hostHeader(0, 0, 0, 0, 0, 0, hostNotFound)
	}
	typ, size := int32(2), int32(4)
	if !v4 {
		typ, size = 10, 16
	}
	h := append([]byte(name), 0)
	out := hostHeader(1, int32(len(h)), 0, typ, size, n, 0)
	return append(append(out, h...), data...)
}

// spend takes one lookup from the budget: false once it is spent, when
// the socket is closed (the library then finds no daemon and goes to
// its own sources, at no cost to the supervisor).
func (n *Names) spend() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.left <= 0 {
		return false
	}
	n.left--
	if n.left == 0 && n.l != nil {
		n.l.Close()
	}
	return true
}

// aiHeader is nscd's ai_response_header: version, found, naddrs,
// addrslen, canonlen, error (six int32 in the host's order).
func aiHeader(found, naddrs, addrslen, canonlen, herr int32) []byte {
	b := make([]byte, 0, 24)
	for _, v := range []int32{nscdVersion, found, naddrs, addrslen, canonlen, herr} {
		b = binary.NativeEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// aiFound is a found answer: the header, the addresses, their families
// (AF_INET 2, AF_INET6 10) and the canonical name, NUL-terminated.
func aiFound(name string, addrs []netip.Addr) []byte {
	var data, fams []byte
	for _, a := range addrs {
		if a.Is4() {
			fams = append(fams, 2)
		} else {
			fams = append(fams, 10)
		}
		data = append(data, a.AsSlice()...)
	}
	canon := append([]byte(name), 0)
	out := aiHeader(1, int32(len(addrs)), int32(len(data)), int32(len(canon)), 0)
	return append(append(append(out, data...), fams...), canon...)
}

// parseHosts reads an /etc/hosts: name to its addresses, in order.
func parseHosts(b []byte) map[string][]netip.Addr {
	out := map[string][]netip.Addr{}
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		a, err := netip.ParseAddr(f[0])
		if err != nil {
			continue
		}
		for _, name := range f[1:] {
			if n, why := normalizeName(name); why == "" {
				out[n] = append(out[n], a.Unmap().WithZone(""))
			}
		}
	}
	return out
}

// NamesSummary is the completion notes' sentence for the lookups a run
// with no network made, why the refusal ("The analysis tried to reach
// eutils.ncbi.nlm.nih.gov; this profile allows no network."); empty when
// it made none.
func (l Log) NamesSummary(why string) string {
	var names []string
	for _, q := range l.Lookups {
		if q.Reason == ReasonNoNetwork && q.Name != "" {
			names = append(names, q.Name)
		}
	}
	names = uniq(names)
	if len(names) == 0 {
		return ""
	}
	s := "The analysis tried to reach " + list(names)
	if l.Dropped > 0 {
		s += " (and more: " + count(l.Dropped, "lookup", "lookups") + " not kept)"
	}
	return s + "; " + why + "."
}
