package seccomp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestProgramsEmbedded: every program in bpf/ is embedded, with its bytes,
// and nothing else is.
func TestProgramsEmbedded(t *testing.T) {
	files, err := filepath.Glob("bpf/*.bpf")
	if err != nil || len(files) == 0 {
		t.Fatalf("glob bpf/*.bpf = %v, %v", files, err)
	}
	var names []string
	for _, f := range files {
		name := filepath.Base(f)
		names = append(names, name)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := programs[name]; !ok || got != string(b) {
			t.Errorf("programs[%q]: listed %v, same bytes %v; want it listed in programs.go with its file's bytes", name, ok, got == string(b))
		}
	}
	for name := range programs {
		if !slices.Contains(names, name) {
			t.Errorf("programs.go lists %s, which bpf/ does not hold", name)
		}
	}
	txt, err := os.ReadFile("bpf/generated.txt")
	if err != nil || string(txt) != generatedTxt || !strings.Contains(generatedTxt, "sha256=") {
		t.Errorf("generatedTxt is not bpf/generated.txt (%v)", err)
	}
}
