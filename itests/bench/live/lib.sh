# Shared by run.sh and switch.sh (sourced, not run): a copy of the built distribution started with
# its console on a FIFO, `cmd` to run a shell line and wait for it, and the fio client whose
# latency log gives the longest request during a step. The caller sets DIRTY_MIB, RATE and
# BENCH_NAME (the result directory's and the temporary directory's prefix) before sourcing.
DIST=${STRATA_DIST:-$ROOT/distribution/target/strata}
[ -x "$DIST/bin/strata" ] || { echo "no distribution at $DIST: mvn -B -o -q -pl distribution -am package -DskipTests" >&2; exit 1; }
command -v fio >/dev/null || { echo "fio is not installed" >&2; exit 1; }
RUN="$ROOT/itests/bench/target/${BENCH_NAME}-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$RUN"
TMP=$(mktemp -d "${BENCH_TMPDIR:-/var/tmp}/strata-${BENCH_NAME}.XXXXXX")
HOME_DIR=$TMP/strata
cp -a "$DIST" "$HOME_DIR"
rm -f "$HOME_DIR"/deploy/*.cfg "$HOME_DIR"/deploy/*.config
rm -rf "$HOME_DIR/felix-cache" "$HOME_DIR/var"
mkdir -p "$HOME_DIR/var"
CACHE_MIB=$((DIRTY_MIB + DIRTY_MIB / 4 + 192)) # the dirty data, the clients' writes during the steps, metadata
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
# cmd LINE [TIMEOUT]: runs LINE in the shell and waits for it; its output in OUT
cmd() {
    local line=$1 limit=${2:-600} start marker
    SEQ=$((SEQ + 1)); marker="BENCHDONE${SEQ}X"
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

# client STEP: fio in the background, writing at RATE/s with a latency log (worst per 10 ms)
client() {
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
# worst STEP FROM TO: the longest request (ms) in [FROM,TO] and outside it, from STEP's latency log
worst() {
    cat "$RUN/$1"_lat.*.log | awk -F', *' -v a="$2" -v b="$3" '
        { ms = $2 / 1e6; if ($1 >= a - 10 && $1 <= b + 10) { if (ms > w) w = ms } else if (ms > o) o = ms }
        END { printf "%.1f %.1f", w, o }'
}
