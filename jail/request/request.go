package request

import (
	"errors"
	"fmt"

	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/option"
)

// Request is one run as its caller asks for it: the profile it starts
// from, the values given over the profile, the paths, the command and the
// run's name. Every field is optional but ID and Command; a field left
// out keeps the profile's value, or the default `run` documents. A field
// that a profile has too is named as the profile names it (read_only,
// allow_tcp); Limits holds the limits by the profile's field names.
//
// `scidex-jail run` decodes its command line into a Request, `scidex-jail
// serve` decodes one from the "run" object of a request line (protocol 2,
// docs/serve.md), and the Python client builds one from its checked
// arguments; Resolve turns it into the run's spec.
type Request struct {
	ID      string   `json:"id"`
	Command []string `json:"command"`
	// Cwd is the absolute directory relative paths are taken from (and
	// root's default): the caller's working directory.
	Cwd string `json:"cwd"`

	Profile string `json:"profile,omitempty"` // "": default
	Config  string `json:"config,omitempty"`  // the profiles file; "": the installed one, if any

	// Limits are limits given over the profile's, by the limit's name
	// (jail/limits' Name: memory, output_bytes; the request field of a
	// limit is limits.NAME), each as its text (512M, 90s, none), read as
	// a profiles file's field is.
	Limits map[string]string `json:"limits,omitempty"`

	Net      netmode.Name `json:"net,omitempty"` // a row of jail/netmode's table
	AllowTCP []uint16     `json:"allow_tcp,omitempty"`
	// AllowHosts and AllowRanges are the egress mode's hosts and ranges,
	// added to the profile's.
	AllowHosts  []string `json:"allow_hosts,omitempty"`
	AllowRanges []string `json:"allow_ranges,omitempty"`

	Root         string   `json:"root,omitempty"`     // the platform's checkout; "": Cwd
	TmpRoot      string   `json:"tmp_root,omitempty"` // "": jail.DefaultTmpRoot
	CgroupParent string   `json:"cgroup_parent,omitempty"`
	Inputs       []string `json:"inputs,omitempty"`
	ReadOnly     []string `json:"read_only,omitempty"`
	ReadWrite    []string `json:"read_write,omitempty"`
	Env          []string `json:"env,omitempty"` // NAME=VALUE, over the profile's

	Keep         bool   `json:"keep,omitempty"`
	KeepScratch  bool   `json:"keep_scratch,omitempty"`
	Collect      string `json:"collect,omitempty"`
	CollectMerge bool   `json:"collect_merge,omitempty"`
	Report       string `json:"report,omitempty"`

	// UID and GID fix the analysis' host ids when the jail runs as root
	// (both or neither); UIDRange is where ids are leased from otherwise
	// ("": uidlease.Default).
	UID      *int   `json:"uid,omitempty"`
	GID      *int   `json:"gid,omitempty"`
	UIDRange string `json:"uid_range,omitempty"`

	AllowDegraded []string `json:"allow_degraded,omitempty"`
	UnsafeDisable []string `json:"unsafe_disable,omitempty"`
}

// FieldError is a request refused for one field's value: Field is its
// path in the request (read_only, limits.memory: the row's request
// name, jail/option), whatever language the message names it in. It
// wraps jail.ErrBadSpec.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// refuse is the FieldError of row's field, its message built from format
// and args; bad input.
func refuse(row option.Row, format string, args ...any) *FieldError {
	return &FieldError{Field: row.RowNames().Request, Err: fmt.Errorf("%w: "+format, append([]any{jail.ErrBadSpec}, args...)...)}
}

// wrapField makes err (bad input found by another package, already
// naming the value) the FieldError of row's field.
func wrapField(row option.Row, err error) *FieldError {
	if !errors.Is(err, jail.ErrBadSpec) {
		err = fmt.Errorf("%w: %w", jail.ErrBadSpec, err)
	}
	return &FieldError{Field: row.RowNames().Request, Err: err}
}
