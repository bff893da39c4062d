package seccomp

import _ "embed" // the programs, each as a string

// The programs internal/gen writes into bpf/, by file name, and its
// generated.txt. TestProgramsEmbedded holds this list to the directory: a
// program generated and not listed here fails it.
var programs = map[string]string{
	"default_host_amd64.bpf":     defaultHostAmd64,
	"default_host_arm64.bpf":     defaultHostArm64,
	"default_loopback_amd64.bpf": defaultLoopbackAmd64,
	"default_loopback_arm64.bpf": defaultLoopbackArm64,
	"default_none_amd64.bpf":     defaultNoneAmd64,
	"default_none_arm64.bpf":     defaultNoneArm64,
}

var (
	//go:embed bpf/default_host_amd64.bpf
	defaultHostAmd64 string
	//go:embed bpf/default_host_arm64.bpf
	defaultHostArm64 string
	//go:embed bpf/default_loopback_amd64.bpf
	defaultLoopbackAmd64 string
	//go:embed bpf/default_loopback_arm64.bpf
	defaultLoopbackArm64 string
	//go:embed bpf/default_none_amd64.bpf
	defaultNoneAmd64 string
	//go:embed bpf/default_none_arm64.bpf
	defaultNoneArm64 string
	//go:embed bpf/generated.txt
	generatedTxt string
)
