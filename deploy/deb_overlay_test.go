package deploy

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// A host that has the package, installed or removed without purging (a
// platform's own host, where make test runs too), keeps it: TestDebianPackage
// then runs again in a private mount namespace where /usr, /etc, /var and
// /run are overlays with throw-away upper layers, purges the host's package
// there and goes on from a machine without it, as on a clean one. Nothing it
// installs or purges reaches the host's files.

// debOverlayEnv marks the test process re-executed in that namespace.
const debOverlayEnv = "SCIDEX_DEB_OVERLAY"

// debOverlayScript builds the namespace's view and execs the test: $1 is a
// directory for the upper layers, the rest the command. The uid leases'
// directory stays the host's own (bound back over the overlay): a run of
// the installed jail leases its uid among the host's jails, never one a
// jail outside is using.
const debOverlayScript = `set -eu
up=$1; shift
mount -t tmpfs -o mode=0755 scidex-deb-overlay "$up"
mkdir -p -m 0700 /run/scidex-jail-uids
mkdir "$up/uids"
mount --bind /run/scidex-jail-uids "$up/uids"
for d in usr etc var run; do
	mkdir -p "$up/$d/upper" "$up/$d/work"
	mount -t overlay overlay -o "lowerdir=/$d,upperdir=$up/$d/upper,workdir=$up/$d/work" "/$d"
done
mount --bind "$up/uids" /run/scidex-jail-uids
exec "$@"
`

// debInOverlay runs TestDebianPackage again in the overlay namespace and
// fails with its output when it fails there.
func debInOverlay(t *testing.T, known string) {
	t.Helper()
	t.Logf("scidex-jail is known to dpkg on this host (%s): the test runs in a private mount namespace whose /usr, /etc, /var and /run are throw-away overlays, and purges it there first", known)
	up := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "--",
		"/bin/sh", "-c", debOverlayScript, "sh", up, self, "-test.run", "^TestDebianPackage$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), debOverlayEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("TestDebianPackage in the overlay namespace: %v\n%s", err, out)
	}
	t.Logf("TestDebianPackage in the overlay namespace:\n%s", out)
}
