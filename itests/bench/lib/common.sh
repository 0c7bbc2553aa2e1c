# shellcheck shell=bash
# Shared machinery of the benchmark suite: logging, processes we start (and only those),
# free ports on 127.0.0.1, CPU accounting from /proc, running one fio job and recording it.
# Sourced by run.sh; expects BENCH_TMP, RESULTS and STATE_DIR to be set.

say() { printf '%s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }
now_ms() { date +%s%3N; }

# --- processes -------------------------------------------------------------------------
# Every server runs in its own session (setsid), so its pid is its process-group id and
# stopping it stops its children too (bin/strata's JVM, qemu-nbd's helpers), and nothing
# else. The group ids are also written to a file that the watchdog reads if run.sh itself
# is killed with SIGKILL.
declare -A PGIDS=()  # name -> pgid

# start_server NAME LOGFILE CMD...: start CMD in a new session; prints nothing; sets PGIDS[NAME]
start_server() {
    local name=$1 log=$2; shift 2
    setsid "$@" >"$log" 2>&1 </dev/null &
    local pid=$!
    PGIDS[$name]=$pid
    echo "$pid" >>"$STATE_DIR/pgids"
}

server_alive() { local p=${PGIDS[$1]:-}; [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

# stop_server NAME [SIGNAL]: TERM (or SIGNAL) to the group, KILL after 10 s, reap.
stop_server() {
    local name=$1 sig=${2:-TERM} p=${PGIDS[$1]:-} i
    [ -n "$p" ] || return 0
    kill -s "$sig" -- "-$p" 2>/dev/null || kill -s "$sig" "$p" 2>/dev/null
    for ((i = 0; i < 100; i++)); do
        kill -0 -- "-$p" 2>/dev/null || break
        sleep 0.1
    done
    kill -s KILL -- "-$p" 2>/dev/null
    { wait "$p"; } 2>/dev/null  # (the braces keep bash's "Killed" job notice quiet)
    unset "PGIDS[$name]"
    sed -i "/^$p\$/d" "$STATE_DIR/pgids" 2>/dev/null
    return 0
}

# stop_all_servers: TERM to every group at once, up to 10 s for all of them, then KILL.
stop_all_servers() {
    local n p i alive
    for n in "${!PGIDS[@]}"; do
        p=${PGIDS[$n]}
        kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null
    done
    for ((i = 0; i < 100; i++)); do
        alive=0
        for n in "${!PGIDS[@]}"; do kill -0 -- "-${PGIDS[$n]}" 2>/dev/null && alive=1; done
        [ $alive -eq 0 ] && break
        sleep 0.1
    done
    for n in "${!PGIDS[@]}"; do stop_server "$n" KILL; done
}

# --- ports -----------------------------------------------------------------------------
declare -A USED_PORTS=()
port_in_use() {
    if command -v ss >/dev/null 2>&1; then
        [ -n "$(ss -Htln "sport = :$1" 2>/dev/null)" ] && return 0
    fi
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}
# pick_port: sets PORT to a port on 127.0.0.1 that nothing listens on and that this run has
# not handed out (call it in the main shell, not in $(...), so the hand-out is remembered).
# It draws from BENCH_PORT_BASE (default 20000) .. BENCH_PORT_BASE + BENCH_PORT_RANGE - 1
# (default 30000 ports).
PORT=""
pick_port() {
    local p i
    for ((i = 0; i < 500; i++)); do
        p=$((${BENCH_PORT_BASE:-20000} + RANDOM % ${BENCH_PORT_RANGE:-30000}))
        [ -n "${USED_PORTS[$p]:-}" ] && continue
        port_in_use "$p" && continue
        USED_PORTS[$p]=1
        PORT=$p
        return 0
    done
    die "no free port found on 127.0.0.1"
}

# wait_nbd URI DEADLINE_S [NAME]: until an NBD handshake with URI succeeds. Fails early if
# the server NAME has died.
wait_nbd() {
    local uri=$1 deadline=$(($(date +%s) + $2)) name=${3:-}
    while [ "$(date +%s)" -lt "$deadline" ]; do
        if timeout 5 nbdinfo --size "$uri" >/dev/null 2>&1; then return 0; fi
        if [ -n "$name" ] && ! server_alive "$name"; then return 1; fi
        sleep 0.1
    done
    return 1
}

# --- CPU accounting ----------------------------------------------------------------------
CLK_TCK=$(getconf CLK_TCK)
# group_cpu_ticks PGID: user+system clock ticks of every live process in the group
# (fields 14 and 15 of /proc/PID/stat, plus 16 and 17 for reaped children).
group_cpu_ticks() {
    local g=$1
    [ -n "$g" ] || { echo 0; return; }
    cat /proc/[0-9]*/stat 2>/dev/null | awk -v g="$g" '
        { line = $0; sub(/^[0-9]+ \(.*\) /, "", line); n = split(line, f, " ");
          if (f[3] == g) t += f[12] + f[13] + f[14] + f[15] }
        END { printf "%d\n", t }'
}
# --- recording -------------------------------------------------------------------------
# record WORKLOAD SYSTEM REP MIBS IOPS P99_US CPU_S BYTES SECONDS NOTE
record() {
    local IFS=$'\t'
    echo "$*" >>"$RESULTS/raw.tsv"
}

RUN_NO=0
RUN_TOTAL=0
RUN_T0=$(date +%s)
progress() {
    local el=$(($(date +%s) - RUN_T0)) eta=""
    if [ "$RUN_NO" -gt 0 ] && [ "$RUN_TOTAL" -ge "$RUN_NO" ]; then
        eta=" eta $(((el * (RUN_TOTAL - RUN_NO)) / RUN_NO / 60))m$(((el * (RUN_TOTAL - RUN_NO)) / RUN_NO % 60))s"
    fi
    printf '[%3d/%3d %2dm%02ds%s] %s\n' "$RUN_NO" "$RUN_TOTAL" $((el / 60)) $((el % 60)) "$eta" "$*" >&2
}

# bg_wait CMD...: run CMD in the background and wait for it in this shell. A trapped signal
# (Ctrl-C) interrupts `wait` at once, whereas a foreground child that catches SIGINT (fio
# does) would make bash carry on with the next command. BG_PID is killed by cleanup.
BG_PID=""
bg_wait() {
    "$@" &
    BG_PID=$!
    wait "$BG_PID"
    local rc=$?
    BG_PID=""
    return $rc
}

# run_fio_job OUT_JSON PGID JOBFILE TARGET_ARGS... : runs fio with the job's env already
# exported; sets FIO_RESULT="mibs iops p99_us cpu_s bytes seconds" or returns non-zero.
# Must run in the main shell (not in $(...)) so that Ctrl-C stops it.
FIO_RESULT=""
run_fio_job() {
    local out=$1 pg=$2 job=$3; shift 3
    local c0 c1 t0 t1 rc
    FIO_RESULT=""
    c0=$(group_cpu_ticks "$pg"); t0=$(now_ms)
    bg_wait fio --output-format=json --output="$out" "$@" "$job" >"$out.log" 2>&1
    rc=$?
    t1=$(now_ms); c1=$(group_cpu_ticks "$pg")
    if [ $rc -ne 0 ] || ! jq -e '.jobs[0]' "$out" >/dev/null 2>&1; then
        say "bench: fio failed (rc=$rc) for $job $*: $(tail -n 3 "$out.log" | tr '\n' ' ')"
        return 1
    fi
    FIO_RESULT=$(jq -r --arg cpu "$(awk -v a="$c0" -v b="$c1" -v hz="$CLK_TCK" 'BEGIN{printf "%.3f", (b-a)/hz}')" \
          --arg secs "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", (b-a)/1000}')" '
        .jobs[0] as $j
        | ([$j.read, $j.write] | map(select(.total_ios > 0))) as $d
        | [ ((($j.read.bw_bytes + $j.write.bw_bytes) / 1048576) * 100 | round / 100),
            (($j.read.iops + $j.write.iops) | round),
            ([$d[] | .clat_ns.percentile["99.000000"] // 0] | max // 0 | . / 1000 | round),
            $cpu,
            ($j.read.io_bytes + $j.write.io_bytes),
            $secs ] | @tsv' "$out")
}
