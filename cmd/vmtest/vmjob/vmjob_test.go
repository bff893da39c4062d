package vmjob

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteParse(t *testing.T) {
	dir := t.TempDir()
	want := Job{Args: []string{"/bin/sh", "-c", "exit 7"}, Env: []string{"A=1"}, Dir: "/work", Hostname: "h", Keep: []string{"/tmp/x"}}
	if err := Write(dir, want); err != nil {
		t.Fatalf("Write() = %v, want nil", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, JobFile))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(b)
	if err != nil || fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("Parse(Write(%+v)) = %+v, %v; want the same job, nil", want, got, err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"not json", "{"},
		{"no args", `{"Dir": "/"}`},
		{"empty command", `{"Args": [""]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse([]byte(tt.in)); err == nil {
				t.Errorf("Parse(%q) error = nil, want an error", tt.in)
			}
		})
	}
}
