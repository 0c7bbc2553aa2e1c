# shellcheck shell=bash
# One benchmark run's session: a temp data dir on the local disk, the results dir, and the
# cleanup that stops every server the run started and removes the data however the run ends
# (EXIT, Ctrl-C, TERM; a watchdog if the script itself is SIGKILLed). Used by run.sh and
# readcache/stack.sh; needs lib/common.sh sourced first.

# bench_session TMP_PREFIX DEFAULT_OUT: sets BENCH_TMP, DATA, STATE_DIR, RESULTS, LOGS (OUT, if
# set, is where results go; else DEFAULT_OUT).
bench_session() {
    BENCH_TMP=$(mktemp -d "${BENCH_TMPDIR:-/var/tmp}/$1.XXXXXX") || exit 1
    CLEANED=0
    trap bench_cleanup EXIT
    trap 'say "bench: interrupted; stopping what was started"; exit 130' INT
    trap 'exit 143' TERM
    DATA=$BENCH_TMP/data
    STATE_DIR=$BENCH_TMP/state
    [ -n "${OUT:-}" ] || OUT=$2
    mkdir -p "$OUT" && RESULTS=$(cd "$OUT" && pwd) || exit 1
    LOGS=$RESULTS/logs
    mkdir -p "$DATA" "$STATE_DIR" "$RESULTS/json" "$LOGS"
    : >"$STATE_DIR/pgids"
    : >"$RESULTS/raw.tsv"
    # If the script is killed outright (SIGKILL), the watchdog still stops the servers and
    # removes the data; it ignores Ctrl-C (the trap above handles that).
    (
        trap '' INT TERM
        while kill -0 $$ 2>/dev/null; do sleep 1; done
        while read -r g; do kill -KILL -- "-$g" 2>/dev/null; done <"$STATE_DIR/pgids"
        rm -rf "$BENCH_TMP"
    ) >/dev/null 2>&1 &
    WATCHDOG=$!
}

bench_cleanup() {
    [ "$CLEANED" -eq 1 ] && return
    CLEANED=1
    trap '' INT TERM
    # fio catches SIGINT and can hang on a futex when a second signal lands while it stops:
    # give it 3 s, then SIGKILL (never a bare `wait`)
    if [ -n "${BG_PID:-}" ]; then
        kill -TERM "$BG_PID" 2>/dev/null
        local i
        for ((i = 0; i < 30; i++)); do kill -0 "$BG_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$BG_PID" 2>/dev/null
    fi
    stop_all_servers
    # Belt and braces: whatever group is still listed was started by us and not stopped.
    local g
    while read -r g; do
        [ -n "$g" ] && kill -KILL -- "-$g" 2>/dev/null
    done <"$STATE_DIR/pgids" 2>/dev/null
    [ -n "${STRATA_FD:-}" ] && exec {STRATA_FD}>&-
    rm -rf "$BENCH_TMP"
    [ -n "${WATCHDOG:-}" ] && kill -KILL "$WATCHDOG" 2>/dev/null
}

# --- the systems of a run (callers define ALL_WORKLOADS, SYSTEMS_OF, wanted and sys_NAME_*) ---
# in_run SYSTEM: whether a workload of this run measures SYSTEM
in_run() {
    local w
    for w in $ALL_WORKLOADS; do
        wanted "$w" && [[ " ${SYSTEMS_OF[$w]} " == *" $1 "* ]] && return 0
    done
    return 1
}
fn() { echo "${1//-/_}"; }  # system name -> function infix
sys_call() { local s=$1 op=$2; "sys_$(fn "$s")_$op"; }

declare -A UP_DONE=()
ensure_up() { # SYSTEM -> 0 if usable
    local s=$1
    [ -n "${SYS_NOTE[$s]:-}" ] && return 1
    if [ -z "${UP_DONE[$s]:-}" ]; then
        sys_call "$s" up || { SYS_NOTE[$s]=${SYS_NOTE[$s]:-"not available"}; return 1; }
        UP_DONE[$s]=1
    fi
    [ -z "${SYS_NOTE[$s]:-}" ]
}
