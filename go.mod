module github.com/scidex/scidex-jail

go 1.26.8

require (
	github.com/alecthomas/kong v1.17.0 // indirect
	github.com/landlock-lsm/go-landlock v0.11.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/seccomp/libseccomp-golang v0.11.1 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.77 // indirect
)
