#!/usr/bin/env bash
# Live changes on a cache holding DIRTY of dirty data (issue 14), black box (not a test):
#   itests/bench/live/run.sh [--quick] [--dirty=MIB]
# Starts a private copy of distribution/target/strata (build it first: mvn -B -o -q -pl distribution
# -am package -DskipTests), with `file` devices in BENCH_TMPDIR (default /var/tmp, the local disk):
# disk1 (the slow device), ssd1, ssd2 (cache devices of DIRTY + headroom). Exports disk1 over NBD,
# then, while fio writes 4 KiB random blocks through the export at a fixed rate (fio's nbd
# engine, a latency log of the worst request per 10 ms), measures the longest request fio saw
# during each step, and outside it:
#   attach   cache:attach disk1 writeboost cache=ssd1 writeback_threshold=0
#   (fill: fio writes DIRTY of 16 KiB random blocks, so the cache holds DIRTY dirty)
#   copy     the reference: dd of ssd1's file to a scratch file of the same size (conv=fdatasync),
#            and of DIRTY of it, before the replace and again after it (same page-cache state)
#   replace  cache:replace disk1 cache=ssd2: its time, the bytes copied, the bytes written to the slow device
#            (disk1.file's io_written_bytes), the gate's pause (last_swap_pause_us)
#   mode     cache:mode disk1 writethrough (writes back DIRTY with the gate open)
#   detach   cache:detach disk1 (clean by now: only its final swap)
# Prints a table and writes result.txt (with uptime before and after) in
# itests/bench/target/live-DATE/. Full run (1 GiB dirty) ≈ 5–10 minutes here; --quick (128 MiB) ≈ 2.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
DIRTY_MIB=1024
RATE=500 # client writes per second during the steps (4 KiB each)
for a in "$@"; do
    case "$a" in
        --quick) DIRTY_MIB=128 ;;
        --dirty=*) DIRTY_MIB=${a#--dirty=} ;;
        *) echo "usage: $0 [--quick] [--dirty=MIB]" >&2; exit 2 ;;
    esac
done
BENCH_NAME=live
# shellcheck source=lib.sh
. "$HERE/lib.sh"
statnum() { # DEV KEY: a counter from dev:status --bytes
    cmd "dev:status --bytes $1"
    awk -v k="$2" '$1 == k { print $2; exit }' <<<"$OUT"
}
cmd "dev:create disk1 file path=$V/disk1.img size=${DISK_MIB}M create=true"
cmd "dev:create ssd1 file path=$V/ssd1.img size=${CACHE_MIB}M create=true"
cmd "dev:create ssd2 file path=$V/ssd2.img size=${CACHE_MIB}M create=true"
cmd "nbd:export --port $PORT disk1"
URI="nbd://127.0.0.1:$PORT/disk1"

ROWS=()
step() { # NAME LINE [TIMEOUT]
    local name=$1 line=$2 t0 t1
    client "$name"
    t0=$(now_ms); cmd "$line" "${3:-1800}"; t1=$(now_ms)
    stop_client
    read -r w o <<<"$(worst "$name" "$t0" "$t1")"
    local pause
    pause=$(grep -oE 'I/O paused [0-9.]+ (µs|ms)' <<<"$OUT" | tail -1 | sed 's/I\/O paused //' || true)
    ROWS+=("$name|$((t1 - t0)) ms|${pause:--}|$w ms|$o ms")
    echo "$name: $(grep -v '^$' <<<"$OUT" | tail -1)" | tee -a "$RUN/commands.txt"
}
UPTIME_BEFORE=$(uptime)

step attach "cache:attach disk1 writeboost cache=ssd1 writeback_threshold=0"
# the dirty data: random 16 KiB writes over the first DIRTY of disk1 (random: a sequential stream bypasses the cache)
fio --name=fill --ioengine=nbd --uri="$URI" --rw=randwrite --bs=16k --iodepth=16 --size=${DIRTY_MIB}M \
    --norandommap=0 --output-format=json --output="$RUN/fill.json" >/dev/null 2>"$RUN/fill.err"
cmd "cache:stats --all --bytes disk1"
DIRTY_BLOCKS=$(awk '$1 == "dirty_blocks" { print $2; exit }' <<<"$OUT")
echo "dirty blocks after the fill: $DIRTY_BLOCKS ($((DIRTY_BLOCKS * 4 / 1024)) MiB)" | tee -a "$RUN/commands.txt"

# the reference copy: ssd1's file, as the replace copies it (the whole device), with a final fdatasync
sync
t0=$(now_ms)
dd if="$V/ssd1.img" of="$TMP/copy.img" bs=1M conv=fdatasync status=none
COPY_MS=$(( $(now_ms) - t0 ))
t0=$(now_ms)
dd if="$V/ssd1.img" of="$TMP/copy1g.img" bs=1M count=$DIRTY_MIB conv=fdatasync status=none
COPY_DIRTY_MS=$(( $(now_ms) - t0 ))
rm -f "$TMP/copy.img" "$TMP/copy1g.img"

SLOW_BEFORE=$(statnum disk1.file io_written_bytes)
client replace
t0=$(now_ms); cmd "cache:replace disk1 cache=ssd2" 1800; t1=$(now_ms)
REPLACE_MS=$((t1 - t0))
stop_client
SLOW_AFTER=$(statnum disk1.file io_written_bytes)
read -r w o <<<"$(worst replace "$t0" "$t1")"
pause=$(grep -oE 'I/O paused [0-9.]+ (µs|ms)' <<<"$OUT" | tail -1 | sed 's/I\/O paused //' || true)
ROWS+=("replace|$REPLACE_MS ms|${pause:--}|$w ms|$o ms")
echo "replace: $(grep -v '^$' <<<"$OUT" | tail -1)" | tee -a "$RUN/commands.txt"
REPLACE_COPIED=$(grep -oE '[0-9.]+ [KMG]iB copied in [0-9]+ pass(es)?' <<<"$OUT" | tail -1 || true)
# the reference again, now that the replace has read ssd1 (the first dd may have read it from the
# disk and the replace then from the page cache): the same file, the same state
sync
t0=$(now_ms)
dd if="$V/ssd1.img" of="$TMP/copy1g.img" bs=1M count=$DIRTY_MIB conv=fdatasync status=none
COPY_DIRTY_AFTER_MS=$(( $(now_ms) - t0 ))
rm -f "$TMP/copy1g.img"

step mode "cache:mode disk1 writethrough"
step detach "cache:detach disk1"
UPTIME_AFTER=$(uptime)

{
    echo "# live changes with ${DIRTY_MIB} MiB dirty ($(date -u +%FT%TZ))"
    echo "uptime before: $UPTIME_BEFORE"
    echo "uptime after:  $UPTIME_AFTER"
    echo "nproc: $(nproc); java: $(java -version 2>&1 | head -1); files in ${BENCH_TMPDIR:-/var/tmp}"
    echo "cache devices: ${CACHE_MIB} MiB each; dirty after the fill: $DIRTY_BLOCKS blocks of 4 KiB; client: fio nbd randwrite 4k, ${RATE}/s, qd4"
    echo
    echo "| step | command time | gate closed (printed) | longest client request during it | longest outside it (same fio run) |"
    echo "|---|---|---|---|---|"
    for r in "${ROWS[@]}"; do echo "| ${r//|/ | } |"; done
    echo
    echo "replace: ${REPLACE_MS} ms (${REPLACE_COPIED:-?}); dd of the whole cache device (${CACHE_MIB} MiB): ${COPY_MS} ms (ratio $(awk -v a="$REPLACE_MS" -v b="$COPY_MS" 'BEGIN{printf "%.2f", a/b}')); dd of ${DIRTY_MIB} MiB before the replace: ${COPY_DIRTY_MS} ms (ratio $(awk -v a="$REPLACE_MS" -v b="$COPY_DIRTY_MS" 'BEGIN{printf "%.2f", a/b}')), after it: ${COPY_DIRTY_AFTER_MS} ms (ratio $(awk -v a="$REPLACE_MS" -v b="$COPY_DIRTY_AFTER_MS" 'BEGIN{printf "%.2f", a/b}'))"
    echo "bytes written to the slow device (disk1.file io_written_bytes) during the replace: $((SLOW_AFTER - SLOW_BEFORE))"
    echo "the replace's pause, part by part: $(grep -ho 'replace pause: .*' "$HOME_DIR/var/log/strata.log" | tail -1)"
} | tee "$RUN/result.txt"
printf 'exit\n' >&"$FD"
for _ in $(seq 1 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.2; done
echo "results: $RUN"
