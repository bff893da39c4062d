package profile

import (
	"bytes"
	"sync"
)

// lastParsed is the last profiles file LoadProfiles parsed.
var lastParsed parsedFile

// parsedFile keeps the profiles of the last profiles file parsed, by its
// bytes. ParseProfiles of the built-ins and a file is a pure function of
// the file's bytes (the built-ins are this binary's, and the parse looks
// at nothing of the host), so the same bytes give the same profiles; the
// file itself is read at every call, so an edit is seen at the next
// (a server's next request). A server resolves every request's profile
// so, and the packaged file's parse took 0.6-0.9 ms of each.
type parsedFile struct {
	mu     sync.Mutex
	data   []byte
	ps     map[string]Profile // nil: none kept
	parsed int                // ParseProfiles' calls, for the tests
}

// parse is ParseProfiles(data, Builtins()), as kept: a map shared with
// the other callers' (LoadProfiles copies it for its caller; read it,
// never write it or its profiles' lists in place). A file that does not
// parse is not kept.
func (p *parsedFile) parse(data []byte) (map[string]Profile, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ps != nil && bytes.Equal(p.data, data) {
		return p.ps, nil
	}
	p.parsed++
	ps, err := ParseProfiles(data, Builtins())
	if err != nil {
		return nil, err
	}
	p.data, p.ps = bytes.Clone(data), ps
	return ps, nil
}
