#!/usr/bin/env bash
# Trace replay of read-cache policies (a benchmark, not a test). Usage:
#   itests/bench/readcache/replay.sh [--rebuild] TRACE --sizes N[,N…] [--policy P[,P…]]
# TRACE is an ARC-format trace (`start nblocks ignore reqno` per line, plain or .gz; every
# 512-byte block is one key, as Megiddo & Modha, "ARC: A Self-Tuning, Low Overhead Replacement
# Cache", FAST '03, count them). N is a cache size in keys, or X% of the trace's distinct keys.
# P is a shipped policy by its service name (wtinylfu, nhit, lru; tunables as
# wtinylfu:window=0:climb=false) or a reference of the bench (ref-lru: exact LRU, arc: ARC);
# default: all. Prints one line per policy and size: `POLICY SIZE HIT%`.
# The replay drives the policies bundle's real classes: its jar (built here with
# `mvn -o -q -pl bundles/readcache-policies -am package -DskipTests` if missing, or always with
# --rebuild) is on the class path; the replay itself is the module's test-scoped
# dev.strata.readcache.policies.replay package (tested by ReplayTest in the normal build).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
MOD="$ROOT/bundles/readcache-policies"
REBUILD=""
if [ "${1:-}" = "--rebuild" ]; then REBUILD=1; shift; fi
if [ $# -eq 0 ]; then
    echo "usage: replay.sh [--rebuild] TRACE --sizes N[,N…] [--policy P[,P…]]" >&2
    exit 2
fi
find_jars() {
    JAR=$(ls "$MOD"/target/dev.strata.readcache.policies-*.jar 2>/dev/null | grep -v -e sources -e tests | head -1 || true)
    API=$(ls "$ROOT"/bundles/api/target/dev.strata.api-*.jar 2>/dev/null | grep -v sources | head -1 || true)
}
find_jars
if [ -n "$REBUILD" ] || [ -z "$JAR" ] || [ -z "$API" ] || [ ! -f "$MOD/target/test-classes/dev/strata/readcache/policies/replay/Replay.class" ]; then
    (cd "$ROOT" && mvn -B -o -q -pl bundles/readcache-policies -am package -DskipTests) >&2
    find_jars
fi
if [ -z "$JAR" ] || [ -z "$API" ]; then
    echo "replay: the policies bundle did not build; run: mvn -B -pl bundles/readcache-policies -am package" >&2
    exit 1
fi
exec java -Xmx${REPLAY_HEAP:-3g} -cp "$MOD/target/test-classes:$JAR:$API" dev.strata.readcache.policies.replay.Replay "$@"
