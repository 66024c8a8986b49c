#!/usr/bin/env bash
# fuzz-one.sh GO PACKAGE TARGET FUZZTIME MINIMIZETIME: fuzz one target
# (make fuzz calls it for each).
#
# Go's fuzzing coordinator can fail a run whose time is up with a bare
# "context deadline exceeded" while a worker is still busy, on a loaded
# machine, having found nothing: no input is written, and the seed corpus
# (run by make unit) passes. Such a run is tried once more; any other
# failure, and a second one, fails.
set -uo pipefail
go=$1 pkg=$2 target=$3 fuzztime=$4 minimize=$5
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for attempt in 1 2; do
	"$go" test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$pkg" 2>&1 | tee "$out"
	code=${PIPESTATUS[0]}
	if [ "$code" -eq 0 ]; then
		exit 0
	fi
	if [ "$attempt" -eq 1 ] && grep -q '^    context deadline exceeded$' "$out" && ! grep -q 'Failing input written' "$out"; then
		echo "fuzz-one.sh: $target ended on the fuzzing coordinator's deadline with nothing found; once more"
		continue
	fi
	exit "$code"
done
