#!/usr/bin/env bash
# In-process writecache benchmark (not a test): the seed's table of issue 11. Usage:
#   itests/bench/writecache/run.sh [--quick] [--rebuild]
# Builds the writecache and memory-driver bundles if their jars are missing, or always with
# --rebuild (mvn -o -q -pl … -am package -DskipTests; without it a jar left from older sources
# is used), compiles WritecacheBench.java against them and prints a markdown table from one run.
# Everything is in memory (the JVM heap): no files, no ports.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
ARGS=()
REBUILD=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) ARGS+=("$1"); shift ;;
        --rebuild) REBUILD=1; shift ;;
        *) echo "usage: $0 [--quick] [--rebuild]" >&2; exit 2 ;;
    esac
done
find_jars() {
    JAR=$(ls "$ROOT"/bundles/cache-writecache/target/dev.strata.cache.writecache-*.jar 2>/dev/null | grep -v sources | head -1 || true)
    API=$(ls "$ROOT"/bundles/api/target/dev.strata.api-*.jar 2>/dev/null | grep -v sources | head -1 || true)
    MEM=$(ls "$ROOT"/bundles/driver-memory/target/dev.strata.driver.memory-*.jar 2>/dev/null | grep -v sources | head -1 || true)
}
find_jars
if [ -n "$REBUILD" ] || [ -z "$JAR" ] || [ -z "$API" ] || [ -z "$MEM" ]; then
    (cd "$ROOT" && mvn -B -o -q -pl bundles/cache-writecache,bundles/driver-memory -am package -DskipTests)
    find_jars
fi
SLF4J=$(ls ~/.m2/repository/org/slf4j/slf4j-api/2.0.17/slf4j-api-2.0.17.jar)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# the writecache jar embeds cache-support and HdrHistogram (bnd -conditionalpackage)
CP="$JAR:$API:$MEM:$SLF4J"
javac -d "$OUT" -cp "$CP" "$HERE/WritecacheBench.java"
java -Xmx1g ${BENCH_JAVA_OPTS:-} -cp "$OUT:$CP" WritecacheBench ${ARGS[@]+"${ARGS[@]}"}
