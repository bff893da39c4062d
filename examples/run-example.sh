#!/usr/bin/env bash
# Runs examples/analysis.py under the jail, the way a platform would, then
# prints a short summary of the report and the collected results. `make
# example` runs it after `make build`:
#
#     examples/run-example.sh [--json] [--report FILE] bin/scidex-jail
#
# The report is kept at bin/example-report.json (or --report FILE) and the
# collected outputs in bin/example-outputs/ (both replaced on each run);
# --json prints the whole JSON report instead of the summary.
#
# The exit status is the jail's (the analysis's own, 125 if the jail could
# not start it). Run it as root to get the full isolation (the analysis then
# runs as a host uid of its own, leased per run); as another user the jail
# needs unprivileged user namespaces.
set -euo pipefail

json=false
report=
while [[ $# -gt 1 ]]; do
	case $1 in
	--json) json=true ;;
	--report)
		report=$(realpath -m -- "$2")
		shift
		;;
	*) break ;;
	esac
	shift
done
if [[ $# -ne 1 ]]; then
	echo "usage: $0 [--json] [--report FILE] PATH/TO/scidex-jail" >&2
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

mkdir -p bin
out=$PWD/bin/example-outputs
rm -rf -- "$out"
if [[ -z $report ]]; then
	report=$PWD/bin/example-report.json
fi
rm -f -- "$report"

set +e
"$bin" run --id "example-$$" \
	--root "$examples/platform" \
	--ro "$examples" \
	--report "$report" \
	--collect "$out" \
	-- /usr/bin/python3 "$examples/analysis.py"
status=$?
set -e

echo
if [[ ! -f $report ]]; then
	echo "(no report written)"
	exit "$status"
fi
if $json; then
	/usr/bin/python3 -m json.tool "$report"
else
	/usr/bin/python3 "$examples/summarize.py" "$report"
	echo "report      $report (the whole JSON; or run with --json)"
fi
if [[ -f $out/results.csv ]]; then
	echo
	echo "== results.csv (collected from the run directory)"
	cat "$out/results.csv"
fi
exit "$status"
