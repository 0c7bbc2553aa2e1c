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
DIST=${STRATA_DIST:-$ROOT/distribution/target/strata}
[ -x "$DIST/bin/strata" ] || { echo "no distribution at $DIST: mvn -B -o -q -pl distribution -am package -DskipTests" >&2; exit 1; }
command -v fio >/dev/null || { echo "fio is not installed" >&2; exit 1; }
RUN="$ROOT/itests/bench/target/switch-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$RUN"
TMP=$(mktemp -d "${BENCH_TMPDIR:-/var/tmp}/strata-switch.XXXXXX")
HOME_DIR=$TMP/strata
cp -a "$DIST" "$HOME_DIR"
rm -f "$HOME_DIR"/deploy/*.cfg "$HOME_DIR"/deploy/*.config
rm -rf "$HOME_DIR/felix-cache" "$HOME_DIR/var"
mkdir -p "$HOME_DIR/var"
CACHE_MIB=$((DIRTY_MIB + DIRTY_MIB / 4 + 192))
DISK_MIB=$((DIRTY_MIB * 2 + 256))
PID=""
FIO_PID=""
cleanup() {
    [ -n "$FIO_PID" ] && kill "$FIO_PID" 2>/dev/null || true
    cp "$HOME_DIR/var/log/strata.log" "$RUN/strata-daemon.log" 2>/dev/null || true
    [ -n "$PID" ] && kill -- "-$PID" 2>/dev/null || true
    sleep 1
    [ -n "$PID" ] && kill -KILL -- "-$PID" 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT
now_ms() { date +%s%3N; }

FIFO=$TMP/in
mkfifo "$FIFO"
exec {FD}<>"$FIFO"
LOG=$RUN/strata.log
setsid bash -c 'cd "$1" && exec bin/strata --no-default-stack <"$2"' strata "$HOME_DIR" "$FIFO" >"$LOG" 2>&1 &
PID=$!
SEQ=0
OUT=""
cmd() { # LINE [TIMEOUT]: runs LINE in the shell and waits for it; its output in OUT
    local line=$1 limit=${2:-600} start marker
    SEQ=$((SEQ + 1)); marker="SWDONE${SEQ}X"
    start=$(stat -c %s "$LOG")
    printf '%s\necho %s\n' "$line" "$marker" >&"$FD"
    local deadline=$((SECONDS + limit))
    until tail -c "+$((start + 1))" "$LOG" | grep -qE "(^|[>!] )${marker}[[:space:]]*\$"; do
        kill -0 "$PID" 2>/dev/null || { echo "the Strata JVM exited; see $LOG" >&2; exit 1; }
        ((SECONDS < deadline)) || { echo "timed out: $line" >&2; exit 1; }
        sleep 0.05
    done
    OUT=$(tail -c "+$((start + 1))" "$LOG" | tr '\r' '\n' | grep -v "$marker" | sed -E 's/^([a-z]+[>!] )+//')
    if grep -qE '^(gogo: |error: )' <<<"$OUT"; then echo "failed: $line: $OUT" >&2; exit 1; fi
}
cmd "echo ready" 180
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
V=$HOME_DIR/var
cmd "dev:create disk1 file path=$V/disk1.img size=${DISK_MIB}M create=true"
cmd "dev:create ssd1 file path=$V/ssd1.img size=${CACHE_MIB}M create=true"
cmd "nbd:export --port $PORT disk1"
URI="nbd://127.0.0.1:$PORT/disk1"

client() { # STEP: fio in the background at RATE/s with a latency log (worst per 10 ms)
    fio --name="$1" --ioengine=nbd --uri="$URI" --rw=randwrite --bs=4k --iodepth=4 --rate_iops="$RATE" \
        --offset=$((DIRTY_MIB + 64))M --size=$((DIRTY_MIB / 8 + 32))M --time_based --runtime=3600 \
        --write_lat_log="$RUN/$1" --log_avg_msec=10 --log_max_value=1 --log_unix_epoch=1 \
        --output-format=json --output="$RUN/$1.json" >/dev/null 2>"$RUN/$1.err" &
    FIO_PID=$!
    sleep 3
}
stop_client() {
    sleep 2
    kill -INT "$FIO_PID"; wait "$FIO_PID" || true; FIO_PID=""
}
worst() { # STEP FROM TO: the longest request (ms) in [FROM,TO] and outside it
    cat "$RUN/$1"_lat.*.log | awk -F', *' -v a="$2" -v b="$3" '
        { ms = $2 / 1e6; if ($1 >= a - 10 && $1 <= b + 10) { if (ms > w) w = ms } else if (ms > o) o = ms }
        END { printf "%.1f %.1f", w, o }'
}
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
