package egress

import (
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Decision is what became of a name lookup or a connection.
type Decision string

const (
	Answered Decision = "answered" // a lookup given a fake address (A) or an empty answer (AAAA, HTTPS)
	Allowed  Decision = "allowed"  // a connection relayed to its end
	Refused  Decision = "refused"  // by the policy or a budget, before anything was relayed
	Failed   Decision = "failed"   // allowed, but the name did not resolve or the dial failed
	Cut      Decision = "cut"      // allowed, then closed over a budget
)

// Reason is the rule behind a decision, one word, for grouping refusals
// (the summary, a report's counts); Detail says it in a sentence.
type Reason string

const (
	ReasonNone           Reason = ""
	ReasonNotInProfile   Reason = "not_in_profile"   // the name is not allowed on any port
	ReasonPort           Reason = "port_not_allowed" // the name is allowed, not on this port
	ReasonIPLiteral      Reason = "ip_literal"       // a CONNECT to an address, not a name
	ReasonNotPublic      Reason = "not_public"       // the name resolves into a range that is not public
	ReasonUnknownAddress Reason = "unknown_address"  // a captured connection to an address the stub never gave
	ReasonMalformed      Reason = "malformed"        // a DNS query or CONNECT request that could not be read
	ReasonQueryType      Reason = "query_type"       // a DNS question other than A, AAAA or HTTPS
	ReasonTooManyNames   Reason = "too_many_names"   // the stub's names budget is spent
	ReasonLookups        Reason = "lookups"          // the stub's lookups budget is spent: it stopped
	ReasonConnections    Reason = "connections"      // the run's connection budget is spent
	ReasonOpen           Reason = "open_connections" // too many connections open at once
	ReasonUpload         Reason = "upload"           // the run's bytes-out budget is spent
	ReasonDownload       Reason = "download"         // the run's bytes-in budget is spent
	ReasonTime           Reason = "time"             // a connection outlived its time budget
	ReasonResolve        Reason = "resolve"          // the supervisor's lookup of an allowed name failed
	ReasonDial           Reason = "dial"             // every address checked and allowed failed to connect
	ReasonRunEnded       Reason = "run_ended"        // the run ended with the connection open
	ReasonNoNetwork      Reason = "no_network"       // a lookup in a run whose profile allows no network (Names)
)

// Via is how a connection reached the supervisor.
type Via string

const (
	ViaCaptured Via = "captured" // to a fake address the DNS stub gave, on an allowed port
	ViaProxy    Via = "proxy"    // a CONNECT request to the HTTPS proxy
)

// Lookup is one name asked of the DNS stub, with one answer; repeats of
// the same question and answer count up rather than add entries.
type Lookup struct {
	Name     string // normalised; for a malformed query, empty (Detail quotes what could be read)
	Type     string // the question's type: A, AAAA, TXT, ...
	Decision Decision
	Answer   string // the fake address of an answered A question
	Reason   Reason
	Detail   string
	Count    int
}

// Conn is one connection the supervisor decided on.
type Conn struct {
	Name     string // normalised; for an IP literal or an unknown address, the address
	Port     uint16
	Via      Via
	Dialled  string // the address:port the supervisor connected to; empty if it did not
	Decision Decision
	Reason   Reason
	Detail   string
	Up       int64 // bytes from the analysis to the destination
	Down     int64 // bytes from the destination to the analysis
	Duration time.Duration
}

// Totals count every lookup and connection, whether or not its entry was
// kept.
type Totals struct {
	Lookups        int
	LookupsRefused int
	Conns          int
	ConnsAllowed   int
	ConnsRefused   int
	ConnsFailed    int
	ConnsCut       int
	Up, Down       int64
	LookupsBy      map[Reason]int // refused lookups, by reason
	ConnsBy        map[Reason]int // refused, failed and cut connections, by reason
}

// Log is the record of a run's egress: entries up to the budget it was
// kept with, and exact totals.
type Log struct {
	Lookups []Lookup
	Conns   []Conn
	Dropped int // entries not kept, over the budget
	Totals  Totals
}

type lookupKey struct {
	name, typ, answer string
	decision          Decision
	reason            Reason
}

// recorder keeps the log under a lock: DNS and every connection write
// to it from their own goroutines.
type recorder struct {
	mu      sync.Mutex
	max     int
	log     Log
	lookups map[lookupKey]int
}

func newRecorder(max int) *recorder {
	return &recorder{max: max, log: Log{Totals: Totals{LookupsBy: map[Reason]int{}, ConnsBy: map[Reason]int{}}}, lookups: map[lookupKey]int{}}
}

func (r *recorder) lookup(l Lookup) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := &r.log.Totals
	t.Lookups++
	if l.Decision == Refused {
		t.LookupsRefused++
		t.LookupsBy[l.Reason]++
	}
	k := lookupKey{l.Name, l.Type, l.Answer, l.Decision, l.Reason}
	if i, ok := r.lookups[k]; ok {
		r.log.Lookups[i].Count++
		return
	}
	if !r.room() {
		return
	}
	l.Count = 1
	r.lookups[k] = len(r.log.Lookups)
	r.log.Lookups = append(r.log.Lookups, l)
}

func (r *recorder) conn(c Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := &r.log.Totals
	t.Conns++
	t.Up += c.Up
	t.Down += c.Down
	switch c.Decision {
	case Allowed:
		t.ConnsAllowed++
	case Refused:
		t.ConnsRefused++
	case Failed:
		t.ConnsFailed++
	case Cut:
		t.ConnsCut++
	}
	if c.Decision != Allowed {
		t.ConnsBy[c.Reason]++
	}
	if r.room() {
		r.log.Conns = append(r.log.Conns, c)
	}
}

// room says whether one more entry may be kept, counting it dropped if
// not.
func (r *recorder) room() bool {
	if len(r.log.Lookups)+len(r.log.Conns) < r.max {
		return true
	}
	r.log.Dropped++
	return false
}

func (r *recorder) snapshot() Log {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.log
	l.Lookups = append([]Lookup(nil), l.Lookups...)
	l.Conns = append([]Conn(nil), l.Conns...)
	l.Totals.LookupsBy = maps.Clone(r.log.Totals.LookupsBy)
	l.Totals.ConnsBy = maps.Clone(r.log.Totals.ConnsBy)
	return l
}

// connPhrases say, in the summary's order, what each reason's refused,
// failed or cut connections were: "<verb> N connections to M <whom>
// <what>: targets", without "to M <whom>" when no entry names one.
var connPhrases = []struct {
	reason Reason
	verb   string
	whom   [2]string
	what   string
}{
	{ReasonNotInProfile, "refused", names, "not in the profile"},
	{ReasonPort, "refused", names, "on ports the profile does not allow"},
	{ReasonNotPublic, "refused", names, "resolving to addresses that are not public"},
	{ReasonIPLiteral, "refused", addresses, "given by number, not by name"},
	{ReasonUnknownAddress, "refused", addresses, "the DNS stub never gave"},
	{ReasonConnections, "refused", names, "over the run's connection budget (the supervisor then stopped listening)"},
	{ReasonOpen, "refused", names, "over the budget of connections open at once"},
	{ReasonUpload, "cut", names, "over the run's upload budget"},
	{ReasonDownload, "cut", names, "over the run's download budget"},
	{ReasonTime, "cut", names, "over the time budget of a connection"},
	{ReasonResolve, "failed", names, "the supervisor could not resolve"},
	{ReasonDial, "failed", names, "that did not answer"},
}

var (
	names     = [2]string{"name", "names"}
	addresses = [2]string{"address", "addresses"}
)

// Summary is one sentence for a run's completion notes naming what was
// refused, cut or failed ("refused 3 connections to 2 names not in the
// profile: evil.example:443, ..."); empty when nothing was.
func (l Log) Summary() string {
	var parts []string
	for _, p := range connPhrases {
		n := l.Totals.ConnsBy[p.reason]
		if n == 0 {
			continue
		}
		var targets []string
		named := 0
		for _, c := range l.Conns {
			if c.Reason == p.reason && c.Decision != Allowed && c.Name != "" {
				targets = append(targets, target(c))
				named++
			}
		}
		targets = uniq(targets)
		s := p.verb + " " + count(n, "connection", "connections")
		if len(targets) > 0 {
			whom := count(len(targets), p.whom[0], p.whom[1])
			if named < n { // entries dropped, or some that name nothing
				whom = "at least " + whom
			}
			s += " to " + whom
		}
		s += " " + p.what
		if len(targets) > 0 {
			s += ": " + list(targets)
		}
		parts = append(parts, s)
	}
	if n := l.Totals.ConnsBy[ReasonMalformed]; n > 0 {
		parts = append(parts, "refused "+count(n, "malformed proxy request", "malformed proxy requests"))
	}
	// Names refused at lookup that no connection names: the analysis
	// asked, was refused, and gave up (the commonest case: a client that
	// resolves before it connects).
	connected := map[string]bool{}
	for _, c := range l.Conns {
		connected[c.Name] = true
	}
	var names []string
	for _, q := range l.Lookups {
		if q.Decision == Refused && q.Reason == ReasonNotInProfile && !connected[q.Name] {
			names = append(names, q.Name)
		}
	}
	malformed := l.Totals.LookupsBy[ReasonMalformed]
	if l.Totals.LookupsBy[ReasonLookups] > 0 {
		parts = append(parts, "stopped the DNS stub over the run's lookups budget")
	}
	if n := l.Totals.LookupsBy[ReasonTooManyNames]; n > 0 {
		parts = append(parts, "refused "+count(n, "lookup", "lookups")+" over the run's budget of names")
	}
	if names = uniq(names); len(names) > 0 {
		parts = append(parts, "refused lookups of "+count(len(names), "name", "names")+" not in the profile: "+list(names))
	}
	if malformed > 0 {
		parts = append(parts, "refused "+count(malformed, "malformed DNS query", "malformed DNS queries"))
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, "; ")
	if l.Dropped > 0 {
		s += " (" + count(l.Dropped, "egress log entry", "egress log entries") + " over the budget not kept)"
	}
	return s
}

func target(c Conn) string {
	if c.Name == "" {
		return ""
	}
	return net.JoinHostPort(c.Name, strconv.Itoa(int(c.Port)))
}

// uniq sorts s and drops repeats and empty strings: connections end in
// whatever order their goroutines do, and a sentence should not.
func uniq(s []string) []string {
	s = slices.DeleteFunc(slices.Clone(s), func(x string) bool { return x == "" })
	slices.Sort(s)
	return slices.Compact(s)
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// list names up to three, then how many more.
func list(s []string) string {
	if len(s) <= 3 {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:3], ", ") + " and " + strconv.Itoa(len(s)-3) + " more"
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
