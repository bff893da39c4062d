package request_test

import (
	"errors"
	"fmt"

	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/request"
)

// A request a server decoded: its memory cannot be read, and the error
// says which field to fix.
func Example() {
	r := request.Request{ID: "a42", Command: []string{"python3", "a.py"}, Cwd: "/srv/work",
		Profile: "notebook", Limits: map[string]string{"memory": "lots"}}
	spec, err := r.Resolve(option.RequestField) // messages name the request's fields
	var fe *request.FieldError
	if errors.As(err, &fe) {
		fmt.Println("fix", fe.Field)
		return
	}
	_ = spec // the run's: supervise.Run(spec, nil)
	// Output: fix limits.memory
}
