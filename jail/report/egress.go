package report

// Egress is what the egress network mode decided (jail/egress's log): the
// policy the run had, each name the analysis looked up and each
// connection it opened, with exact totals. The lists are bounded: their
// entries together are at most the run's output-entries budget (the
// engine's default of 1000 when that is none), those beyond are counted
// in Dropped and still in the totals. Absent for a run of another mode.
type Egress struct {
	// Hosts are the allowed host entries as the policy read them
	// (name:port, *.domain:port); Ranges the CIDR ranges allowed
	// although not public.
	Hosts  []string `json:"hosts"`
	Ranges []string `json:"ranges"`

	Lookups     []EgressLookup `json:"lookups"`
	Connections []EgressConn   `json:"connections"`
	Dropped     int            `json:"dropped"` // entries not kept, over the budget
	Totals      EgressTotals   `json:"totals"`
}

// EgressLookup is one question asked of the DNS stub, with one answer;
// repeats count up.
type EgressLookup struct {
	Name     string `json:"name"` // normalised; empty for a malformed query
	Type     string `json:"type"` // A, AAAA, TXT, ...
	Decision string `json:"decision"`
	Answer   string `json:"answer,omitempty"` // the fake address of an answered A question
	Reason   string `json:"reason,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Count    int    `json:"count"`
}

// EgressConn is one connection the supervisor decided on.
type EgressConn struct {
	Name     string `json:"name"` // the name; for an IP literal or an unknown address, the address
	Port     int    `json:"port"`
	Via      string `json:"via"`               // captured (to a fake address) or proxy (CONNECT)
	Dialled  string `json:"dialled,omitempty"` // the address:port the supervisor connected to
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
	Detail   string `json:"detail,omitempty"`
	// BytesUp and BytesDown are the bytes from the analysis out and in
	// to it.
	BytesUp         int64   `json:"bytes_up"`
	BytesDown       int64   `json:"bytes_down"`
	DurationSeconds float64 `json:"duration_seconds"`
}

// EgressTotals count every lookup and connection, kept or not.
type EgressTotals struct {
	Lookups        int   `json:"lookups"`
	LookupsRefused int   `json:"lookups_refused"`
	Connections    int   `json:"connections"`
	Allowed        int   `json:"allowed"`
	Refused        int   `json:"refused"`
	Failed         int   `json:"failed"`
	Cut            int   `json:"cut"`
	BytesUp        int64 `json:"bytes_up"`
	BytesDown      int64 `json:"bytes_down"`
}
