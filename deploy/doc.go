// Package deploy holds the end-to-end tests of the ways scidex-jail is
// deployed, run as root on this machine by `go test ./deploy/`: the Debian
// package (built with packaging/deb/build.sh, installed with dpkg -i, used,
// removed and purged; on a host that has the package, in a mount namespace
// of throw-away overlays) and a one-node Slurm cluster (Debian's slurm-wlm:
// munged, slurmctld and slurmd started by the test with their own
// configuration, state and logs under a temporary directory) running a job
// array of analyses through examples/slurm/scidex-analyses.sbatch. The
// systemd delegation and nested-container tests need cgroup v2 and run in
// the VM harness (cmd/vmtest, .ci/vmtests), as do those of real accounts
// (made with useradd, in supplementary groups, deleted afterwards; entered
// with setpriv --init-groups as systemd's User= does, and with su) and the
// service tests, where the machine's systemd boots as a container's init in
// the VM and runs the package's example units as such an account: the
// runner's, calling the Python API, and the resident server's (scidex-jail
// serve on a socket), sent a run request as the account; they change
// /etc/passwd and install the package, so they run only there, in the VM's
// throw-away overlay.
package deploy
