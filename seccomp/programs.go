package seccomp

import _ "embed" // the programs, each as a string

// The programs internal/gen writes into bpf/, by file name, and its
// generated.txt. TestProgramsEmbedded holds this list to the directory: a
// program generated and not listed here fails it.
var programs = map[string]string{
	"default_inet_amd64.bpf": defaultInetAmd64,
	"default_inet_arm64.bpf": defaultInetArm64,
	"default_none_amd64.bpf": defaultNoneAmd64,
	"default_none_arm64.bpf": defaultNoneArm64,
}

var (
	//go:embed bpf/default_inet_amd64.bpf
	defaultInetAmd64 string
	//go:embed bpf/default_inet_arm64.bpf
	defaultInetArm64 string
	//go:embed bpf/default_none_amd64.bpf
	defaultNoneAmd64 string
	//go:embed bpf/default_none_arm64.bpf
	defaultNoneArm64 string
	//go:embed bpf/generated.txt
	generatedTxt string
)
