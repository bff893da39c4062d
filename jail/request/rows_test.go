package request

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/option"
)

// TestRequestFieldsAreRows: a request's fields are the rows' request
// names (jail/option, the limits' under limits), both ways: a row a
// request can give has its field here, and every field here is a row's,
// so that a FieldError's field is a row's request name, which the Python
// client maps to its keyword.
func TestRequestFieldsAreRows(t *testing.T) {
	var fields []string
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Request]()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		fields = append(fields, name)
	}
	var rows []string
	for _, o := range option.All {
		if o.Request != "" {
			rows = append(rows, o.Request)
		}
	}
	for _, l := range limits.All {
		if !strings.HasPrefix(l.RowNames().Request, "limits.") {
			t.Errorf("limit %s: request name %q, want limits.%s (a key of the request's limits)", l.Name, l.RowNames().Request, l.Name)
		}
	}
	rows = append(rows, "limits", "cwd") // the limits' object; the directory the request's paths are taken from
	for _, r := range rows {
		if !slices.Contains(fields, r) {
			t.Errorf("row %q can be given by a request, and request.Request has no field of that name", r)
		}
	}
	for _, f := range fields {
		if !slices.Contains(rows, f) {
			t.Errorf("request.Request's field %q is no row's request name (jail/option)", f)
		}
	}
}
