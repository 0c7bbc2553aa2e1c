# shellcheck shell=bash
# Strata as a system under test: one JVM from a private copy of the distribution, driven
# through its Gogo shell on a FIFO (so devices can be rebuilt between repetitions without a
# restart), hosting four exports:
#   strata-memory  `memory` device (RAM), written once       (compare: nbdkit memory; the 2nd ceiling)
#   strata-file    `file` device on the local disk          (compare: nbdkit file)
#   strata-direct  `direct` device (O_DIRECT)                (compare: qemu-nbd --cache=none)
#   strata-wb      `writeboost` over the slow device (imported with the `nbd` target),
#                  cache = a `file` device on the local disk (compare: nbdkit cache filter)

STRATA_DIST=${STRATA_DIST:-$ROOT/distribution/target/strata}
STRATA_HOME=""
STRATA_FD=""
STRATA_SEQ=0
STRATA_NOTE=""
declare -A STRATA_PORT=()

# strata_available: the distribution is built and has the commands we need; sets STRATA_NOTE.
strata_available() {
    [ -n "$STRATA_NOTE" ] && return 1
    if [ ! -x "$STRATA_DIST/bin/strata" ]; then
        STRATA_NOTE="not available: no distribution at ${STRATA_DIST#"$ROOT"/} (the dist work is not on this branch)"
        return 1
    fi
    return 0
}

strata_prepare_home() {
    STRATA_HOME=$BENCH_TMP/strata-home
    rm -rf "$STRATA_HOME"
    cp -a "$STRATA_DIST" "$STRATA_HOME"
    # A private, empty stack: no shipped default devices or exports (they would bind the
    # default port 10809 and create files), no state from an earlier run.
    rm -f "$STRATA_HOME"/deploy/*.cfg "$STRATA_HOME"/deploy/*.config
    rm -rf "$STRATA_HOME/felix-cache" "$STRATA_HOME/var" "$STRATA_HOME/data"
    mkdir -p "$STRATA_HOME/var"
}

# strata_start: start the JVM with its shell reading our FIFO; wait until it answers.
strata_start() {
    local fifo=$STATE_DIR/strata.in
    [ -p "$fifo" ] || mkfifo "$fifo"
    # Read-write open never blocks; keeps the FIFO open so the shell never sees EOF.
    [ -n "$STRATA_FD" ] || exec {STRATA_FD}<>"$fifo"
    start_server strata "$LOGS/strata.log" env STRATA_HOME="$STRATA_HOME" \
        bash -c 'cd "$STRATA_HOME" && exec bin/strata --no-default-stack <"$1"' strata "$fifo"
    strata_cmd "echo ready" 180 || { STRATA_NOTE="not available: the Strata shell did not answer (see $LOGS/strata.log)"; return 1; }
}

# strata_cmd LINE [TIMEOUT_S]: run LINE in the shell, wait for it to finish. Non-zero if the
# shell printed an error for it or did not finish in time. Its output is in STRATA_OUT.
STRATA_OUT=""
strata_cmd() {
    local line=$1 limit=${2:-120} marker start t0 i=0
    t0=$(now_ms)
    STRATA_SEQ=$((STRATA_SEQ + 1))
    marker="BENCHDONE${STRATA_SEQ}X"
    start=$(stat -c %s "$LOGS/strata.log")
    printf '%s\necho %s\n' "$line" "$marker" >&"$STRATA_FD"
    local deadline=$((SECONDS + limit))
    # The shell prints its prompt ("strata> ") before each result; input is not echoed.
    while ! tail -c "+$((start + 1))" "$LOGS/strata.log" | grep -qE "(^|[>!] )${marker}[[:space:]]*\$"; do
        if ((++i % 10 == 0)); then
            if ! server_alive strata; then STRATA_OUT="the Strata JVM exited"; return 1; fi
            if ((SECONDS >= deadline)); then STRATA_OUT="timed out after ${limit}s: $line"; return 1; fi
        fi
        sleep 0.04
    done
    STRATA_OUT=$(tail -c "+$((start + 1))" "$LOGS/strata.log" | tr -d '\r' | grep -v "$marker" | sed -E 's/^([a-z]+[>!] )+//')
    printf '%s\t%6d ms\t%s\t%s\n' "$(date -u +%T)" $(($(now_ms) - t0)) "$line" "$(head -n 1 <<<"$STRATA_OUT")" >>"$LOGS/strata-commands.log"
    # The shell reports a failed command as "gogo: SomeException: message".
    if grep -qE '^(gogo: |error: )' <<<"$STRATA_OUT"; then
        return 1
    fi
    return 0
}

strata_must() { # LINE [TIMEOUT]: strata_cmd or die with its output
    strata_cmd "$@" || die "Strata command failed: $1: $(head -c 400 <<<"$STRATA_OUT")"
}

# strata_export DEV NAME: export DEV over NBD on a free port; sets STRATA_PORT[NAME].
strata_export() {
    local dev=$1 name=$2 tries port
    for ((tries = 0; tries < 5; tries++)); do
        pick_port; port=$PORT
        if strata_cmd "nbd:export $dev --name $name --bind 127.0.0.1 --port $port" \
            && wait_nbd "nbd://127.0.0.1:$port/$name" 30 strata; then
            STRATA_PORT[$name]=$port
            return 0
        fi
    done
    die "nbd:export $dev failed: $(head -c 400 <<<"$STRATA_OUT")"
}

strata_up() {
    strata_available || return 1
    server_alive strata && return 0
    strata_prepare_home
    strata_start || return 1
    [ -f "$DATA/strata-file.img" ] || fallocate -l "$FILE_SIZE" "$DATA/strata-file.img"
    [ -f "$DATA/strata-direct.img" ] || fallocate -l "$FILE_SIZE" "$DATA/strata-direct.img"
    strata_must "dev:create sfile file path=$DATA/strata-file.img"
    strata_export sfile sfile
    # Strata's own NBD ceiling: its export of a RAM device, written once like nbdkit-memory
    if ! in_run strata-memory; then
        :
    elif strata_cmd "dev:create smem memory size=$FILE_SIZE"; then
        strata_export smem smem
        prefill_nbd "nbd://127.0.0.1:${STRATA_PORT[smem]}/smem" "$MEM_PREFILL"
    else
        SYS_NOTE[strata-memory]="not available: dev:create memory failed: $(head -c 200 <<<"$STRATA_OUT")"
    fi
    if strata_cmd "dev:create sdirect direct path=$DATA/strata-direct.img"; then
        strata_export sdirect sdirect
    else
        SYS_NOTE[strata-direct]="not available: dev:create direct failed: $(head -c 200 <<<"$STRATA_OUT")"
    fi
    # (the writeboost stack imports its own slow device: only when this run measures it)
    if in_run strata-wb; then
        strata_wb_create || SYS_NOTE[strata-wb]="not available: $(head -c 300 <<<"$STRATA_OUT")"
    fi
    return 0
}

STRATA_WB_ARGS=${STRATA_WB_ARGS:-}
# The writeboost system is a stack of generation N: an import `slowN` (nbd target) of the
# writeboost slow device, cache device `wbcacheN` (a file through the $WB_CACHE driver), writeboost `wbN`, exported as `wb`.
# "fresh" retires the current generation and builds the next one. Removing a writeboost
# device waits for the writeback batch it has in flight to the slow device (at 5 ms per
# request, seconds), so the retired device is removed in the background (Gogo's `&`) while
# the other systems run, and reaped (waited for) before the next generation is built.
WB_GEN=0
WB_PENDING=()  # retired generations whose removal was started in the background
WB_LIVE=0      # 1 while generation WB_GEN is exported

strata_wb_create() { strata_wb_stack_create ""; }

# strata_wb_stack_create EXTRA_ARGS: builds generation WB_GEN+1 (EXTRA_ARGS: writeboost
# tunables for this generation only, e.g. writeback_threshold=0).
strata_wb_stack_create() {
    local extra=$1 g=$((WB_GEN + 1))
    WB_GEN=$g
    # one slow-device instance for every generation (like the other systems' slow devices, it
    # keeps what was written, so the memory behind it is allocated alike): a retired
    # generation is reaped before the next one runs, so none of its writeback is left then
    [ -n "${SLOW_PORT[wb]:-}" ] || slow_start wb
    rm -f "$DATA/wb-cache-$g.img"
    local cache_dev
    if [ "$WB_CACHE" = memory ]; then
        # a RAM cache device (BENCH_WB_CACHE=memory): writeboost's own write path, no disk under it
        cache_dev="memory size=$CACHE_SIZE"
    else
        # allocated like the other systems' files (strata-direct.img, fast.img): the direct driver's
        # create=true leaves a sparse file, and two O_DIRECT writes in flight into its holes ran at
        # two thirds of one write's rate on ext4 (docs/benchmarks.md, issue 10's seventh session)
        fallocate -l "$CACHE_SIZE" "$DATA/wb-cache-$g.img"
        cache_dev="$WB_CACHE path=$DATA/wb-cache-$g.img size=$CACHE_SIZE create=true"
    fi
    # one line, three commands (each one a round trip through the shell; Gogo stops at the
    # first that fails and prints its error)
    strata_cmd "dev:create slow$g nbd uri=nbd://127.0.0.1:${SLOW_PORT[wb]}/ ; dev:create wbcache$g $cache_dev ; dev:create wb$g writeboost backing=slow$g cache=wbcache$g $STRATA_WB_ARGS $extra" 300 || return 1
    strata_export "wb$g" wb
    WB_LIVE=1
}

# strata_wb_retire: unexport the current generation and start removing it in the background.
strata_wb_retire() {
    [ "$WB_LIVE" -eq 1 ] || return 0
    local g=$WB_GEN
    WB_LIVE=0
    strata_cmd "nbd:unexport wb" 60
    strata_cmd "dev:remove --force wb$g &" 30
    WB_PENDING+=("$g")
}

# strata_wb_reap: wait for the background removals (deadline 10 min each), then remove the
# rest of those stacks (cache file device, import, cache file).
strata_wb_reap() {
    local g i
    for g in "${WB_PENDING[@]}"; do
        for ((i = 0; i < 6000; i++)); do
            strata_cmd "dev:list" 30 || break
            grep -qE "(^|[[:space:]])wb$g([[:space:]]|\$)" <<<"$STRATA_OUT" || break
            sleep 0.1
        done
        if grep -qE "(^|[[:space:]])wb$g([[:space:]]|\$)" <<<"$STRATA_OUT"; then
            strata_cmd "dev:remove --force wb$g" 600
        fi
        strata_cmd "dev:remove wbcache$g ; dev:remove slow$g" 60
        rm -f "$DATA/wb-cache-$g.img"
    done
    WB_PENDING=()
    return 0
}

# Strata's systems, in the same shape as lib/systems.sh.
strata_sys_up() { # SYSTEM
    strata_up || { SYS_NOTE[$1]=${SYS_NOTE[$1]:-$STRATA_NOTE}; return 1; }
    [ -z "${SYS_NOTE[$1]:-}" ]
}
sys_strata_memory_up() { strata_sys_up strata-memory; }
sys_strata_memory_fresh() { :; }
sys_strata_memory_target() { echo "--ioengine=nbd --uri=nbd://127.0.0.1:${STRATA_PORT[smem]}/smem"; }
sys_strata_memory_pg() { echo "${PGIDS[strata]:-}"; }

sys_strata_file_up() { strata_sys_up strata-file; }
sys_strata_file_fresh() { :; }
sys_strata_file_target() { echo "--ioengine=nbd --uri=nbd://127.0.0.1:${STRATA_PORT[sfile]}/sfile"; }
sys_strata_file_pg() { echo "${PGIDS[strata]:-}"; }

sys_strata_direct_up() { strata_sys_up strata-direct; }
sys_strata_direct_fresh() { :; }
sys_strata_direct_target() { echo "--ioengine=nbd --uri=nbd://127.0.0.1:${STRATA_PORT[sdirect]}/sdirect"; }
sys_strata_direct_pg() { echo "${PGIDS[strata]:-}"; }

sys_strata_wb_up() { strata_sys_up strata-wb; }
# sys_strata_wb_fresh [EXTRA_ARGS]: a new, empty writeboost stack (see strata_wb_retire).
sys_strata_wb_fresh() {
    [ "$WB_LIVE" -eq 0 ] || strata_wb_retire
    strata_wb_reap
    strata_wb_stack_create "${1:-}" || die "creating the writeboost device failed: $(head -c 400 <<<"$STRATA_OUT")"
}
sys_strata_wb_retire() { strata_wb_retire; }
sys_strata_wb_target() { echo "--ioengine=nbd --uri=nbd://127.0.0.1:${STRATA_PORT[wb]}/wb"; }
sys_strata_wb_pg() { echo "${PGIDS[strata]:-}"; }
sys_strata_wb_writeback() { strata_cmd "cache:writeback wb$WB_GEN" 3600; }

# Cold start: kill the JVM (as a power cut would: SIGKILL, nothing written on the way out),
# start it again from the same home, and time until the writeboost export answers.
# Sets COLD_SECS, COLD_READ (bytes read from the cache device since the start: its
# io_read_bytes in `dev:status`, counted by the device layer below writeboost) and
# COLD_ENGINE_READ (what writeboost's recovery logs as read). Runs in the main shell (never
# in $(...)): it replaces the JVM, whose group id cleanup must know.
COLD_SECS="" COLD_READ="" COLD_ENGINE_READ=""
strata_coldstart() {
    local t0 t1 port=${STRATA_PORT[wb]} log=$STRATA_HOME/var/log/strata.log off=0
    stop_server strata KILL
    [ -f "$log" ] && off=$(stat -c %s "$log")
    t0=$(now_ms)
    strata_start || return 1
    wait_nbd "nbd://127.0.0.1:$port/wb" 600 strata || return 1
    t1=$(now_ms)
    COLD_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", (b-a)/1000}')
    strata_cmd "dev:status wbcache$WB_GEN" || return 1
    COLD_READ=$(status_value io_read_bytes)
    COLD_ENGINE_READ=$(tail -c "+$((off + 1))" "$log" 2>/dev/null | grep -E " wb$WB_GEN: recovered " \
        | sed -nE 's/.* ([0-9]+) bytes read\).*/\1/p' | tail -n 1)
}

# strata_wait_durable_mark DEVICE SECONDS: waits until writeboost DEVICE has rewritten its
# superblock record (record_updates grows) after the last flush, at most SECONDS.
strata_wait_durable_mark() {
    local dev=$1 limit=$2 before now deadline
    strata_cmd "dev:status $dev" || return 1
    before=$(status_value record_updates)
    deadline=$((SECONDS + limit))
    while ((SECONDS < deadline)); do
        sleep 0.5
        strata_cmd "dev:status $dev" || return 1
        now=$(status_value record_updates)
        [ -n "$now" ] && [ "$now" != "$before" ] && return 0
    done
    return 1
}

# status_value KEY: the value of KEY in the `dev:status` output in STRATA_OUT
status_value() { awk -v k="$1" '$1 == k { print $2; exit }' <<<"$STRATA_OUT"; }
