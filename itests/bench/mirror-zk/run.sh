#!/usr/bin/env bash
# The mirror's zookeeper: log figures (issue 15), in process (not a test):
#   itests/bench/mirror-zk/run.sh [--quick] [--rebuild]
# Builds the mirror bundle and test-support if their jars are missing, or always with --rebuild
# (mvn -o -q -pl bundles/mirror,test-support -am package -DskipTests), compiles MirrorZkBench.java
# against them and the ZooKeeper/netty/slf4j jars of ~/.m2, and runs it against Debian's ZooKeeper
# server (package zookeeper) started on 127.0.0.1 with its data in BENCH_TMPDIR (default /var/tmp).
# Writes result.md and meta.txt (with uptime) to itests/bench/target/mirror-zk-DATE/.
# Full run ≈ 2 minutes (5 reps × 4 runs of 5 s); --quick ≈ 1 minute.
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
[ -f /usr/share/java/zookeeper.jar ] || { echo "mirror-zk: Debian's ZooKeeper is missing; install the package 'zookeeper'" >&2; exit 1; }
jar() { ls "$ROOT"/$1/target/$2-*.jar 2>/dev/null | grep -v -e sources -e tests | head -1 || true; }
find_jars() {
    MIRROR=$(jar bundles/mirror dev.strata.mirror)
    API=$(jar bundles/api dev.strata.api)
    TS=$(jar test-support strata-test-support)
}
find_jars
if [ -n "$REBUILD" ] || [ -z "$MIRROR" ] || [ -z "$API" ] || [ -z "$TS" ]; then
    (cd "$ROOT" && mvn -B -o -q -pl bundles/mirror,test-support -am package -DskipTests)
    find_jars
fi
M2=~/.m2/repository
DEPS=("$M2/org/apache/zookeeper/zookeeper/3.9.5/zookeeper-3.9.5-osgi.jar" "$M2/org/apache/zookeeper/zookeeper-jute/3.9.5/zookeeper-jute-3.9.5-osgi.jar"
      "$M2/org/slf4j/slf4j-api/2.0.17/slf4j-api-2.0.17.jar")
for n in common buffer resolver transport transport-native-unix-common codec handler; do
    DEPS+=("$M2/io/netty/netty-$n/4.1.130.Final/netty-$n-4.1.130.Final.jar")
done
OUTC=$(mktemp -d)
trap 'rm -rf "$OUTC"' EXIT
# private copies: a build in this worktree during the run must not swap classes under it
mkdir -p "$OUTC/jars"
cp "$MIRROR" "$API" "$TS" "${DEPS[@]}" "$OUTC/jars/"
CP=$(ls "$OUTC"/jars/*.jar | tr '\n' ':')
javac -d "$OUTC/classes" -cp "$CP" "$HERE/MirrorZkBench.java"
RUN="$ROOT/itests/bench/target/mirror-zk-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$RUN"
{ echo "date: $(date -u)"; echo "uptime before: $(uptime)"; echo "nproc: $(nproc)"; echo "java: $(java -version 2>&1 | head -1)"; } > "$RUN/meta.txt"
java -Xmx1g -cp "$OUTC/classes:$CP" MirrorZkBench "$RUN" "${BENCH_TMPDIR:-/var/tmp}" ${ARGS[@]+"${ARGS[@]}"}
echo "uptime after: $(uptime)" >> "$RUN/meta.txt"
cat "$RUN/meta.txt"
echo "results: $RUN"
