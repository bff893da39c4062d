package protocol

import "math"

// The init's messages on the wire, field by field: each type's encode
// writes the fields after the kind, in the order and with the names of its
// json tags (omitempty as they say), and its field reads one of them.
// TestInitMsgMatchesEncodingJSON holds both to encoding/json's reading of
// the tags.

func (m *Hello) encode(w *writer) { w.str("version", m.Version) }

func (m *Ready) encode(w *writer) { writePhases(w, m.Phases) }

func (m *Ready) field(r *reader, key string) (err error) {
	if key == "phases" {
		m.Phases, err = readPhases(r)
		return err
	}
	return unknownField(key)
}

func (m *Hello) field(r *reader, key string) (err error) {
	if key == "version" {
		m.Version, err = r.string(`"version"`)
		return err
	}
	return r.skip(0) // a field of another version's hello
}

func (m *SetupFailed) encode(w *writer) {
	w.str("stage", string(m.Stage))
	w.str("error", m.Error)
	w.int("exit_code", int64(m.ExitCode))
	writePhases(w, m.Phases)
}

func (m *SetupFailed) field(r *reader, key string) (err error) {
	switch key {
	case "stage":
		var s string
		s, err = r.string(`"stage"`)
		m.Stage = Stage(s)
	case "error":
		m.Error, err = r.string(`"error"`)
	case "exit_code":
		m.ExitCode, err = r.int(`"exit_code"`)
	case "phases":
		m.Phases, err = readPhases(r)
	default:
		err = unknownField(key)
	}
	return err
}

func (m *Started) encode(w *writer) {
	w.int("pid", int64(m.Pid))
	w.int("us", m.Micros)
	writePhases(w, m.Phases)
	if l := m.Landlock; l != nil {
		w.key("landlock")
		w.open()
		w.int("abi", int64(l.ABI))
		if len(l.Degraded) > 0 {
			w.strs("degraded", l.Degraded)
		}
		w.close()
	}
	if m.CPUs != "" {
		w.str("cpus", m.CPUs)
	}
}

func (m *Started) field(r *reader, key string) (err error) {
	switch key {
	case "pid":
		m.Pid, err = r.int(`"pid"`)
	case "us":
		m.Micros, err = r.integer(`"us"`, math.MinInt64, math.MaxInt64)
	case "phases":
		m.Phases, err = readPhases(r)
	case "landlock":
		m.Landlock, err = readLandlockFound(r)
	case "cpus":
		m.CPUs, err = r.string(`"cpus"`)
	default:
		err = unknownField(key)
	}
	return err
}

func readLandlockFound(r *reader) (*LandlockFound, error) {
	if r.null() {
		return nil, nil
	}
	l := &LandlockFound{}
	return l, r.object(`"landlock"`, func(key string) (err error) {
		switch key {
		case "abi":
			l.ABI, err = r.int(`"abi"`)
		case "degraded":
			l.Degraded, err = r.strings(`"degraded"`)
		default:
			err = unknownField(key)
		}
		return err
	})
}

func (m *Exited) encode(w *writer) {
	if m.Exited {
		w.bool("exited", true)
	}
	w.int("exit_code", int64(m.ExitCode))
	for _, f := range []struct {
		key string
		v   int64
	}{{"signal", int64(m.Signal)}, {"user_us", m.UserUsec}, {"sys_us", m.SysUsec}, {"maxrss_kb", m.MaxRSSKB}, {"wall_us", m.WallUsec}} {
		if f.v != 0 {
			w.int(f.key, f.v)
		}
	}
}

func (m *Exited) field(r *reader, key string) (err error) {
	into := `"` + key + `"`
	switch key {
	case "exited":
		m.Exited, err = r.boolean(into)
	case "exit_code":
		m.ExitCode, err = r.int(into)
	case "signal":
		m.Signal, err = r.int(into)
	case "user_us":
		m.UserUsec, err = r.integer(into, math.MinInt64, math.MaxInt64)
	case "sys_us":
		m.SysUsec, err = r.integer(into, math.MinInt64, math.MaxInt64)
	case "maxrss_kb":
		m.MaxRSSKB, err = r.integer(into, math.MinInt64, math.MaxInt64)
	case "wall_us":
		m.WallUsec, err = r.integer(into, math.MinInt64, math.MaxInt64)
	default:
		err = unknownField(key)
	}
	return err
}

// writePhases writes the phases, none when there are none (omitempty).
func writePhases(w *writer, ps []Phase) {
	if len(ps) == 0 {
		return
	}
	w.objects("phases", len(ps), func(i int) {
		w.str("name", ps[i].Name)
		w.int("us", ps[i].Micros)
	})
}

// readPhases reads a list of phases, nil for null.
func readPhases(r *reader) ([]Phase, error) {
	if r.null() {
		return nil, nil
	}
	ps := []Phase{}
	err := r.list(`"phases"`, func() error {
		var p Phase
		err := r.object("a phase", func(key string) (err error) {
			switch key {
			case "name":
				p.Name, err = r.string(`"name"`)
			case "us":
				p.Micros, err = r.integer(`"us"`, math.MinInt64, math.MaxInt64)
			default:
				err = unknownField(key)
			}
			return err
		})
		ps = append(ps, p)
		return err
	})
	return ps, err
}
