package wrap_test

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/scidex/scidex-jail/internal/wrap"
)

func Example() {
	err := wrap.Error("mount /usr", fs.ErrPermission)
	fmt.Println(err)
	fmt.Println(wrap.Around("open x: ", fs.ErrNotExist, ": chmod"))
	fmt.Println(errors.Is(err, fs.ErrPermission)) // as through %w
	// Output:
	// mount /usr: permission denied
	// open x: file does not exist: chmod
	// true
}
