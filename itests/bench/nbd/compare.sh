#!/usr/bin/env bash
# Before/after of the NBD export path in one run: Strata's export of a `file` device from one or
# more built distributions (e.g. a copy of the distribution before a change and the current
# one) against `nbdkit file`, on the same fio job through fio's nbd engine, alternated
# (A B C, A B C, ...). Prints every run and the medians with the ratio to nbdkit, for MiB/s and
# for the server's CPU per GiB (utime+stime of its process group from /proc, as run.sh counts).
#
#   itests/bench/nbd/compare.sh [--reps N] [--job FILE.fio] [--wb] DIST[|JAVA_OPTS[|WB_CACHE]] ...
#
# --wb also exports, from every distribution, a writeboost device (backing: a file device, cache:
# a direct (O_DIRECT) device, or the driver BENCH_WB_CACHE names, on fallocated files;
# writeback_threshold=0 so that no writeback competes with the
# measured writes) and runs nbdkit's cache filter (cache=writeback cache-min-block-size=4K, over
# nbdkit file): issue 10's "writeboost ≥ 0.95 × Strata's file export and ≥ 1.5 × nbdkit's cache
# filter", e.g. `--wb --job itests/bench/jobs/randwrite-4k.fio`. Each writeboost run starts on a
# fresh device (removed and created again between runs), as run.sh does. A third field of a
# distribution names its writeboost cache driver (direct or file), e.g. the same distribution
# twice, 'DIST||file DIST||direct', for the cache driver's before/after.
#
#   cp -a distribution/target/strata /var/tmp/strata-before     # before the change
#   ... change, mvn -B -q -DskipTests package ...
#   itests/bench/nbd/compare.sh --reps 7 /var/tmp/strata-before distribution/target/strata
#
# Defaults: 5 repetitions, jobs/seqwrite-1m.fio with BENCH_REGION=2G BENCH_IO=2G
# BENCH_RUNTIME=15 (the full run's sizes; override them in the environment). Each server gets a
# fallocated 4 GiB file (BENCH_IMG_SIZE) under BENCH_TMPDIR (default /var/tmp); every server is written once by
# an unmeasured run of the job before the measured ones (the JIT compiles, the files' blocks
# are allocated). Everything started runs in its own session on 127.0.0.1 and is stopped, and
# the temp dir removed, when the script ends.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
reps=5
wb=0
job=$here/../jobs/seqwrite-1m.fio
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) reps=${2:?--reps needs a number}; shift ;;
        --job) job=${2:?--job needs a fio job file}; shift ;;
        --wb) wb=1 ;;
        -h|--help) sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "compare: unknown option '$1' (try --help)" >&2; exit 2 ;;
        *) break ;;
    esac
    shift
done
case "$reps" in ''|*[!0-9]*|0) echo "compare: --reps needs a positive number" >&2; exit 2 ;; esac
[ $# -ge 1 ] || { echo "compare: name at least one distribution directory (try --help)" >&2; exit 2; }
[ -f "$job" ] || { echo "compare: no job file '$job'" >&2; exit 2; }
for pair in fio:fio nbdkit:nbdkit nbdinfo:libnbd-bin jq:jq java:openjdk-17-jdk-headless python3:python3; do
    command -v "${pair%%:*}" >/dev/null || { echo "compare: ${pair%%:*} missing; install the Debian package '${pair#*:}'" >&2; exit 1; }
done
for spec in "$@"; do
    [ -x "${spec%%|*}/bin/strata" ] || { echo "compare: '${spec%%|*}' is not a built distribution (no bin/strata)" >&2; exit 2; }
done
export BENCH_REGION=${BENCH_REGION:-2G} BENCH_IO=${BENCH_IO:-2G} BENCH_RUNTIME=${BENCH_RUNTIME:-15}
# size of every image file (BENCH_IMG_SIZE): with --wb each distribution needs three, and a
# fresh cache file per run; writeboost's must hold what one run writes
img=${BENCH_IMG_SIZE:-4G}
tmp=$(mktemp -d "${BENCH_TMPDIR:-/var/tmp}/strata-compare.XXXXXX") || exit 1
hz=$(getconf CLK_TCK)
names=() uris=() pgids=() owner=() consoles=() wbport=() wbgen=() wbc=()
cleanup() {
    local p i
    for p in "${pgids[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
    for ((i = 0; i < 100; i++)); do
        local alive=0
        for p in "${pgids[@]}"; do kill -0 -- "-$p" 2>/dev/null && alive=1; done
        [ $alive -eq 0 ] && break
        sleep 0.1
    done
    for p in "${pgids[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# console I LINE: runs LINE in distribution I's shell and waits (up to 5 min) until it is done;
# non-zero, with the output, if the shell reported an error
seq=0
console() {
    local i=$1 log=$tmp/strata$1.log start t
    seq=$((seq + 1))
    start=$(stat -c %s "$log" 2>/dev/null || echo 0)
    printf '%s\necho DONE%sX\n' "$2" "$seq" >&"${consoles[$i]}"
    for ((t = 0; t < 3000; t++)); do
        if tail -c "+$((start + 1))" "$log" | grep -q "DONE${seq}X"; then
            if tail -c "+$((start + 1))" "$log" | grep -v "DONE${seq}X" | grep -qE '(^|[>!] )(gogo: |error: )'; then
                echo "compare: strata$i: '$2' failed:" >&2; tail -c "+$((start + 1))" "$log" | head -n 5 >&2
                return 1
            fi
            return 0
        fi
        sleep 0.1
    done
    echo "compare: strata$i did not answer '$2'; its log:" >&2; tail -n 20 "$log" >&2
    return 1
}
# wb_fresh I: replaces distribution I's writeboost device by a new, empty one (new cache file)
# over the same backing file, exported as 'wb' (writeback_threshold=0: nothing is written back
# while measuring; removing the old device then has no writeback to wait for)
wb_fresh() {
    local i=$1 g=$((${wbgen[$1]:-0} + 1))
    if [ "$g" -gt 1 ]; then
        console "$i" "nbd:unexport wb ; dev:remove --force wb ; dev:remove wbcache" || return 1
        rm -f "$tmp/wbcache$i-$((g - 1)).img"
    fi
    wbgen[$i]=$g
    fallocate -l "$img" "$tmp/wbcache$i-$g.img"
    console "$i" "dev:create wbcache ${wbc[$i]} path=$tmp/wbcache$i-$g.img ; dev:create wb writeboost backing=wbback cache=wbcache format=true writeback_threshold=0 ; nbd:export wb --name wb --bind 127.0.0.1 --port ${wbport[$i]}"
}
free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 30000))
        [ -z "$(ss -Htln "sport = :$p" 2>/dev/null)" ] && { echo "$p"; return; }
    done
}
# sum of utime+stime (+ reaped children) of every process in group $1, in clock ticks
cpu_ticks() {
    cat /proc/[0-9]*/stat 2>/dev/null | awk -v g="$1" '
        { line = $0; sub(/^[0-9]+ \(.*\) /, "", line); split(line, f, " ");
          if (f[3] == g) t += f[12] + f[13] + f[14] + f[15] }
        END { printf "%d\n", t }'
}
i=0
for spec in "$@"; do
    i=$((i + 1))
    dist=${spec%%|*} opts="" wbc[$i]=${BENCH_WB_CACHE:-direct}
    if [[ "$spec" == *"|"* ]]; then
        opts=${spec#*|}
        if [[ "$opts" == *"|"* ]]; then wbc[$i]=${opts#*|}; opts=${opts%%|*}; fi
    fi
    home=$tmp/home$i port=$(free_port)
    cp -a "$dist" "$home"
    rm -f "$home"/deploy/*.cfg "$home"/deploy/*.config
    rm -rf "$home/felix-cache" "$home/var" && mkdir -p "$home/var"
    fallocate -l "$img" "$tmp/strata$i.img"
    mkfifo "$tmp/console$i"
    # the console reads commands from a FIFO held open here (read-write: the open never
    # blocks, the shell never sees EOF), so that --wb can build a fresh writeboost device
    # between runs; the JVM runs in its own session
    exec {fd}<>"$tmp/console$i"
    setsid env JAVA_OPTS="$opts" bash -c 'cd "$1" && STRATA_HOME="$1" exec bin/strata --no-default-stack <"$2"' _ "$home" "$tmp/console$i" \
        >"$tmp/strata$i.log" 2>&1 </dev/null &
    pgids+=($!) consoles[$i]=$fd
    console "$i" "dev:create sfile file path=$tmp/strata$i.img ; nbd:export sfile --name sfile --bind 127.0.0.1 --port $port" \
        || exit 1
    names+=("strata$i") uris+=("nbd://127.0.0.1:$port/sfile") owner+=($i)
    if [ $wb -eq 1 ]; then
        fallocate -l "$img" "$tmp/wbback$i.img"
        wbport[$i]=$(free_port)
        console "$i" "dev:create wbback file path=$tmp/wbback$i.img" || exit 1
        wb_fresh "$i" || exit 1
        pgids+=(${pgids[-1]}) names+=("wb$i") uris+=("nbd://127.0.0.1:${wbport[$i]}/wb") owner+=($i)
    fi
    echo "strata$i = $dist${opts:+ (JAVA_OPTS=$opts)}$([ $wb -eq 1 ] && echo ", wb$i cache driver ${wbc[$i]}")"
done
port=$(free_port)
fallocate -l "$img" "$tmp/nbdkit.img"
setsid nbdkit -f -i 127.0.0.1 -p "$port" file "$tmp/nbdkit.img" >"$tmp/nbdkit.log" 2>&1 </dev/null &
pgids+=($!) names+=(nbdkit) uris+=("nbd://127.0.0.1:$port/")
if [ $wb -eq 1 ]; then
    port=$(free_port)
    fallocate -l "$img" "$tmp/nbdkit-cache.img"
    setsid env TMPDIR="$tmp" nbdkit -f -i 127.0.0.1 -p "$port" --filter=cache file "$tmp/nbdkit-cache.img" \
        cache=writeback cache-min-block-size=4K >"$tmp/nbdkit-cache.log" 2>&1 </dev/null &
    pgids+=($!) names+=(nbdkit-cache) uris+=("nbd://127.0.0.1:$port/")
fi
# wait_answer K: waits until system K's export answers
wait_answer() {
    local k=$1 t log
    for ((t = 0; t < 600; t++)); do
        nbdinfo --size "${uris[$k]}" >/dev/null 2>&1 && return 0
        kill -0 "${pgids[$k]}" 2>/dev/null || break
        sleep 0.2
    done
    log=$tmp/${names[$k]}.log
    [ -n "${owner[$k]:-}" ] && log=$tmp/strata${owner[$k]}.log
    echo "compare: ${names[$k]} did not answer; its log:" >&2; tail -n 20 "$log" >&2
    return 1
}
for k in "${!uris[@]}"; do
    wait_answer "$k" || exit 1
done
for k in "${!uris[@]}"; do
    fio --ioengine=nbd --uri="${uris[$k]}" "$job" --output-format=terse >/dev/null 2>&1
done
echo "job $(basename "$job"), BENCH_REGION=$BENCH_REGION BENCH_IO=$BENCH_IO BENCH_RUNTIME=$BENCH_RUNTIME, $reps repetitions; load at start $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'system\tMiB/s\tCPU s/GiB\n'
for ((r = 1; r <= reps; r++)); do
    for k in "${!uris[@]}"; do
        if [[ "${names[$k]}" == wb* ]]; then
            wb_fresh "${owner[$k]}" || exit 1
            wait_answer "$k" || exit 1
        fi
        c0=$(cpu_ticks "${pgids[$k]}")
        if ! fio --ioengine=nbd --uri="${uris[$k]}" "$job" --output-format=json --output="$tmp/out.json" >"$tmp/fio.log" 2>&1; then
            echo "compare: fio failed on ${names[$k]}: $(tail -n 3 "$tmp/fio.log" | tr '\n' ' ')" >&2; exit 1
        fi
        c1=$(cpu_ticks "${pgids[$k]}")
        jq -r --arg n "${names[$k]}" --arg c "$((c1 - c0))" --arg hz "$hz" '.jobs[0] as $j
            | ($j.read.io_bytes + $j.write.io_bytes) as $b
            | [$n, (($j.read.bw_bytes + $j.write.bw_bytes) / 1048576 | floor),
               (($c | tonumber) / ($hz | tonumber) / ($b / 1073741824) * 1000 | floor / 1000)] | @tsv' "$tmp/out.json"
    done
done | tee "$tmp/runs.tsv"
echo "load at end $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$tmp/runs.tsv" <<'PY'
import collections, statistics, sys
bw, cpu = collections.defaultdict(list), collections.defaultdict(list)
for line in open(sys.argv[1]):
    n, b, c = line.split()
    bw[n].append(float(b)); cpu[n].append(float(c))
rb, rc = statistics.median(bw["nbdkit"]), statistics.median(cpu["nbdkit"])
print("median\tMiB/s\t(x nbdkit)\tCPU s/GiB\t(x nbdkit)")
for n in bw:
    b, c = statistics.median(bw[n]), statistics.median(cpu[n])
    print("%s\t%.0f\t%.2fx\t%.3f\t%.2fx" % (n, b, b / rb, c, c / rc))
if "nbdkit-cache" in bw:
    kb = statistics.median(bw["nbdkit-cache"])
    print("writeboost\tx own file export\tx nbdkit cache filter")
    for n in bw:
        if n.startswith("wb"):
            b = statistics.median(bw[n])
            print("%s\t%.2fx\t%.2fx" % (n, b / statistics.median(bw["strata" + n[2:]]), b / kb))
PY
