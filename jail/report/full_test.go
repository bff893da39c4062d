package report

import (
	"reflect"
	"strings"
	"time"

	"github.com/scidex/scidex-jail/jail/limits"
)

// A fill says how much of a value full sets.
type fill int

const (
	every      fill = iota // every field: strings "x", integers 1, floats 1.5, booleans true
	containers             // the scalars zero (what omitempty leaves out), every pointer, slice and map filled
	bare                   // as containers, and every omitempty field zero too
)

// full is a value of type t filled as f says: each pointer set to a
// filled value, each slice and map one filled element. Written as JSON,
// full(t, every) holds every field a value of t can ever write, which is
// what the schema is held to; containers and bare find the properties
// the schema requires that t leaves out when empty (a scalar, or a list
// or object).
func full(t reflect.Type, f fill) reflect.Value {
	v := reflect.New(t).Elem()
	f.set(v)
	return v
}

var (
	timeType   = reflect.TypeFor[time.Time]()
	limitsType = reflect.TypeFor[LimitsReport]()
)

func (f fill) set(v reflect.Value) {
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(time.Date(2026, 11, 28, 7, 30, 0, 123456789, time.UTC)))
		return
	case v.Type() == limitsType:
		// Its fields are the rows' (its MarshalJSON): give each row a
		// value, and name one limit switched off and one not enforced.
		r := LimitsReport{Profile: "x", NotEnforced: []string{"x"}, none: []string{"x"}}
		if f == every {
			for _, l := range limits.All {
				a := limits.Int(int64(1))
				switch l.Kind {
				case limits.CPUs:
					a = limits.Float(1.5)
				case limits.Duration:
					a = limits.Int(int64(1500 * time.Millisecond))
				}
				r.Values.Set(l, a)
			}
		}
		v.Set(reflect.ValueOf(r))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if sf.IsExported() && !(f == bare && strings.Contains(sf.Tag.Get("json"), ",omitempty")) {
				f.set(v.Field(i))
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.set(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		f.set(v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k := reflect.New(v.Type().Key()).Elem()
		k.SetString("x")
		e := reflect.New(v.Type().Elem()).Elem()
		f.set(e)
		v.SetMapIndex(k, e)
	case reflect.String:
		if f == every {
			v.SetString("x")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if f == every {
			v.SetInt(1)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if f == every {
			v.SetUint(1)
		}
	case reflect.Float32, reflect.Float64:
		if f == every {
			v.SetFloat(1.5)
		}
	case reflect.Bool:
		v.SetBool(f == every)
	}
}
