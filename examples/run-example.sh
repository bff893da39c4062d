#!/usr/bin/env bash
# Runs examples/analysis.py under the jail, the way a platform would, then
# prints the report and the collected outputs. `make example` runs it after
# `make build`:
#
#     examples/run-example.sh bin/scidex-jail
#
# The exit status is the jail's (the analysis's own, 125 if the jail could
# not start it). Run it as root to get the full isolation (the analysis then
# runs as host uid 65534); as another user the jail needs unprivileged user
# namespaces.
set -euo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: $0 PATH/TO/scidex-jail" >&2
	exit 2
fi
bin=$(realpath -- "$1")
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
examples=$PWD/examples

# The analysis runs as an unprivileged uid: every directory on the way to
# the script and the data must be searchable by others (a checkout under a
# 0700 home directory is not).
d=$examples/platform/data
while [[ $d != / ]]; do
	perm=$(stat -c %A -- "$d")
	if [[ ${perm:9:1} != [xt] ]]; then
		echo "$0: $d is not searchable by other users ($perm): the analysis cannot reach examples/; chmod o+x it or copy the repository elsewhere" >&2
		exit 2
	fi
	d=$(dirname -- "$d")
done

out=$(mktemp -d)
trap 'rm -rf -- "$out"' EXIT
chmod 0755 "$out"

set +e
"$bin" run --id "example-$$" \
	--root "$examples/platform" \
	--ro "$examples" \
	--report "$out/report.json" \
	--collect "$out/outputs" \
	-- /usr/bin/python3 "$examples/analysis.py"
status=$?
set -e

echo
echo "== report"
if [[ -f $out/report.json ]]; then
	python3 -m json.tool "$out/report.json"
else
	echo "(no report written)"
fi
echo
echo "== collected outputs (copied out of the run directory by --collect)"
if [[ -d $out/outputs ]]; then
	(cd "$out/outputs" && find . -path ./.cache -prune -o -type f -printf '%8s  %P\n' | sort -k2)
	if [[ -f $out/outputs/results.csv ]]; then
		echo
		echo "== results.csv"
		cat "$out/outputs/results.csv"
	fi
else
	echo "(none)"
fi
exit "$status"
