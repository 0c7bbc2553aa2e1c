#!/usr/bin/env bash
# Before/after of the NBD export path in one run: Strata's export of a `file` device from one or
# more built distributions (e.g. a copy of the distribution before a change and the current
# one) against `nbdkit file`, on the same fio job through fio's nbd engine, alternated
# (A B C, A B C, ...). Prints every run and the medians with the ratio to nbdkit, for MiB/s and
# for the server's CPU per GiB (utime+stime of its process group from /proc, as run.sh counts).
#
#   itests/bench/nbd/compare.sh [--reps N] [--job FILE.fio] DIST[|JAVA_OPTS] [DIST[|JAVA_OPTS] ...]
#
#   cp -a distribution/target/strata /var/tmp/strata-before     # before the change
#   ... change, mvn -B -q -DskipTests package ...
#   itests/bench/nbd/compare.sh --reps 7 /var/tmp/strata-before distribution/target/strata
#
# Defaults: 5 repetitions, jobs/seqwrite-1m.fio with BENCH_REGION=2G BENCH_IO=2G
# BENCH_RUNTIME=15 (the full run's sizes; override them in the environment). Each server gets a
# fallocated 4 GiB file under BENCH_TMPDIR (default /var/tmp); every server is written once by
# an unmeasured run of the job before the measured ones (the JIT compiles, the files' blocks
# are allocated). Everything started runs in its own session on 127.0.0.1 and is stopped, and
# the temp dir removed, when the script ends.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
reps=5
job=$here/../jobs/seqwrite-1m.fio
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) reps=${2:?--reps needs a number}; shift ;;
        --job) job=${2:?--job needs a fio job file}; shift ;;
        -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
tmp=$(mktemp -d "${BENCH_TMPDIR:-/var/tmp}/strata-compare.XXXXXX") || exit 1
hz=$(getconf CLK_TCK)
names=() uris=() pgids=()
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
    dist=${spec%%|*} opts=""
    [[ "$spec" == *"|"* ]] && opts=${spec#*|}
    home=$tmp/home$i port=$(free_port)
    cp -a "$dist" "$home"
    rm -f "$home"/deploy/*.cfg "$home"/deploy/*.config
    rm -rf "$home/felix-cache" "$home/var" && mkdir -p "$home/var"
    fallocate -l 4G "$tmp/strata$i.img"
    setsid env JAVA_OPTS="$opts" "$home/bin/strata" --no-default-stack --daemon \
        -c "dev:create sfile file path=$tmp/strata$i.img ; nbd:export sfile --name sfile --bind 127.0.0.1 --port $port" \
        >"$tmp/strata$i.log" 2>&1 </dev/null &
    pgids+=($!) names+=("strata$i") uris+=("nbd://127.0.0.1:$port/sfile")
    echo "strata$i = $dist${opts:+ (JAVA_OPTS=$opts)}"
done
port=$(free_port)
fallocate -l 4G "$tmp/nbdkit.img"
setsid nbdkit -f -i 127.0.0.1 -p "$port" file "$tmp/nbdkit.img" >"$tmp/nbdkit.log" 2>&1 </dev/null &
pgids+=($!) names+=(nbdkit) uris+=("nbd://127.0.0.1:$port/")
for k in "${!uris[@]}"; do
    ok=0
    for ((t = 0; t < 600; t++)); do
        if nbdinfo --size "${uris[$k]}" >/dev/null 2>&1; then ok=1; break; fi
        kill -0 "${pgids[$k]}" 2>/dev/null || break
        sleep 0.2
    done
    [ $ok -eq 1 ] || { echo "compare: ${names[$k]} did not answer; its log:" >&2; tail -n 20 "$tmp/${names[$k]}.log" >&2; exit 1; }
done
for k in "${!uris[@]}"; do
    fio --ioengine=nbd --uri="${uris[$k]}" "$job" --output-format=terse >/dev/null 2>&1
done
echo "job $(basename "$job"), BENCH_REGION=$BENCH_REGION BENCH_IO=$BENCH_IO BENCH_RUNTIME=$BENCH_RUNTIME, $reps repetitions; load at start $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'system\tMiB/s\tCPU s/GiB\n'
for ((r = 1; r <= reps; r++)); do
    for k in "${!uris[@]}"; do
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
PY
