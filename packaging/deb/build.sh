#!/usr/bin/env bash
# Builds the Debian package from a built binary, with dpkg-deb alone:
#
#	packaging/deb/build.sh BINARY VERSION OUTDIR
#
# writes OUTDIR/scidex-jail_VERSION_ARCH.deb and prints its path. `make
# deb` runs it. The init program, scidex-jail-init, is taken from beside
# BINARY (make build puts both into bin/). The binary is run here to write out what it knows: its
# built-in profiles (the conffile /etc/scidex-jail/profiles.json), its
# manual page and its bash completion, so none of them can disagree with
# it. Everything in the package, owned by root:
#
#	/usr/bin/scidex-jail                              the static binary
#	/usr/libexec/scidex-jail/scidex-jail-init         the init it execs per run (found from
#	                                                  /usr/bin as ../libexec/scidex-jail/)
#	/etc/scidex-jail/profiles.json                    conffile: the built-in profiles
#	/usr/share/man/man1/scidex-jail.1.gz              scidex-jail man
#	/usr/share/bash-completion/completions/scidex-jail
#	/usr/lib/systemd/system/scidex-jail.slice         the slice analyses' services run in
#	/usr/lib/tmpfiles.d/scidex-jail.conf              /run/scidex-jail, a tmp-root for services
#	/usr/libexec/scidex-jail/delegate                 lays out a delegated cgroup for a runner
#	/usr/share/scidex-jail/report.schema.json         the report's JSON Schema (scidex-jail schema)
#	/usr/lib/python3/dist-packages/scidex_jail/       the Python package for Debian's python3, as its
#	/usr/lib/python3/dist-packages/scidex_jail-*.dist-info  wheel lays it out (built by flit_core)
#	/usr/share/doc/scidex-jail/                       README, docs/, CHANGELOG, copyright, changelog, examples
#	                                                  (examples/systemd/: scidex-jail-runner.service and
#	                                                  scidex-jail-serve.service, installed by the administrator
#	                                                  with User= set, neither enabled by the package)
set -euo pipefail

if (($# != 3)); then
	echo "usage: $0 BINARY VERSION OUTDIR" >&2
	exit 2
fi
bin=$(realpath -- "$1")
init=$(dirname -- "$bin")/scidex-jail-init
version=$2
outdir=$3
cd "$(dirname "$0")/../.."
fail() {
	echo "deb: FAILED: $*" >&2
	exit 1
}
[[ $version =~ ^[0-9][A-Za-z0-9.+~-]*$ ]] || fail "version $version is not a Debian version (must start with a digit)"
arch=$(dpkg --print-architecture)
for b in "$bin" "$init"; do
	[[ -f $b ]] || fail "$b is missing: make build builds scidex-jail and scidex-jail-init side by side"
	case $(file -b "$b") in
	*"statically linked"* | *"static-pie linked"*) ;;
	*) fail "$b is not a static binary: build it with CGO_ENABLED=0 (make build)" ;;
	esac
done

stage=$(mktemp -d /tmp/scidex-jail-deb-XXXXXX)
trap 'rm -rf -- "$stage"' EXIT
umask 022
chmod 0755 "$stage"
doc=$stage/usr/share/doc/scidex-jail
install -d "$stage/DEBIAN" "$stage/usr/bin" "$stage/etc/scidex-jail" "$stage/usr/share/man/man1" \
	"$stage/usr/share/bash-completion/completions" "$stage/usr/lib/systemd/system" "$stage/usr/lib/tmpfiles.d" \
	"$stage/usr/libexec/scidex-jail" "$doc/examples/systemd" "$doc/examples/apparmor" "$doc/examples/slurm" "$doc/examples/kubernetes"

install -m 0755 "$bin" "$stage/usr/bin/scidex-jail"
install -m 0755 "$init" "$stage/usr/libexec/scidex-jail/scidex-jail-init"
"$bin" profiles --builtin 2>/dev/null >"$stage/etc/scidex-jail/profiles.json" || fail "$bin profiles --builtin"
"$bin" man >"$stage/usr/share/man/man1/scidex-jail.1" || fail "$bin man"
gzip -9n "$stage/usr/share/man/man1/scidex-jail.1"
"$bin" completion bash >"$stage/usr/share/bash-completion/completions/scidex-jail" || fail "$bin completion bash"
install -m 0644 packaging/systemd/scidex-jail.slice "$stage/usr/lib/systemd/system/"
install -m 0644 packaging/scidex-jail.tmpfiles "$stage/usr/lib/tmpfiles.d/scidex-jail.conf"
install -m 0755 packaging/delegate "$stage/usr/libexec/scidex-jail/delegate"

# The report's schema as the binary prints it, and the Python package for
# Debian's python3: its wheel, built offline by Debian's flit_core, unpacked
# where Debian's python3 looks, so one apt install gives both. The
# package's copy of the schema must be the binary's.
install -d "$stage/usr/share/scidex-jail" "$stage/usr/lib/python3/dist-packages" "$stage/wheel"
"$bin" schema >"$stage/usr/share/scidex-jail/report.schema.json" || fail "$bin schema"
wheel=$(cd python && /usr/bin/python3 -c 'import sys, flit_core.buildapi as b; print(b.build_wheel(sys.argv[1]))' "$stage/wheel") ||
	fail "build the Python package's wheel with flit_core (apt-get install flit)"
/usr/bin/python3 -m zipfile -e "$stage/wheel/$wheel" "$stage/usr/lib/python3/dist-packages" || fail "unpack $wheel"
rm -rf -- "$stage/wheel"
cmp -s "$stage/usr/lib/python3/dist-packages/scidex_jail/report.schema.json" "$stage/usr/share/scidex-jail/report.schema.json" ||
	fail "python/scidex_jail/report.schema.json differs from what $bin schema prints: build the binary from this tree (make build)"

install -d "$doc/docs"
install -m 0644 README.md CHANGELOG.md packaging/deb/copyright "$doc/"
install -m 0644 docs/*.md "$doc/docs/"
gzip -9n "$doc/README.md" "$doc/CHANGELOG.md" "$doc"/docs/*.md
install -m 0644 packaging/systemd/scidex-jail-runner.service packaging/systemd/scidex-jail-serve.service "$doc/examples/systemd/"
install -m 0644 packaging/apparmor/scidex-jail "$doc/examples/apparmor/"
install -m 0644 examples/slurm/* "$doc/examples/slurm/"
install -m 0644 examples/kubernetes/* "$doc/examples/kubernetes/"
install -m 0644 examples/profiles.json "$doc/examples/"
date=$(git log -1 --format=%aD 2>/dev/null || date -R)
printf 'scidex-jail (%s) unstable; urgency=medium\n\n  * Built from the repository with make deb (commit %s).\n\n -- scidex-jail developers <scidex-jail@scidex.invalid>  %s\n' \
	"$version" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$date" | gzip -9n >"$doc/changelog.Debian.gz"

install -m 0755 packaging/deb/postinst packaging/deb/postrm "$stage/DEBIAN/"
echo /etc/scidex-jail/profiles.json >"$stage/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<CONTROL
Package: scidex-jail
Version: $version
Architecture: $arch
Maintainer: scidex-jail developers <scidex-jail@scidex.invalid>
Installed-Size: $size
Section: admin
Priority: optional
Homepage: https://scidex.invalid/scidex-jail
Suggests: python3, python3-psycopg, python3-jsonschema
Description: sandbox for untrusted scientific analyses
 scidex-jail runs one analysis (a Python script, a Jupyter notebook, a tool
 run) in fresh namespaces, confines its files with Landlock and a minimal
 mount view, keeps it off the network with seccomp, limits its memory, CPU
 and processes in a cgroup leaf of its own, and writes one JSON report of
 how it ended. One static binary; no run-time dependencies.
 .
 The package ships the built-in profiles as /etc/scidex-jail/profiles.json,
 a systemd slice for the services that start analyses, a helper that lays
 out a delegated cgroup for such a service, and examples for systemd (a
 runner's service and the resident server's, scidex-jail serve), Slurm
 and Kubernetes; the report's JSON Schema; and the Python package
 scidex_jail for Debian's python3 (import scidex_jail), which runs the jail
 and reads its reports (post_process needs python3-psycopg, report
 validation python3-jsonschema).
CONTROL
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums" "$stage/DEBIAN/control" "$stage/DEBIAN/conffiles"

mkdir -p "$outdir"
deb=$outdir/scidex-jail_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null || fail "dpkg-deb --build"
echo "$deb"
