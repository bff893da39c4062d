// Package buildversion is the version both of the jail's programs are
// built with: the command line (cmd/scidex-jail) and its init
// (cmd/scidex-jail-init). The build stamps the same value into both with
//
//	-ldflags "-X github.com/scidex/scidex-jail/internal/buildversion.Version=..."
//
// (make build, packaging/deb). The init states it in its first message and
// the supervisor refuses an init whose version is not its own: the config
// they exchange has no compatibility rule across versions. Unstamped builds
// (go build, go test) are all "dev", and match each other.
package buildversion

// Version is the build's version; see the package comment.
var Version = "dev"
