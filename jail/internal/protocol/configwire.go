package protocol

import (
	"math"

	"github.com/scidex/scidex-jail/internal/wrap"
)

// The config on the wire: one JSON object of the fields of Config, named
// and omitted as its json tags say, landlock.Policy and seccomp.Policy by
// their Go field names (they have no tags). EncodeConfig writes it and
// DecodeConfig reads it field by field, here, so that neither the
// supervisor nor the init reflects on the types, and landlock and seccomp
// know nothing of the wire. TestConfigMatchesEncodingJSON holds both to
// encoding/json's reading of the tags.

// EncodeConfig is c as one line of JSON, newline included.
func EncodeConfig(c *Config) []byte {
	w := writer{b: make([]byte, 0, 8<<10)}
	w.open()
	w.strs("command", c.Command)
	w.strs("env", c.Env)
	w.str("run_dir", c.RunDir)
	w.str("hostname", c.Hostname)
	w.int("uid", int64(c.UID))
	w.int("gid", int64(c.GID))
	w.key("mounts")
	w.open()
	c.Mounts.encode(&w)
	w.close()
	w.bool("loopback", c.Loopback)
	w.bool("setgroups", c.Setgroups)
	if c.Stdio {
		w.bool("stdio", c.Stdio)
	}
	if len(c.Groups) > 0 {
		w.key("groups")
		w.b = appendInts(w.b, c.Groups)
	}
	w.key("security")
	w.open()
	c.Security.encode(&w)
	w.close()
	if c.CPUs != 0 {
		w.int("cpus", int64(c.CPUs))
	}
	if c.Sockets != nil {
		w.key("sockets")
		w.open()
		c.Sockets.encode(&w)
		w.close()
	}
	if c.View {
		w.bool("view", c.View)
	}
	if c.ViewSum != "" {
		w.str("view_sum", c.ViewSum)
	}
	w.close()
	return w.line()
}

// DecodeConfig reads the config of one line (a trailing newline allowed),
// refusing a field Config does not have, a value of the wrong type and
// anything after the object, naming it.
func DecodeConfig(line []byte) (*Config, error) {
	if len(line) > MaxConfigBytes {
		return nil, errTooLong("config", len(line), MaxConfigBytes)
	}
	c := &Config{}
	r := reader{b: line}
	err := r.object("the config", func(key string) error { return c.field(&r, key) })
	if err == nil {
		err = r.end()
	}
	if err != nil {
		return nil, wrap.Error("config", err)
	}
	return c, nil
}

func (c *Config) field(r *reader, key string) (err error) {
	into := `"` + key + `"`
	switch key {
	case "command":
		c.Command, err = r.strings(into)
	case "env":
		c.Env, err = r.strings(into)
	case "run_dir":
		c.RunDir, err = r.string(into)
	case "hostname":
		c.Hostname, err = r.string(into)
	case "uid":
		c.UID, err = r.int(into)
	case "gid":
		c.GID, err = r.int(into)
	case "mounts":
		err = r.object(into, func(key string) error { return c.Mounts.field(r, key) })
	case "loopback":
		c.Loopback, err = r.boolean(into)
	case "setgroups":
		c.Setgroups, err = r.boolean(into)
	case "stdio":
		c.Stdio, err = r.boolean(into)
	case "groups":
		c.Groups, err = readInts(r, into)
		c.Groups = nilIfEmpty(c.Groups)
	case "security":
		err = r.object(into, func(key string) error { return c.Security.field(r, key) })
	case "cpus":
		c.CPUs, err = r.int(into)
	case "sockets":
		if r.null() {
			return nil
		}
		c.Sockets = &Sockets{}
		err = r.object(into, func(key string) error { return c.Sockets.field(r, key) })
	case "view":
		c.View, err = r.boolean(into)
	case "view_sum":
		c.ViewSum, err = r.string(into)
	default:
		err = unknownField(key)
	}
	return err
}

func (m *Mounts) encode(w *writer) {
	n := len(m.System)
	if m.System == nil {
		n = -1
	}
	w.objects("system", n, func(i int) {
		w.str("path", m.System[i].Path)
		if m.System[i].Symlink != "" {
			w.str("symlink", m.System[i].Symlink)
		}
	})
	w.strs("read_only", m.ReadOnly)
	w.strs("read_write", m.ReadWrite)
	if len(m.Links) > 0 {
		w.objects("links", len(m.Links), func(i int) {
			w.str("name", m.Links[i].Name)
			w.str("target", m.Links[i].Target)
		})
	}
	if len(m.Files) > 0 {
		w.objects("files", len(m.Files), func(i int) {
			w.str("path", m.Files[i].Path)
			w.str("content", m.Files[i].Content)
		})
	}
	w.str("run_dir", m.RunDir)
	w.int("run_dir_bytes", m.RunDirBytes)
	w.int("shm_bytes", m.ShmBytes)
	w.str("scratch", m.Scratch)
	w.str("scratch_tmp", m.ScratchTmp)
	w.int("scratch_bytes", m.ScratchBytes)
	w.bool("keep_scratch", m.KeepScratch)
	if m.Names {
		w.bool("names", true)
	}
	if m.Meminfo != "" {
		w.str("meminfo", m.Meminfo)
	}
	if m.Cgroup != nil {
		w.key("cgroup")
		w.open()
		w.int("version", int64(m.Cgroup.Version))
		if len(m.Cgroup.Controllers) > 0 {
			w.strs("controllers", m.Cgroup.Controllers)
		}
		w.close()
	}
}

func (m *Mounts) field(r *reader, key string) (err error) {
	into := `"` + key + `"`
	switch key {
	case "system":
		m.System, err = readSystem(r)
	case "read_only":
		m.ReadOnly, err = r.strings(into)
	case "read_write":
		m.ReadWrite, err = r.strings(into)
	case "links":
		m.Links, err = readLinks(r)
	case "files":
		m.Files, err = readFiles(r)
	case "run_dir":
		m.RunDir, err = r.string(into)
	case "run_dir_bytes":
		m.RunDirBytes, err = r.integer(into, math.MinInt64, math.MaxInt64)
	case "shm_bytes":
		m.ShmBytes, err = r.integer(into, math.MinInt64, math.MaxInt64)
	case "scratch":
		m.Scratch, err = r.string(into)
	case "scratch_tmp":
		m.ScratchTmp, err = r.string(into)
	case "scratch_bytes":
		m.ScratchBytes, err = r.integer(into, math.MinInt64, math.MaxInt64)
	case "keep_scratch":
		m.KeepScratch, err = r.boolean(into)
	case "names":
		m.Names, err = r.boolean(into)
	case "meminfo":
		m.Meminfo, err = r.string(into)
	case "cgroup":
		m.Cgroup, err = readCgroupView(r)
	default:
		err = unknownField(key)
	}
	return err
}

func readSystem(r *reader) ([]SystemEntry, error) {
	if r.null() {
		return nil, nil
	}
	out := []SystemEntry{}
	err := r.list(`"system"`, func() error {
		var e SystemEntry
		err := r.object("a system entry", func(key string) (err error) {
			switch key {
			case "path":
				e.Path, err = r.string(`"path"`)
			case "symlink":
				e.Symlink, err = r.string(`"symlink"`)
			default:
				err = unknownField(key)
			}
			return err
		})
		out = append(out, e)
		return err
	})
	return out, err
}

func readFiles(r *reader) ([]File, error) {
	if r.null() {
		return nil, nil
	}
	var out []File // omitempty: none is nil
	err := r.list(`"files"`, func() error {
		var f File
		err := r.object("a file", func(key string) (err error) {
			switch key {
			case "path":
				f.Path, err = r.string(`"path"`)
			case "content":
				f.Content, err = r.string(`"content"`)
			default:
				err = unknownField(key)
			}
			return err
		})
		out = append(out, f)
		return err
	})
	return out, err
}

func readLinks(r *reader) ([]Link, error) {
	if r.null() {
		return nil, nil
	}
	var out []Link // omitempty: none is nil
	err := r.list(`"links"`, func() error {
		var l Link
		err := r.object("a link", func(key string) (err error) {
			switch key {
			case "name":
				l.Name, err = r.string(`"name"`)
			case "target":
				l.Target, err = r.string(`"target"`)
			default:
				err = unknownField(key)
			}
			return err
		})
		out = append(out, l)
		return err
	})
	return out, err
}

func readCgroupView(r *reader) (*CgroupView, error) {
	if r.null() {
		return nil, nil
	}
	v := &CgroupView{}
	err := r.object(`"cgroup"`, func(key string) (err error) {
		switch key {
		case "version":
			v.Version, err = r.int(`"version"`)
		case "controllers":
			v.Controllers, err = r.strings(`"controllers"`)
			v.Controllers = nilIfEmpty(v.Controllers)
		default:
			err = unknownField(key)
		}
		return err
	})
	return v, err
}
