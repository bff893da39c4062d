// Package request is one run as its caller asks for it, whoever the
// caller is: `scidex-jail run` decodes its command line into a Request,
// `scidex-jail serve` decodes one from a request line's "run" object
// (protocol 2, docs/serve.md), and the Python client builds one from its
// checked arguments. Resolve turns it into the run's jail.Spec: the
// profile's values, the request's over them, relative paths taken from
// the request's directory. The rule of that step lives here once, for all
// three.
//
// A value Resolve cannot use is a *FieldError naming the field as the
// request names it (read_only, limits.memory), so that a server can tell
// its client which field to fix and the client can name its own argument
// for it; the message names it in the words of where the user wrote it
// (a Namer: the command line gives its flags).
//
// Usage (the package's Example, compiled and run with its tests):
//
//	r := request.Request{ID: "a42", Command: []string{"python3", "a.py"}, Cwd: "/srv/work",
//		Profile: "notebook", Limits: map[string]string{"memory": "lots"}}
//	spec, err := r.Resolve(option.RequestField) // messages name the request's fields
//	var fe *request.FieldError
//	if errors.As(err, &fe) {
//		fmt.Println("fix", fe.Field) // fix limits.memory
//		return
//	}
//	_ = spec // the run's: supervise.Run(spec, nil)
package request
