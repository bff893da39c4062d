package osthread

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRunEndsThread: f runs on a thread other than the main one, and the
// thread is gone once f has returned, however often Run is called (one of
// them may start on the main thread).
func TestRunEndsThread(t *testing.T) {
	for range 20 {
		tid := make(chan int)
		Run(func() { tid <- unix.Gettid() })
		id := <-tid
		if id == unix.Getpid() {
			t.Fatalf("f ran on the main thread %d, which cannot end", id)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", id)); errors.Is(err, fs.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("thread %d still there 5 s after f returned", id)
			}
			time.Sleep(time.Millisecond)
		}
	}
}
