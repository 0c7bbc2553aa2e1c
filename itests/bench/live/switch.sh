#!/usr/bin/env bash
# cache:switch onto the same cache device and cache:resize on a cache holding DIRTY of dirty data
# (issue 14), black box (not a test):
#   itests/bench/live/switch.sh [--quick] [--dirty=MIB]
# Starts a private copy of distribution/target/strata (build it first: mvn -B -o -q -pl distribution
# -am package -DskipTests), with `file` devices in BENCH_TMPDIR (default /var/tmp): disk1 (the slow
# device), ssd1 (the cache device, DIRTY + headroom). Exports disk1 over NBD; while fio writes 4 KiB
# random blocks through the export at a fixed rate (a latency log of the worst request per 10 ms)
# it measures the longest request fio saw during each step and outside it:
#   attach     cache:attach disk1 writeboost cache=ssd1 writeback_threshold=0
#   (fill: fio writes DIRTY of 16 KiB random blocks: the writeboost holds DIRTY dirty)
#   switch-wc  cache:switch disk1 writecache high_watermark=95 low_watermark=90  (same device: drain
#              DIRTY with the gate open, then the two short pauses around the format)
#   (fill again: the writecache holds what fits under its watermarks)
#   switch-rc  cache:switch disk1 readcache   (same device: drain, pauses)
#   grow       dev:reload ssd1 … size=+256M create=true, then cache:resize disk1 (readcache)
#   detach     cache:detach disk1
# Prints a table and writes result.txt (uptime before and after) in itests/bench/target/switch-DATE/.
# Full run (1 GiB dirty) ≈ 5–10 minutes here; --quick (128 MiB) ≈ 2.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
DIRTY_MIB=1024
RATE=500
for a in "$@"; do
    case "$a" in
        --quick) DIRTY_MIB=128 ;;
        --dirty=*) DIRTY_MIB=${a#--dirty=} ;;
        *) echo "usage: $0 [--quick] [--dirty=MIB]" >&2; exit 2 ;;
    esac
done
BENCH_NAME=switch
# shellcheck source=lib.sh
. "$HERE/lib.sh"
cmd "dev:create disk1 file path=$V/disk1.img size=${DISK_MIB}M create=true"
cmd "dev:create ssd1 file path=$V/ssd1.img size=${CACHE_MIB}M create=true"
cmd "nbd:export --port $PORT disk1"
URI="nbd://127.0.0.1:$PORT/disk1"

fill() {
    fio --name="fill$1" --ioengine=nbd --uri="$URI" --rw=randwrite --bs=16k --iodepth=16 --size=${DIRTY_MIB}M \
        --output-format=json --output="$RUN/fill$1.json" >/dev/null 2>"$RUN/fill$1.err"
    cmd "cache:stats --all --bytes disk1"
    DIRTY=$(awk '$1 == "dirty_blocks" { print $2; exit }' <<<"$OUT")
    echo "dirty blocks after fill $1: $DIRTY ($((DIRTY * 4 / 1024)) MiB)" | tee -a "$RUN/commands.txt"
}
ROWS=()
step() { # NAME LINE [TIMEOUT]
    local name=$1 line=$2 t0 t1 pause
    client "$name"
    t0=$(now_ms); cmd "$line" "${3:-1800}"; t1=$(now_ms)
    stop_client
    read -r w o <<<"$(worst "$name" "$t0" "$t1")"
    pause=$(grep -oE 'I/O paused [0-9.]+ (µs|ms)' <<<"$OUT" | tail -1 | sed 's/I\/O paused //' || true)
    ROWS+=("$name|${DIRTY:-0}|$((t1 - t0)) ms|${pause:--}|$w ms|$o ms")
    echo "$name: $(grep -v '^$' <<<"$OUT" | tail -1)" | tee -a "$RUN/commands.txt"
}
UPTIME_BEFORE=$(uptime)
DIRTY=0
step attach "cache:attach disk1 writeboost cache=ssd1 writeback_threshold=0"
fill 1
step switch-wc "cache:switch disk1 writecache high_watermark=95 low_watermark=90"
fill 2
step switch-rc "cache:switch disk1 readcache"
DIRTY=0
cmd "dev:reload ssd1 file path=$V/ssd1.img size=$((CACHE_MIB + 256))M create=true"
step grow "cache:resize disk1"
step detach "cache:detach disk1"
UPTIME_AFTER=$(uptime)
{
    echo "# cache:switch on the same cache device, ${DIRTY_MIB} MiB filled ($(date -u +%FT%TZ))"
    echo "uptime before: $UPTIME_BEFORE"
    echo "uptime after:  $UPTIME_AFTER"
    echo "nproc: $(nproc); java: $(java -version 2>&1 | head -1); files in ${BENCH_TMPDIR:-/var/tmp}"
    echo "cache device: ${CACHE_MIB} MiB; client: fio nbd randwrite 4k, ${RATE}/s, qd4"
    echo
    echo "| step | dirty blocks before | command time | gate closed (printed: the longer pause) | longest client request during it | longest outside it (same fio run) |"
    echo "|---|---|---|---|---|---|"
    for r in "${ROWS[@]}"; do echo "| ${r//|/ | } |"; done
    echo
    grep -h "served by its backing device while" "$HOME_DIR/var/log/strata.log" | sed 's/^/log: /' || true
} | tee "$RUN/result.txt"
printf 'exit\n' >&"$FD"
for _ in $(seq 1 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.2; done
echo "results: $RUN"
