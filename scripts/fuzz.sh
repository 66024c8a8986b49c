#!/usr/bin/env bash
# fuzz.sh GO FUZZTIME MINIMIZETIME: every Fuzz* target of the module, each
# for FUZZTIME (make fuzz; their seed corpora also run in make unit).
#
# go test -fuzz compiles the package and every package it imports anew
# with the fuzzer's coverage instrumentation (the compiler's -d=libfuzzer),
# Kubernetes' and Helm's included, and links the binary anew for every
# target: minutes of compiling that make unit has just done in another
# configuration. Here the packages that have targets are built once, in
# one go test -c, in unit's configuration (-race, so every dependency
# comes from the build cache), with only this module's packages
# instrumented: coverage guides the fuzzer through our code, which is what
# the targets test, and the race detector watches every input. Each binary
# lists its targets (-test.list) and runs each in the package's folder as
# go test runs it, with go test's corpus cache (GOCACHE/fuzz).
#
# A time is kept by timeout(1), which sends INT when it is up, as a person
# pressing ^C would: the fuzzer stops, keeps what it found and passes
# unless an input failed. It is not given to -test.fuzztime: with a time
# there, Go 1.26's fuzzing coordinator can fail a run that found nothing
# with a bare "context deadline exceeded" (a race between its deadline and
# the cancellation of its workers, fixed in Go 1.27), and did in CI here,
# once on the same target twice in a row. Its answer to INT has no such
# race. The INT goes to the fuzzer alone (--foreground), not to its
# process group as ^C does: a worker that the INT killed while the
# fuzzer was starting it, before the fuzzer itself had seen the INT,
# failed the run with "fuzzing process terminated without fuzzing: EOF";
# the fuzzer stops its workers itself once it has. A count (100x) has no
# deadline either and goes to the fuzzer.
set -uo pipefail
go=$1 fuzztime=$2 minimize=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cache=$("$go" env GOCACHE)/fuzz || exit 1

# fuzz BINARY DIR PACKAGE TARGET: one target for FUZZTIME. A fuzzer that
# has not stopped a minute after INT is killed, and fails.
fuzz() {
	local bin=$1 dir=$2 pkg=$3 target=$4 bound=() budget=()
	case $fuzztime in
	*x) budget=(-test.fuzztime "$fuzztime") ;;
	*) bound=(timeout --foreground --preserve-status -k 60s -s INT "$fuzztime") ;;
	esac
	if ! (cd "$dir" && "${bound[@]}" "$bin" -test.run '^$' -test.fuzz "^${target}\$" "${budget[@]}" \
		-test.fuzzminimizetime "$minimize" -test.fuzzcachedir "$cache/$pkg" -test.paniconexit0); then
		echo "FAIL: $target in $pkg (go test -run '^$target\$' $pkg reruns its corpus)"
		return 1
	fi
}

# The packages whose test files declare a fuzz target (gofmt, which make
# vet checks, starts each top-level func on a line of its own).
module=$("$go" list -m) || exit 1
list=$("$go" list -f '{{.ImportPath}} {{.Dir}}{{range .TestGoFiles}} {{.}}{{end}}{{range .XTestGoFiles}} {{.}}{{end}}' ./...) || exit 1
pkgs=() dirs=()
while read -r pkg dir files; do
	[ -n "$files" ] && (cd "$dir" && grep -q '^func Fuzz' $files) || continue
	pkgs+=("$pkg") dirs+=("$dir")
done <<<"$list"
if [ "${#pkgs[@]}" -eq 0 ]; then
	echo 'fuzz.sh: no Fuzz targets found'
	exit 1
fi
echo "fuzz: building ${pkgs[*]}"
CGO_ENABLED=1 "$go" test -c -race -gcflags="$module/...=-d=libfuzzer" -o "$work/" "${pkgs[@]}" || exit 1
found=0
for i in "${!pkgs[@]}"; do
	pkg=${pkgs[$i]} dir=${dirs[$i]}
	bin=$work/$(basename "$pkg").test
	targets=$(cd "$dir" && "$bin" -test.list '^Fuzz' | grep '^Fuzz') || { echo "fuzz.sh: $pkg lists no Fuzz target"; exit 1; }
	for target in $targets; do
		echo "fuzz $target in $pkg for $fuzztime"
		fuzz "$bin" "$dir" "$pkg" "$target" || exit 1
		found=$((found + 1))
	done
done
echo "fuzz.sh: $found targets, each for $fuzztime"
