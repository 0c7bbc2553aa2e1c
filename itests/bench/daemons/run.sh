#!/usr/bin/env bash
# bcache's writeback scenario for the writeback controllers (issue 13), in process (not a test):
#   itests/bench/daemons/run.sh [--quick] [--rebuild] [--docs] [--caches=LIST] [--controllers=LIST]
# Builds the daemons, writeboost, writecache and testkit bundles if their jars are missing, or
# always with --rebuild (mvn -o -q -pl … -am package -DskipTests), compiles the bench (DaemonsBench.java, FileDevice.java, Counting.java)
# against them and runs it: a table, the goals (PASS/FAIL), samples.tsv and the PNG charts in
# itests/bench/target/daemons-DATE/ (with the machine's load from uptime). --docs also copies
# the charts to docs/img/daemons-*.png. The cache and backing files live in BENCH_TMPDIR
# (default /var/tmp, the local disk) and are removed after each run.
# Full run ≈ 10 minutes (10 runs of 45 s load + a tail until clean); --quick ≈ 5 minutes.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
ARGS=()
REBUILD=""
DOCS=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick|--caches=*|--controllers=*) ARGS+=("$1"); shift ;;
        --rebuild) REBUILD=1; shift ;;
        --docs) DOCS=1; shift ;;
        *) echo "usage: $0 [--quick] [--rebuild] [--docs] [--caches=writeboost,writecache] [--controllers=paused,unthrottled,modulator,pi,idle]" >&2; exit 2 ;;
    esac
done
jar() { ls "$ROOT"/bundles/$1/target/$2-*.jar 2>/dev/null | grep -v sources | head -1 || true; }
find_jars() {
    DAEMONS=$(jar daemons dev.strata.daemons)
    WB=$(jar cache-writeboost dev.strata.cache.writeboost)
    WC=$(jar cache-writecache dev.strata.cache.writecache)
    KIT=$(jar testkit-targets dev.strata.testkit)
    API=$(jar api dev.strata.api)
}
find_jars
if [ -n "$REBUILD" ] || [ -z "$DAEMONS" ] || [ -z "$WB" ] || [ -z "$WC" ] || [ -z "$KIT" ] || [ -z "$API" ]; then
    (cd "$ROOT" && mvn -B -o -q -pl bundles/daemons,bundles/cache-writeboost,bundles/cache-writecache,bundles/testkit-targets -am package -DskipTests)
    find_jars
fi
SLF4J=$(ls ~/.m2/repository/org/slf4j/slf4j-api/2.0.17/slf4j-api-2.0.17.jar)
OUTC=$(mktemp -d)
trap 'rm -rf "$OUTC"' EXIT
# private copies: a build in this worktree during the run must not swap classes under it
mkdir -p "$OUTC/jars"
cp "$DAEMONS" "$WB" "$WC" "$KIT" "$API" "$SLF4J" "$OUTC/jars/"
# the cache jars embed cache-support (bnd -conditionalpackage): the same sources twice on the path
CP=$(ls "$OUTC"/jars/*.jar | tr '\n' ':')
javac -d "$OUTC/classes" -cp "$CP" "$HERE"/*.java
RUN="$ROOT/itests/bench/target/daemons-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$RUN"
{ echo "date: $(date -u)"; echo "uptime before: $(uptime)"; echo "nproc: $(nproc)"; echo "java: $(java -version 2>&1 | head -1)"; } > "$RUN/meta.txt"
java -Xmx1g -cp "$OUTC/classes:$CP" DaemonsBench "$RUN" "${BENCH_TMPDIR:-/var/tmp}" ${ARGS[@]+"${ARGS[@]}"}
echo "uptime after: $(uptime)" >> "$RUN/meta.txt"
cat "$RUN/meta.txt"
if [ -n "$DOCS" ]; then
    cp "$RUN"/daemons-*.png "$ROOT/docs/img/"
fi
echo "results: $RUN"
