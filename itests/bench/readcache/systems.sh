# shellcheck shell=bash
# The read-cache systems of itests/bench/readcache/stack.sh, in the shape of lib/systems.sh
# (sys_NAME_up / _fresh / _target / _pg, and _warm where warming is by reading):
#   strata-rc         Strata `readcache` over the slow device (nbd target), cache = a file on
#                     the local disk; sequential_cutoff=0 so that the warm-up's sequential reads
#                     are promoted
#   strata-rcwb       Strata `writeboost` over `readcache` over the slow device: the stack of
#                     docs/readcache.md for a slow device ("Stacking under a write cache"):
#                     readcache write_promote=on readahead=64K, writeboost with the idle
#                     writeback controller and no writeback while the front end is busy
#                     (writeback.busy_kib_per_sec=0); each cache a file on the local disk
#   strata-rcwb-inv   the same stack with write_promote=off (writeback invalidates), for comparison
#   nbdkit-cache-cor  nbdkit's cache filter as lib/systems.sh runs it (cache-min-block-size=4K:
#                     readcache's block), plus cache-on-read=true (it then keeps what it read from
#                     the slow device, like a read cache)
#   nbdkit-cache-cor-dflt  the same at nbdkit's documented default block size (64K: the
#                     granularity of the stack's readahead); BENCH_NBDKIT_CACHE_DFLT_ARGS
# Each has its own instance of the slow device. Needs lib/common.sh, lib/systems.sh and
# lib/strata.sh sourced first.

RC_POLICY=${BENCH_RC_POLICY:-}
# readcache's readahead in the strata-rcwb* stacks (docs/readcache.md's recipe: 64K; 0: off)
RC_READAHEAD=${BENCH_RC_READAHEAD-64K}
# nbdkit-cache-cor-dflt's extra arguments (default none: nbdkit's own defaults, 64K blocks)
NBDKIT_CACHE_DFLT_ARGS=${BENCH_NBDKIT_CACHE_DFLT_ARGS-}
# readcache's block_size in every readcache stack (fixed at format; default: readcache's, 4096)
RC_BLOCK=${BENCH_RC_BLOCK:-}
# extra writeboost tunables of the strata-rcwb* stacks (e.g. writeback_threshold=0)
RCWB_WB_ARGS=${BENCH_RCWB_WB_ARGS-writeback.controller=idle}
# writeboost's cache size in the strata-rcwb* stacks (default: CACHE_SIZE, like the others); one
# smaller than the region makes hot blocks leave writeboost's log, where write_promote matters
RCWB_WB_SIZE=${BENCH_RCWB_WB_SIZE:-}
# settings made on the strata-rcwb* stacks' writeboost after creation, with cache:set (e.g. a
# writeback controller's own key: writeback.busy_kib_per_sec=0)
RCWB_WB_SET=${BENCH_RCWB_WB_SET-writeback.busy_kib_per_sec=0}

# strata_rc_stack KIND: creates the readcache stack KIND (rc, rcwb or rcwbi) once, exports it as KIND.
strata_rc_stack() {
    local kind=$1 cmd wp=""
    case "$kind" in rcwb) wp=" write_promote=on" ;; rcwbi) wp=" write_promote=off" ;; esac
    [ "$kind" = rc ] || wp="$wp${RC_READAHEAD:+ readahead=$RC_READAHEAD}"
    [ -n "${STRATA_PORT[$kind]:-}" ] && return 0
    [ -n "${SLOW_PORT[$kind]:-}" ] || slow_start "$kind"
    rm -f "$DATA/$kind-rc.img" "$DATA/$kind-wb.img"
    cmd="dev:create ${kind}slow nbd uri=nbd://127.0.0.1:${SLOW_PORT[$kind]}/"
    cmd="$cmd ; dev:create ${kind}rccache file path=$DATA/$kind-rc.img size=$CACHE_SIZE create=true"
    cmd="$cmd ; dev:create ${kind}rc readcache origin=${kind}slow cache=${kind}rccache${RC_POLICY:+ policy=$RC_POLICY}${RC_BLOCK:+ block_size=$RC_BLOCK}$wp"
    if [ "$kind" = rc ]; then
        cmd="$cmd sequential_cutoff=0"
        strata_cmd "$cmd" 300 || return 1
        strata_export rcrc rc
    else
        cmd="$cmd ; dev:create ${kind}wbcache file path=$DATA/$kind-wb.img size=${RCWB_WB_SIZE:-$CACHE_SIZE} create=true"
        cmd="$cmd ; dev:create ${kind}wb writeboost backing=${kind}rc cache=${kind}wbcache${RCWB_WB_ARGS:+ $RCWB_WB_ARGS}"
        [ -z "$RCWB_WB_SET" ] || cmd="$cmd ; cache:set ${kind}wb $RCWB_WB_SET"
        strata_cmd "$cmd" 300 || return 1
        strata_export "${kind}wb" "$kind"
    fi
}

sys_strata_rc_up() {
    strata_sys_up strata-rc || return 1
    strata_rc_stack rc || { SYS_NOTE[strata-rc]="not available: $(head -c 300 <<<"$STRATA_OUT")"; return 1; }
}
sys_strata_rc_fresh() { :; }
sys_strata_rc_target() { echo "--ioengine=nbd --uri=nbd://127.0.0.1:${STRATA_PORT[rc]}/rc"; }
sys_strata_rc_pg() { echo "${PGIDS[strata]:-}"; }
# warm_by_reading SYSTEM: a read cache is warmed by reading: the region once, sequentially, in
# 1 MiB requests (jobs/warm-read.fio, unmeasured)
warm_by_reading() {
    # shellcheck disable=SC2046
    BENCH_REGION=$READ_REGION run_fio_job "$RESULTS/json/warm-$1.json" "" "$RC_JOBS/warm-read.fio" $(sys_call "$1" target)
}
sys_strata_rc_warm() {
    warm_by_reading strata-rc || return 1
    strata_cmd "dev:status rcrc" && progress "strata-rc warmed: $(status_value cached_blocks) blocks cached, $(status_value promotions) promotions, $(status_value promotion_flushes) promotion flushes"
}

sys_strata_rcwb_up() {
    strata_sys_up strata-rcwb || return 1
    strata_rc_stack rcwb || { SYS_NOTE[strata-rcwb]="not available: $(head -c 300 <<<"$STRATA_OUT")"; return 1; }
}
sys_strata_rcwb_fresh() { :; }
sys_strata_rcwb_target() { echo "--ioengine=nbd --uri=nbd://127.0.0.1:${STRATA_PORT[rcwb]}/rcwb"; }
sys_strata_rcwb_pg() { echo "${PGIDS[strata]:-}"; }

sys_strata_rcwb_inv_up() {
    strata_sys_up strata-rcwb-inv || return 1
    strata_rc_stack rcwbi || { SYS_NOTE[strata-rcwb-inv]="not available: $(head -c 300 <<<"$STRATA_OUT")"; return 1; }
}
sys_strata_rcwb_inv_fresh() { :; }
sys_strata_rcwb_inv_target() { echo "--ioengine=nbd --uri=nbd://127.0.0.1:${STRATA_PORT[rcwbi]}/rcwbi"; }
sys_strata_rcwb_inv_pg() { echo "${PGIDS[strata]:-}"; }

# nbdkit_cache_cor NAME INSTANCE ARGS: (re)starts nbdkit's cache filter with cache-on-read over
# its own slow device
nbdkit_cache_cor() {
    local name=$1 inst=$2 args=$3
    stop_server "$name"
    [ -n "${SLOW_PORT[$inst]:-}" ] || slow_start "$inst"
    rm -rf "$DATA/$name-tmp"
    mkdir -p "$DATA/$name-tmp"
    # shellcheck disable=SC2086
    start_nbd_server "$name" "" env TMPDIR="$DATA/$name-tmp" \
        nbdkit -f --exit-with-parent -i 127.0.0.1 -p @PORT@ --filter=cache \
        nbd uri="nbd://127.0.0.1:${SLOW_PORT[$inst]}/" cache=writeback cache-on-read=true $args \
        || die "nbdkit cache filter (cache-on-read) did not start; see $LOGS/$name.log"
}
sys_nbdkit_cache_cor_up() { server_alive nbdkit-cache-cor || sys_nbdkit_cache_cor_fresh; }
sys_nbdkit_cache_cor_fresh() { nbdkit_cache_cor nbdkit-cache-cor ncr "$NBDKIT_CACHE_ARGS"; }
sys_nbdkit_cache_cor_target() { echo "--ioengine=nbd --uri=nbd://127.0.0.1:${PORT_OF[nbdkit-cache-cor]}/"; }
sys_nbdkit_cache_cor_pg() { echo "${PGIDS[nbdkit-cache-cor]:-}"; }
# nbdkit's cache keeps what it read (cache-on-read): warm it by reading too, like strata-rc
sys_nbdkit_cache_cor_warm() { warm_by_reading nbdkit-cache-cor; }
sys_nbdkit_cache_cor_dflt_up() { server_alive nbdkit-cache-cor-dflt || sys_nbdkit_cache_cor_dflt_fresh; }
sys_nbdkit_cache_cor_dflt_fresh() { nbdkit_cache_cor nbdkit-cache-cor-dflt ncd "$NBDKIT_CACHE_DFLT_ARGS"; }
sys_nbdkit_cache_cor_dflt_target() { echo "--ioengine=nbd --uri=nbd://127.0.0.1:${PORT_OF[nbdkit-cache-cor-dflt]}/"; }
sys_nbdkit_cache_cor_dflt_pg() { echo "${PGIDS[nbdkit-cache-cor-dflt]:-}"; }

# --- the slow device's requests -----------------------------------------------------------
# Every slow-device instance of this bench logs the requests it receives (nbdkit's log filter,
# outermost, so it sees what the system above sent: Strata's nbd target or nbdkit's nbd plugin),
# so that a run can count, per measurement, what each system asked of the serialized slow device:
# reads (its misses and fills), writes (writeback), flushes, and their sizes. Off with
# BENCH_SLOW_LOG=0. The log filter's cost (one line per request) is the same for every system
# and small next to the device's 5 ms per request.
SLOW_LOG=${BENCH_SLOW_LOG:-1}
if [ "$SLOW_LOG" = 1 ]; then
    eval "$(declare -f slow_cmd | sed '1s/^slow_cmd/slow_cmd_unlogged/')"
    slow_cmd() { # PORT
        local c
        c=$(slow_cmd_unlogged "$1")
        echo "${c/ --filter=noparallel / --filter=log --filter=noparallel }" logfile="$LOGS/slow-requests-$1.log"
    }
fi
# the slow-device instance of each system of this bench
declare -A SLOW_INST_OF=([strata-rc]=rc [strata-rcwb]=rcwb [strata-rcwb-inv]=rcwbi
    [nbdkit-cache-cor]=ncr [nbdkit-cache-cor-dflt]=ncd [strata-wb]=wb)
# slow_log SYSTEM: the request log of SYSTEM's slow device (empty if none or not logging)
slow_log() {
    local inst=${SLOW_INST_OF[$1]:-} f
    [ "$SLOW_LOG" = 1 ] && [ -n "$inst" ] && [ -n "${SLOW_PORT[$inst]:-}" ] || return 0
    f=$LOGS/slow-requests-${SLOW_PORT[$inst]}.log
    [ -f "$f" ] && echo "$f"
}
# slow_lines FILE: the number of lines logged so far
slow_lines() { [ -n "$1" ] && wc -l <"$1" || echo 0; }
# slow_counts FILE FROM TO: the requests logged in lines FROM+1..TO, as
# "reads read_bytes writes write_bytes flushes other": a request line is
# "... connection=N Read id=I offset=0x… count=0x… …" (its completion line starts with "...")
slow_counts() {
    [ -n "$1" ] || { echo "- - - - - -"; return; }
    # (mawk has no strtonum: the hex count is converted by hand)
    sed -n "$(($2 + 1)),$3p" "$1" | awk '
        function hex(s,   v, i) { v = 0; s = tolower(s)
            for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
            return v }
        { kind = ""; count = 0
          for (i = 1; i <= NF; i++) {
              if ($i ~ /^connection=/ && i < NF) kind = $(i + 1)
              if ($i ~ /^count=0x/) count = hex(substr($i, 9))
          } }
        kind == "Read" { r++; rb += count; next }
        kind == "Write" { w++; wb += count; next }
        kind == "Flush" { f++; next }
        kind == "Zero" || kind == "Trim" || kind == "Cache" || kind == "Extents" { o++ }
        END { printf "%d %d %d %d %d %d\n", r, rb, w, wb, f, o }'
}
