#!/usr/bin/env bash
# In-process writecache benchmarks of issue 11 (not tests). Usage:
#   itests/bench/writecache/run.sh [--quick] [--rebuild] [--only=seed,seed-nbd,seed-nbd-direct,floor,bookkeeping,alloc,per-block,vs-writeboost,writeback,footprint]
# Builds the bundles it needs if their jars are missing, or always with --rebuild
# (mvn -o -q -pl … -am package -DskipTests; without it a jar left from older sources is used),
# compiles the *.java here against them and prints markdown tables from one run:
#   seed          Performance 1: the seed's table in process (32 threads), contiguous vs one I/O per block vs
#                 the cache device (a `memory` cache device, then a `file` one in /var/tmp, -Dbench.dir=… via BENCH_JAVA_OPTS)
#   seed-nbd      Performance 1: the seed's table as the issue states it, fio --ioengine=nbd --rw=randwrite
#                 --iodepth=32 --direct=1 against this JVM's NBD server (memory device, writecache contiguous,
#                 one I/O per block)
#   seed-nbd-direct Performance 1's 2.3x where a device has a per-I/O cost: the same cells over a `direct`
#                 cache device (O_DIRECT, preallocated file in /var/tmp or -Dbench.dir=…); -Dbench.seed.blockSize=512
#                 (default: the same cells, the device shown with 512-byte sectors) or 4096 (its own block size)
#   floor         Performance 1's floor: thread CPU per 4 KiB overwrite (-Dbench.floor.bs=…, -Dbench.floor.shuffle=true: filled in random order) of writecache, the memory device
#                 alone and the index walk alone (steady state, every block written once first)
#   bookkeeping   Performance 1's floor part by part: thread CPU ns per op of each piece of an in-place
#                 write's bookkeeping (latency record striped and, for comparison, one ConcurrentHistogram;
#                 busy meter, counter, gate, in-flight registry), 1 thread and 32
#   alloc         Performance 1's miss path: thread CPU per request when every request allocates (each
#                 chunk written once into a fresh cache), next to the memory device alone; 1 and 32 threads
#   per-block     Performance 1's 2.3x: the `memory` device alone, a request as one write vs as writes of 512 B
#                 (what contiguous allocation can save a request over that device), 1 thread
#   vs-writeboost Performance 2: 4 KiB random writes next to writeboost, in process and over NBD (fio)
#   writeback     Performance 3: writeback to spindle, sorted + merged vs age order (model time)
#   footprint     Performance 4: heap per slot, open of a full 4 GiB cache
# Devices are memory devices (the JVM heap) unless named above; the NBD part listens on 127.0.0.1 at a free port.
# The output, with the load average before and after, is also written to
# itests/bench/target/writecache-DATE.md.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
ARGS=()
REBUILD=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick|--only=*) ARGS+=("$1"); shift ;;
        --rebuild) REBUILD=1; shift ;;
        *) echo "usage: $0 [--quick] [--rebuild] [--only=seed,seed-nbd,seed-nbd-direct,floor,bookkeeping,alloc,per-block,vs-writeboost,writeback,footprint]" >&2; exit 2 ;;
    esac
done
# module directory:jar name; test-support for its SimpleTargetContext and ForwardingBlockDevice
MODULES=(bundles/cache-writecache:dev.strata.cache.writecache bundles/api:dev.strata.api
    bundles/driver-memory:dev.strata.driver.memory bundles/driver-file:dev.strata.driver.file
    bundles/driver-direct:dev.strata.driver.direct bundles/cache-writeboost:dev.strata.cache.writeboost
    bundles/testkit-targets:dev.strata.testkit bundles/nbd:dev.strata.nbd test-support:strata-test-support)
find_jars() {
    CP=""
    MISSING=""
    for m in "${MODULES[@]}"; do
        j=$(ls "$ROOT/${m%%:*}/target/${m#*:}"-*.jar 2>/dev/null | grep -v -e sources -e tests | head -1 || true)
        if [ -z "$j" ]; then MISSING=1; fi
        CP="$CP${CP:+:}$j"
    done
}
find_jars
if [ -n "$REBUILD" ] || [ -n "$MISSING" ]; then
    PL=$(printf '%s\n' "${MODULES[@]%%:*}" | paste -sd, -)
    (cd "$ROOT" && mvn -B -o -q -pl "$PL" -am package -DskipTests)
    find_jars
fi
SLF4J=$(ls ~/.m2/repository/org/slf4j/slf4j-api/2.0.17/slf4j-api-2.0.17.jar)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# the cache jars embed cache-support and HdrHistogram (bnd -conditionalpackage)
CP="$CP:$SLF4J"
javac -nowarn -d "$OUT" -cp "$CP" "$HERE"/*.java
mkdir -p "$ROOT/itests/bench/target"
RESULT="$ROOT/itests/bench/target/writecache-$(date -u +%Y%m%d-%H%M%S).md"
{
    echo "# writecache benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo
    echo "Machine: $(nproc) cores; load at start: $(cut -d' ' -f1-3 /proc/loadavg); $(java -version 2>&1 | head -1)"
    java -Xmx1500m ${BENCH_JAVA_OPTS:-} -Dslf4j.internal.verbosity=ERROR -cp "$OUT:$CP" WritecacheBench ${ARGS[@]+"${ARGS[@]}"}
    echo
    echo "Load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$RESULT"
echo "(written to $RESULT)" >&2
