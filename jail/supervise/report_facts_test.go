package supervise

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// TestReportFacts: every field of a facility's value reaches the report's
// field of the same name. Each exported field of the input gets a value of
// its own (1, 2, ... or "A", "B", ...): a field added to cgroupfs.Usage or
// runfiles.Output that the mapping drops, a report field it leaves zero,
// or two fields crossed, fails here.
func TestReportFacts(t *testing.T) {
	u := cgroupfs.Usage{}
	numbered(reflect.ValueOf(&u).Elem())
	o := runfiles.Output{}
	numbered(reflect.ValueOf(&o).Elem())
	for _, c := range []struct {
		name    string
		in, out any
	}{
		{"reportUsage", u, *reportUsage(&u)},
		{"reportOutputs", o, reportOutputs([]runfiles.Output{o})[0]},
	} {
		in, out := exported(reflect.ValueOf(c.in)), exported(reflect.ValueOf(c.out))
		if !reflect.DeepEqual(in, out) {
			t.Errorf("%s: the report's fields = %q, want the input's %q", c.name, out, in)
		}
	}
	// An entry's type is converted as it is: each of runfiles' names the
	// report's of the same kind.
	for _, c := range []struct {
		in   runfiles.OutputType
		want report.OutputType
	}{
		{runfiles.OutputFile, report.OutputFile}, {runfiles.OutputDir, report.OutputDir},
		{runfiles.OutputSymlink, report.OutputSymlink}, {runfiles.OutputOther, report.OutputOther},
	} {
		if got := reportOutputs([]runfiles.Output{{Type: c.in}})[0].Type; got != c.want {
			t.Errorf("reportOutputs(type %q).Type = %q, want %q", c.in, got, c.want)
		}
	}
	if got := reportUsage(nil); got != nil {
		t.Errorf("reportUsage(nil) = %+v, want nil", got)
	}
	if got := reportOutputs(nil); got == nil || len(got) != 0 {
		t.Errorf("reportOutputs(nil) = %#v, want [] (the report's outputs is a list)", got)
	}
}

// numbered gives each exported field of the struct v its index plus one.
func numbered(v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString(string(rune('A' + i)))
		case reflect.Int64, reflect.Int:
			f.SetInt(int64(i + 1))
		}
	}
}

// exported is the struct v's exported fields, by name, as text.
func exported(v reflect.Value) map[string]string {
	out := map[string]string{}
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.IsExported() {
			out[f.Name] = fmt.Sprint(v.Field(i).Interface())
		}
	}
	return out
}
