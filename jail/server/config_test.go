package server

import (
	"reflect"
	"testing"
)

// TestConfigCallsNothingBack: a served run's path, request to reply,
// calls only downward. The server is given values (the slot templates
// are requests it resolves itself), never a function of its caller's that
// would do part of its work, as a Parse callback into the command line
// once turned requests into specs: the only functions in its settings are
// log sinks.
func TestConfigCallsNothingBack(t *testing.T) {
	sink := reflect.TypeFor[func(string)]()
	for _, typ := range []reflect.Type{reflect.TypeFor[Config](), reflect.TypeFor[PoolConfig]()} {
		for _, f := range reflect.VisibleFields(typ) {
			if f.Type.Kind() == reflect.Func && f.Type != sink {
				t.Errorf("%s.%s is a %s: give the server a value, or a log sink (func(string))", typ.Name(), f.Name, f.Type)
			}
		}
	}
}
