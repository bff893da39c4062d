package report

import (
	"reflect"
	"time"

	"github.com/scidex/scidex-jail/jail/limits"
)

// full is a value of type t with every field set: each pointer to a full
// value, each slice and map one full element, strings "x", integers 1,
// floats 1.5, booleans true; with scalars false, the scalars stay zero
// (what omitempty leaves out) and only the containers are filled. Written
// as JSON, it holds every field a value of t can ever write, which is
// what the schema is held to.
func full(t reflect.Type, scalars bool) reflect.Value {
	v := reflect.New(t).Elem()
	fill(v, scalars)
	return v
}

var (
	timeType   = reflect.TypeFor[time.Time]()
	limitsType = reflect.TypeFor[LimitsReport]()
)

func fill(v reflect.Value, scalars bool) {
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(time.Date(2026, 11, 28, 7, 30, 0, 123456789, time.UTC)))
		return
	case v.Type() == limitsType:
		// Its fields are the rows' (its MarshalJSON): give each row a
		// value, and name one limit switched off and one not enforced.
		r := LimitsReport{Profile: "x", NotEnforced: []string{"x"}, none: []string{"x"}}
		if scalars {
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
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), scalars)
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), scalars)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), scalars)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k := reflect.New(v.Type().Key()).Elem()
		k.SetString("x")
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, scalars)
		v.SetMapIndex(k, e)
	case reflect.String:
		if scalars {
			v.SetString("x")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if scalars {
			v.SetInt(1)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if scalars {
			v.SetUint(1)
		}
	case reflect.Float32, reflect.Float64:
		if scalars {
			v.SetFloat(1.5)
		}
	case reflect.Bool:
		v.SetBool(scalars)
	}
}
