#!/usr/bin/env bash
# compare.sh BIN: scidex-jail's startup side by side with a bare exec,
# unshare(1) and bubblewrap, on this machine in one sitting.
#
# For /usr/bin/true (300 runs) and /usr/bin/python3 -c pass (50 runs), one
# hyperfine invocation per workload times, with warmup and without a shell:
#   bare        the command itself
#   unshare     unshare --user --map-root-user --mount --pid --fork --net
#               --ipc --uts --cgroup
#   bwrap       bwrap --unshare-all, read-only /usr and the merged-/usr links,
#               fresh /proc, /dev, tmpfs /tmp (the reference: ratios are to it)
#   jail        scidex-jail run, every layer on
#   jail -L     the same with --unsafe-disable L (landlock, seccomp, cgroup);
#               the same with --net loopback and --net host
# and prints a table of medians, overhead over bare, and ratios to bwrap.
#
# Env: PIN=1 runs everything on CPU 0 (taskset -c 0), for steadier figures.
#      OUT=DIR keeps hyperfine's JSON exports and the table in DIR.
#      RUNS_TRUE, RUNS_PY override the run counts.
# Needs root (the jail maps the analysis to a host uid of its own), bubblewrap, hyperfine
# and python3; installs the first two with apt-get if missing.
set -euo pipefail

usage() { echo "usage: [PIN=1] [OUT=DIR] $0 path/to/scidex-jail" >&2; exit 2; }
(($# == 1)) || usage
[[ -x $1 ]] || { echo "compare.sh: $1 is not an executable; build it with make build" >&2; exit 2; }
((EUID == 0)) || { echo "compare.sh: run as root: the jail runs the analysis as an unprivileged uid only when started as root" >&2; exit 2; }

RUNS_TRUE=${RUNS_TRUE:-300}
RUNS_PY=${RUNS_PY:-50}
PY=/usr/bin/python3

missing=()
command -v bwrap >/dev/null || missing+=(bubblewrap)
command -v hyperfine >/dev/null || missing+=(hyperfine)
if ((${#missing[@]})); then
	echo "compare.sh: installing ${missing[*]}" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
[[ -x $PY ]] || { echo "compare.sh: $PY not found (apt-get install python3)" >&2; exit 2; }

work=$(mktemp -d /tmp/scidex-compare.XXXXXX)
trap 'rm -rf "$work"' EXIT
# 0755 throughout: the jail execs its init (beside it) as the analysis'
# uid, which must reach it, and the run directories go into tmproot.
chmod 0755 "$work"
jail=$work/scidex-jail
install -m 0755 "$1" "$jail"
install -m 0755 "$(dirname "$1")/scidex-jail-init" "$work/scidex-jail-init"
tmproot=$work/tmp
mkdir -m 0755 "$tmproot"

# bwrap's view: the merged-/usr links as links, real directories bound.
bwrap_args=(--unshare-all --die-with-parent --ro-bind /usr /usr)
for l in /bin /sbin /lib /lib32 /lib64 /libx32; do
	if [[ -L $l ]]; then
		bwrap_args+=(--symlink "$(readlink "$l")" "$l")
	elif [[ -d $l ]]; then
		bwrap_args+=(--ro-bind "$l" "$l")
	fi
done
bwrap_args+=(--proc /proc --dev /dev --tmpfs /tmp --)

variants=("jail|")
for l in landlock seccomp cgroup; do
	variants+=("jail -$l|--unsafe-disable $l")
done
variants+=("jail -all layers|--unsafe-disable landlock --unsafe-disable seccomp --unsafe-disable cgroup")
variants+=("jail --net loopback|--net loopback" "jail --net host|--net host")

pin=()
[[ ${PIN:-0} == 1 ]] && pin=(taskset -c 0)

# bench WORKLOAD RUNS WARMUP CMD...: one hyperfine run of every variant.
bench() {
	local workload=$1 runs=$2 warmup=$3
	shift 3
	local target="$*"
	local -a args=(-N --style basic --warmup "$warmup" --runs "$runs" --export-json "$work/$workload.json")
	args+=(-n bare "$target")
	args+=(-n unshare "unshare --user --map-root-user --mount --pid --fork --net --ipc --uts --cgroup $target")
	args+=(-n bwrap "bwrap ${bwrap_args[*]} $target")
	local v name flags cmd
	for v in "${variants[@]}"; do
		name=${v%%|*} flags=${v#*|}
		cmd="$jail run --id bench-$workload --tmp-root $tmproot $flags -- $target"
		# hyperfine would only say "non-zero exit code": run once first to
		# show the jail's own message.
		if ! out=$($cmd 2>&1 </dev/null); then
			echo "compare.sh: '$name' fails on its own: $cmd" >&2
			echo "$out" >&2
			exit 1
		fi
		args+=(-n "$name" "$cmd")
	done
	echo "== $workload: $target ($runs runs each)" >&2
	"${pin[@]}" hyperfine "${args[@]}" >&2
}

bench true "$RUNS_TRUE" 20 /usr/bin/true
bench python "$RUNS_PY" 5 "$PY" -c pass

table=$("$PY" - "$work/true.json" "$work/python.json" <<'EOF'
import json, sys

print("| workload | command | median ms | overhead ms | x bwrap | overhead x bwrap |")
print("|---|---|---:|---:|---:|---:|")
for path in sys.argv[1:]:
    workload = path.rsplit("/", 1)[1].removesuffix(".json")
    res = {r["command"]: r for r in json.load(open(path))["results"]}
    bare, bw = res["bare"]["median"], res["bwrap"]["median"]
    for name, r in res.items():
        med = r["median"]
        over = med - bare
        bw_over = bw - bare
        x_over = f"{over / bw_over:.2f}" if name != "bare" and bw_over > 0 else ""
        print(f"| {workload} | {name} | {med * 1e3:.2f} | {over * 1e3:.2f} | {med / bw:.2f} | {x_over} |")
EOF
)
pinned=""
[[ ${PIN:-0} == 1 ]] && pinned=", pinned to CPU 0"
echo
echo "scidex-jail startup: medians of hyperfine runs ($(nproc) CPUs, kernel $(uname -r)$pinned); overhead = median - bare"
echo
echo "$table"

if [[ -n ${OUT:-} ]]; then
	mkdir -p "$OUT"
	cp "$work/true.json" "$work/python.json" "$OUT/"
	echo "$table" >"$OUT/table.md"
	echo "compare.sh: JSON and table in $OUT" >&2
fi
