package protocol

import (
	"errors"
	"math"
	"strconv"

	"github.com/scidex/scidex-jail/landlock"
	"github.com/scidex/scidex-jail/seccomp"
)

// The config's Security on the wire: landlock.Policy and seccomp.Policy
// field by field, under their Go field names (what encoding/json wrote
// for types without tags). A field added to either Policy must be added
// here: TestConfigMatchesEncodingJSON fails until it is.

func (s *Security) encode(w *writer) {
	if p := s.Landlock; p != nil {
		w.key("landlock")
		w.open()
		w.strs("ReadExec", p.ReadExec)
		w.strs("ReadOnly", p.ReadOnly)
		w.strs("ReadWrite", p.ReadWrite)
		w.strs("Devices", p.Devices)
		w.bool("HandleTCP", p.HandleTCP)
		w.key("ConnectTCP")
		if p.ConnectTCP == nil {
			w.b = append(w.b, "null"...)
		} else {
			ports := make([]int, len(p.ConnectTCP))
			for i, port := range p.ConnectTCP {
				ports[i] = int(port)
			}
			w.b = appendInts(w.b, ports)
		}
		w.bool("Scope", p.Scope)
		w.bool("AllowDegraded", p.AllowDegraded)
		w.int("MinABI", int64(p.MinABI))
		w.close()
	}
	if p := s.Seccomp; p != nil {
		w.key("seccomp")
		w.open()
		w.str("Name", p.Name)
		w.str("Net", string(p.Net))
		w.str("Label", p.Label)
		w.close()
	}
}

func (s *Security) field(r *reader, key string) (err error) {
	switch key {
	case "landlock":
		s.Landlock = nil
		if !r.null() {
			s.Landlock = &landlock.Policy{}
			err = r.object(`"landlock"`, func(key string) error { return landlockField(r, s.Landlock, key) })
		}
	case "seccomp":
		s.Seccomp = nil
		if !r.null() {
			s.Seccomp = &seccomp.Policy{}
			err = r.object(`"seccomp"`, func(key string) error { return seccompField(r, s.Seccomp, key) })
		}
	default:
		err = unknownField(key)
	}
	return err
}

func landlockField(r *reader, p *landlock.Policy, key string) (err error) {
	into := `"` + key + `"`
	switch key {
	case "ReadExec":
		p.ReadExec, err = r.strings(into)
	case "ReadOnly":
		p.ReadOnly, err = r.strings(into)
	case "ReadWrite":
		p.ReadWrite, err = r.strings(into)
	case "Devices":
		p.Devices, err = r.strings(into)
	case "HandleTCP":
		p.HandleTCP, err = r.boolean(into)
	case "ConnectTCP":
		p.ConnectTCP = nil
		if !r.null() {
			p.ConnectTCP = []uint16{}
			err = r.list(into, func() error {
				port, err := r.integer(into, 0, math.MaxUint16)
				p.ConnectTCP = append(p.ConnectTCP, uint16(port))
				return err
			})
		}
	case "Scope":
		p.Scope, err = r.boolean(into)
	case "AllowDegraded":
		p.AllowDegraded, err = r.boolean(into)
	case "MinABI":
		p.MinABI, err = r.int(into)
	default:
		err = unknownField(key)
	}
	return err
}

func seccompField(r *reader, p *seccomp.Policy, key string) (err error) {
	switch key {
	case "Name":
		p.Name, err = r.string(`"Name"`)
	case "Net":
		var net string
		net, err = r.string(`"Net"`)
		p.Net = seccomp.Net(net)
	case "Label":
		p.Label, err = r.string(`"Label"`)
	default:
		err = unknownField(key)
	}
	return err
}

// appendInts appends a JSON array of integers.
func appendInts(b []byte, v []int) []byte {
	b = append(b, '[')
	for i, n := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, ']')
}

// readInts reads a list of integers, nil for null.
func readInts(r *reader, into string) ([]int, error) {
	if r.null() {
		return nil, nil
	}
	out := []int{}
	err := r.list(into, func() error {
		n, err := r.int(into)
		out = append(out, n)
		return err
	})
	return out, err
}

func errTooLong(what string, n, max int) error {
	return errors.New(what + " of " + strconv.Itoa(n) + " bytes, over the limit of " + strconv.Itoa(max))
}
