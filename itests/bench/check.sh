#!/usr/bin/env bash
# Static check of the benchmark suite, run by .ci/run (benchmarks themselves never run in CI):
# every script parses (bash -n) and every fio job file loads (fio --parse-only) with the
# same kind of command line run.sh gives it. Exit status non-zero on the first kind of failure.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail=0
# Every shell script of the suite, including the other benchmarks' directories (not target/).
nscripts=0
while IFS= read -r -d '' f; do
    nscripts=$((nscripts + 1))
    if ! bash -n "$f"; then echo "check: bash -n failed: $f" >&2; fail=1; fi
done < <(find "$here" -path "$here/target" -prune -o -name '*.sh' -type f -print0)
if ! command -v fio >/dev/null 2>&1; then
    echo "check: fio not found; install the Debian package 'fio'" >&2
    exit 1
fi
export BENCH_REGION=64m BENCH_IO=16m BENCH_RUNTIME=1 BENCH_BS=4k
n=0
while IFS= read -r -d '' j; do
    n=$((n + 1))
    # Each job runs over NBD (fio's nbd engine) and, for the physical limit, on a file.
    if ! out=$(fio --parse-only --ioengine=nbd --uri=nbd://127.0.0.1:10809/check "$j" 2>&1); then
        echo "check: fio --parse-only failed (nbd): $j" >&2; echo "$out" >&2; fail=1
    fi
    if ! out=$(fio --parse-only --ioengine=io_uring --direct=1 --filename=/dev/null "$j" 2>&1); then
        echo "check: fio --parse-only failed (io_uring): $j" >&2; echo "$out" >&2; fail=1
    fi
done < <(find "$here" -path "$here/target" -prune -o -name '*.fio' -type f -print0 | sort -z)
if [ "$n" -eq 0 ]; then echo "check: no job files under $here/jobs" >&2; fail=1; fi
if [ "$fail" -ne 0 ]; then exit 1; fi
echo "check: $nscripts scripts parse and $n fio job files load under itests/bench"
