#!/usr/bin/env bash
# Writeboost over NBD against its own JVM's plain exports, with CPU and wake-ups per request
# (issue 10, performance 2 and 3). Usage:
#   itests/bench/writeboost/nbd.sh [--job FILE.fio] [--systems "wb sfile wb sfile"] [--perf FILE] [DIST]
# One Strata JVM (DIST, default distribution/target/strata) exports three devices on fallocated
# files under BENCH_TMPDIR (default /var/tmp): `wb` (writeboost, backing a `file` device, cache a
# `direct` device, writeback_threshold=0 plus STRATA_WB_ARGS), `sfile` (a `file` device) and
# `sdirect` (a `direct` device: writeboost's cache device alone). Every system is written once
# (unmeasured: the JIT compiles, the files' blocks are allocated), then each of --systems runs
# the job (default jobs/randwrite-4k.fio) in that order. Per run it prints IOPS, MiB/s, the
# JVM's CPU per request (utime+stime from /proc, µs) and the voluntary/involuntary context
# switches per request of the threads that outlive the run (writeboost's daemons; the NBD
# workers end with their connection and are not counted). --perf FILE records a CPU profile
# (perf, 999 Hz, call graphs, JIT symbols through -XX:+DumpPerfMapAtExit) of the first wb run.
# BENCH_REGION (default 1G), BENCH_IO (512M), BENCH_RUNTIME (6) size the job; BENCH_IMG_SIZE
# (3G) the files. Compare two builds by running it for each, alternately.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
job=$here/../jobs/randwrite-4k.fio
systems="wb sfile wb sfile"
perfout=""
while [ $# -gt 0 ]; do
    case "$1" in
        --job) job=${2:?--job needs a fio job file}; shift ;;
        --systems) systems=${2:?--systems needs a list}; shift ;;
        --perf) perfout=${2:?--perf needs an output file}; shift ;;
        -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "nbd.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
        *) break ;;
    esac
    shift
done
dist=${1:-$root/distribution/target/strata}
[ -x "$dist/bin/strata" ] || { echo "nbd.sh: '$dist' is not a built distribution (no bin/strata); build it with mvn -B -q -DskipTests package" >&2; exit 2; }
[ -f "$job" ] || { echo "nbd.sh: no job file '$job'" >&2; exit 2; }
for s in $systems; do
    case "$s" in wb|sfile|sdirect) ;; *) echo "nbd.sh: unknown system '$s' (wb, sfile or sdirect)" >&2; exit 2 ;; esac
done
for pair in fio:fio nbdinfo:libnbd-bin jq:jq; do
    command -v "${pair%%:*}" >/dev/null || { echo "nbd.sh: ${pair%%:*} missing; install the Debian package '${pair#*:}'" >&2; exit 1; }
done
[ -z "$perfout" ] || command -v perf >/dev/null || { echo "nbd.sh: perf missing; install the Debian package 'linux-perf'" >&2; exit 1; }
export BENCH_REGION=${BENCH_REGION:-1G} BENCH_IO=${BENCH_IO:-512M} BENCH_RUNTIME=${BENCH_RUNTIME:-6}
img=${BENCH_IMG_SIZE:-3G}
tmp=$(mktemp -d "${BENCH_TMPDIR:-/var/tmp}/strata-wbnbd.XXXXXX") || exit 1
pg=""
cleanup() {
    [ -n "$pg" ] && kill -- -"$pg" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 30000))
        [ -z "$(ss -Htln "sport = :$p" 2>/dev/null)" ] && { echo "$p"; return; }
    done
}
cp -a "$dist" "$tmp/home"
rm -f "$tmp"/home/deploy/*.cfg "$tmp"/home/deploy/*.config
rm -rf "$tmp/home/felix-cache" "$tmp/home/var" && mkdir -p "$tmp/home/var"
for f in back cache sfile sdirect; do fallocate -l "$img" "$tmp/$f.img"; done
declare -A port
for s in wb sfile sdirect; do port[$s]=$(free_port); done
mkfifo "$tmp/console"
exec {fd}<>"$tmp/console"
opts=""
[ -n "$perfout" ] && opts="-XX:+UnlockDiagnosticVMOptions -XX:+PreserveFramePointer -XX:+DumpPerfMapAtExit"
setsid env JAVA_OPTS="$opts" bash -c 'cd "$1" && STRATA_HOME="$1" exec bin/strata --no-default-stack <"$2"' _ "$tmp/home" "$tmp/console" \
    >"$tmp/strata.log" 2>&1 </dev/null &
pg=$!
echo "dev:create wbback file path=$tmp/back.img ; dev:create wbcache direct path=$tmp/cache.img ; dev:create wb writeboost backing=wbback cache=wbcache format=true writeback_threshold=0 ${STRATA_WB_ARGS:-} ; nbd:export wb --name wb --bind 127.0.0.1 --port ${port[wb]} ; dev:create sfile file path=$tmp/sfile.img ; nbd:export sfile --name sfile --bind 127.0.0.1 --port ${port[sfile]} ; dev:create sdirect direct path=$tmp/sdirect.img ; nbd:export sdirect --name sdirect --bind 127.0.0.1 --port ${port[sdirect]}" >&"$fd"
uri() { echo "nbd://127.0.0.1:${port[$1]}/$1"; }
for s in wb sfile sdirect; do
    for ((t = 0; t < 600; t++)); do
        nbdinfo --size "$(uri "$s")" >/dev/null 2>&1 && break
        kill -0 "$pg" 2>/dev/null || break
        sleep 0.2
    done
    nbdinfo --size "$(uri "$s")" >/dev/null 2>&1 || { echo "nbd.sh: export $s did not answer; the log:" >&2; tail -n 20 "$tmp/strata.log" >&2; exit 1; }
done
jpid=$(pgrep -g "$pg" java | head -1)
[ -n "$jpid" ] || { echo "nbd.sh: the Strata JVM is not running" >&2; exit 1; }
for s in $(tr ' ' '\n' <<<"$systems" | sort -u); do
    fio --ioengine=nbd --uri="$(uri "$s")" "$job" --output-format=terse >/dev/null 2>&1
done
ticks() { awk '{print $14 + $15}' "/proc/$jpid/stat"; }
switches() { grep -h "^$1" /proc/"$jpid"/task/*/status 2>/dev/null | awk '{s += $2} END {print s + 0}'; }
hz=$(getconf CLK_TCK)
echo "dist $dist, job $(basename "$job"), BENCH_REGION=$BENCH_REGION BENCH_IO=$BENCH_IO BENCH_RUNTIME=$BENCH_RUNTIME${STRATA_WB_ARGS:+, STRATA_WB_ARGS=$STRATA_WB_ARGS}; load at start $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'system\tIOPS\tMiB/s\tCPU us/req\tvol. cs/req\tinvol. cs/req\n'
pp=""
for s in $systems; do
    c0=$(ticks) v0=$(switches voluntary_ctxt) n0=$(switches nonvoluntary_ctxt)
    if [ -n "$perfout" ] && [ "$s" = wb ] && [ ! -f "$perfout" ]; then
        perf record -F 999 -g -p "$jpid" -o "$perfout" -- sleep $((BENCH_RUNTIME > 2 ? BENCH_RUNTIME - 1 : 1)) >/dev/null 2>&1 &
        pp=$!
    fi
    fio --ioengine=nbd --uri="$(uri "$s")" "$job" --output-format=json --output="$tmp/out.json" >"$tmp/fio.log" 2>&1 \
        || { echo "nbd.sh: fio failed on $s: $(tail -n 3 "$tmp/fio.log" | tr '\n' ' ')" >&2; exit 1; }
    [ -n "$pp" ] && { wait "$pp"; pp=""; }
    c1=$(ticks) v1=$(switches voluntary_ctxt) n1=$(switches nonvoluntary_ctxt)
    jq -r --arg s "$s" --arg c $((c1 - c0)) --arg hz "$hz" --arg v $((v1 - v0)) --arg n $((n1 - n0)) '.jobs[0].write as $w
        | [$s, ($w.iops | floor), ($w.bw_bytes / 1048576 | floor),
           (($c | tonumber) / ($hz | tonumber) * 1e6 / $w.total_ios * 100 | floor / 100),
           (($v | tonumber) / $w.total_ios * 1000 | floor / 1000), (($n | tonumber) / $w.total_ios * 1000 | floor / 1000)] | @tsv' "$tmp/out.json"
done
echo "load at end $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "$perfout" ] && jcmd "$jpid" Compiler.perfmap >/dev/null 2>&1
exit 0
