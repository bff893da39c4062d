#!/usr/bin/env bash
# vmpairs.sh RUNNER PAIRS: the startup pairs on cgroup v2, inside the vmtest
# QEMU VM (cmd/vmtest), where the jail starts its init straight into the
# leaf with CLONE_INTO_CGROUP:
#
#	bench/vmpairs.sh bin/scidex-vmtest 100     # make bench-vm, make bench-compare
#	bench/vmpairs.sh bin/scidex-vmtest 20      # .ci/vmtests: a short version
#
# It builds this package's test binary here and runs BenchmarkPairs in the
# VM (-test.bench 'Pairs/vm-', PAIRS interleaved pairs each): the full jail
# (default profile, --memory 256M --cpus 1 --pids 64 --report) against
# bwrap, and against nsproto (-cg v2) when $NSPROTO names a binary, on
# /usr/bin/true. It prints each side's median, the median ratio with the
# target beside it (never enforced), and the median of each phase of the
# jail's reports. It fails only when a run failed.
#
# Env: JAIL     the scidex-jail binary (default bin/scidex-jail)
#      NSPROTO  nsproto's binary (default bin/nsproto when it is there)
#      KERNEL   the VM's kernel: backports (Debian 6.12, the default), 6.1
# Needs root, qemu-system-x86 and bubblewrap (see .ci/deps).
set -euo pipefail

if (($# != 2)) || ! [[ $2 =~ ^[1-9][0-9]*$ ]]; then
	echo "usage: [JAIL=bin] [NSPROTO=bin] [KERNEL=backports|6.1] $0 RUNNER PAIRS   (e.g. bin/scidex-vmtest 100)" >&2
	exit 2
fi
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
runner=$(realpath "$1")
pairs=$2
jail=${JAIL:-bin/scidex-jail}
nsproto=${NSPROTO-}
if [[ -z $nsproto && -x bin/nsproto ]]; then
	nsproto=bin/nsproto
fi
[[ -x $jail && -x $(dirname "$jail")/scidex-jail-init ]] || { echo "vmpairs: $jail or the scidex-jail-init beside it is not an executable; make build" >&2; exit 2; }
start=$SECONDS

# The VM sees the host's / read-only, but a fresh /tmp but for the test
# binary's own directory: everything it runs goes there.
work=$(mktemp -d /tmp/scidex-vmpairs-XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
CGO_ENABLED=0 go test -c -o "$work/bench.test" ./bench
install -m 0755 "$jail" "$work/scidex-jail"
install -m 0755 "$(dirname "$jail")/scidex-jail-init" "$work/scidex-jail-init"
env=(-env "SCIDEX_JAIL_BIN=$work/scidex-jail")
if [[ -n $nsproto ]]; then
	install -m 0755 "$nsproto" "$work/nsproto"
	env+=(-env "SCIDEX_NSPROTO=$work/nsproto")
else
	echo "vmpairs: no nsproto (make nsproto builds it from ../shared/perf/nsproto when it is there): its pair is left out" >&2
fi

echo "vmpairs: $pairs interleaved pairs in the VM (kernel ${KERNEL:-backports})"
(cd bench && "$runner" -kernel "${KERNEL:-backports}" "${env[@]}" -- \
	"$work/bench.test" -test.run '^$' -test.bench 'Pairs/vm-' -test.benchtime "${pairs}x" -test.count=1)
echo "vmpairs: took $((SECONDS - start)) s"
