#!/usr/bin/env bash
# In-process writeboost benchmarks (not tests). Usage:
#   itests/bench/writeboost/run.sh [--quick] [--rebuild] [--only=random,sequential,writeback,cold] [DIR]
# Builds the writeboost and testkit bundles if their jars are missing, or always with --rebuild
# (mvn -o -q -pl … -am package -DskipTests; without it a jar left from older sources is used),
# compiles WriteboostBench.java against it and prints a markdown table of ratios from one run.
# DIR (default /var/tmp) holds the temporary cache and disk files (removed at the end).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
ARGS=()
REBUILD=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick|--only=*) ARGS+=("$1"); shift ;;
        --rebuild) REBUILD=1; shift ;;
        *) break ;;
    esac
done
DIR=${1:-/var/tmp}
# the benchmark's data go into a temporary folder inside DIR: DIR itself must be there
[ -d "$DIR" ] || { echo "$0: $DIR is not a folder; give an existing folder for the benchmark's data (default /var/tmp)" >&2; exit 2; }
JAR=$(ls "$ROOT"/bundles/cache-writeboost/target/dev.strata.cache.writeboost-*.jar 2>/dev/null | grep -v sources | head -1 || true)
API=$(ls "$ROOT"/bundles/api/target/dev.strata.api-*.jar 2>/dev/null | head -1 || true)
KIT=$(ls "$ROOT"/bundles/testkit-targets/target/dev.strata.testkit-*.jar 2>/dev/null | head -1 || true)
if [ -n "$REBUILD" ] || [ -z "$JAR" ] || [ -z "$API" ] || [ -z "$KIT" ]; then
    (cd "$ROOT" && mvn -B -o -q -pl bundles/cache-writeboost,bundles/testkit-targets -am package -DskipTests)
    JAR=$(ls "$ROOT"/bundles/cache-writeboost/target/dev.strata.cache.writeboost-*.jar | head -1)
    API=$(ls "$ROOT"/bundles/api/target/dev.strata.api-*.jar | head -1)
    KIT=$(ls "$ROOT"/bundles/testkit-targets/target/dev.strata.testkit-*.jar | head -1)
fi
SLF4J=$(ls ~/.m2/repository/org/slf4j/slf4j-api/2.0.17/slf4j-api-2.0.17.jar)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
CP="$JAR:$API:$KIT:$SLF4J"
javac -d "$OUT" -cp "$CP" "$HERE"/*.java
# BENCH_JAVA_OPTS: extra JVM options (e.g. -XX:StartFlightRecording=... for a profile)
java -Xmx2g ${BENCH_JAVA_OPTS:-} -cp "$OUT:$CP" WriteboostBench "$DIR" ${ARGS[@]+"${ARGS[@]}"}
