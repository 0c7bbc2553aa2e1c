# shellcheck shell=bash
# The systems under test, except Strata (lib/strata.sh). Each system NAME has:
#   sys_NAME_up      start what it needs (idempotent)
#   sys_NAME_fresh   start over with an empty cache (no-op where there is no cache)
#   sys_NAME_target  print fio's target arguments
#   sys_NAME_pg      print the pgid whose CPU time is the system's (empty: none)
# SYS_NOTE[NAME] says why a system is not available, if it is not.

declare -A SYS_NOTE=()
declare -A SLOW_PORT=()

# --- the slow device ---------------------------------------------------------------------
# An nbdkit RAM disk that behaves like a 7200 rpm disk: requests one at a time, each one
# paying a fixed positioning delay, and a bandwidth cap (SLOW_RATE, bits/s, from
# BENCH_SLOW_RATE; none when it is 0 or empty).
slow_cmd() { # PORT
    local rate=()
    if [ -n "${SLOW_RATE:-}" ]; then rate=(--filter=rate); fi
    echo nbdkit -f --exit-with-parent -i 127.0.0.1 -p "$1" --filter=noparallel --filter=delay "${rate[@]}" \
        memory "$SLOW_SIZE" serialize=all-requests delay-read="$SLOW_DELAY" delay-write="$SLOW_DELAY" \
        ${SLOW_RATE:+rate=$SLOW_RATE burstiness=0.5}
}
# slow_start INSTANCE: (re)starts one slow-device server; each system over the slow device
# has its own identical instance so that one system's leftover writeback never steals
# another's disk time.
slow_start() {
    local inst=$1 tries port
    stop_server "slow-$inst"
    for ((tries = 0; tries < 5; tries++)); do
        pick_port; port=$PORT
        # shellcheck disable=SC2046
        start_server "slow-$inst" "$LOGS/slow-$inst.log" $(slow_cmd "$port")
        if wait_nbd "nbd://127.0.0.1:$port/" 20 "slow-$inst"; then
            SLOW_PORT[$inst]=$port
            prefill_nbd "nbd://127.0.0.1:$port/" "${SLOW_PREFILL:-}"
            return 0
        fi
        stop_server "slow-$inst"
    done
    die "the slow device (nbdkit) did not start; see $LOGS/slow-$inst.log"
}

# prefill_nbd URI BYTES: write the start of a new RAM-backed export once (BYTES, in 32 MiB
# requests: a few delays on the slow device), so that its RAM is allocated over the regions the
# workloads use: a never-written memory disk is much slower to write (page faults, sparse-array
# allocation), which would favour whichever instance happened to be written before, and would
# make an "NBD ceiling" measure the kernel's page allocator. Used for every slow-device instance
# and for both memory ceilings (nbdkit-memory, strata-memory).
prefill_nbd() {
    [ -n "${2:-}" ] || return 0
    timeout 600 fio --name=prefill --ioengine=nbd --uri="$1" --rw=write --bs=32m --iodepth=2 \
        --size="$2" >/dev/null 2>&1 || say "bench: pre-writing $1 failed (ignored)"
}

# start_nbd_server NAME URI_PATH CMD_WITH_@PORT@...: start a server on a fresh port, retrying
# with another port if it dies (e.g. the port was taken meanwhile). Sets PORT_OF[NAME].
declare -A PORT_OF=()
start_nbd_server() {
    local name=$1 path=$2; shift 2
    local tries port a args
    for ((tries = 0; tries < 5; tries++)); do
        pick_port; port=$PORT
        args=()
        for a in "$@"; do args+=("${a//@PORT@/$port}"); done
        start_server "$name" "$LOGS/$name.log" "${args[@]}"
        if wait_nbd "nbd://127.0.0.1:$port/$path" 30 "$name"; then
            PORT_OF[$name]=$port
            return 0
        fi
        stop_server "$name"
    done
    return 1
}

# --- (1) the physical limit --------------------------------------------------------------
sys_raw_fast_up() {
    [ -f "$DATA/fast.img" ] || fallocate -l "$FILE_SIZE" "$DATA/fast.img" 2>/dev/null \
        || truncate -s "$FILE_SIZE" "$DATA/fast.img"
}
sys_raw_fast_fresh() { :; }
sys_raw_fast_target() { echo "--ioengine=io_uring --direct=1 --filename=$DATA/fast.img"; }
sys_raw_fast_pg() { :; }

sys_raw_slow_up() { [ -n "${SLOW_PORT[raw]:-}" ] || slow_start raw; }
sys_raw_slow_fresh() { :; }
sys_raw_slow_target() { echo "--ioengine=nbd --uri=nbd://127.0.0.1:${SLOW_PORT[raw]}/"; }
sys_raw_slow_pg() { echo "${PGIDS[slow-raw]:-}"; }

# NBD's ceiling on this machine: nbdkit serving RAM, no delay, written once over the regions
# the workloads use (like the slow devices) before anything is measured.
sys_nbdkit_memory_up() {
    server_alive nbdkit-memory && return 0
    start_nbd_server nbdkit-memory "" nbdkit -f --exit-with-parent -i 127.0.0.1 -p @PORT@ memory "$FILE_SIZE" \
        || die "nbdkit memory did not start; see $LOGS/nbdkit-memory.log"
    prefill_nbd "nbd://127.0.0.1:${PORT_OF[nbdkit-memory]}/" "$MEM_PREFILL"
}
sys_nbdkit_memory_fresh() { :; }
sys_nbdkit_memory_target() { echo "--ioengine=nbd --uri=nbd://127.0.0.1:${PORT_OF[nbdkit-memory]}/"; }
sys_nbdkit_memory_pg() { echo "${PGIDS[nbdkit-memory]:-}"; }

# --- (4) peers ----------------------------------------------------------------------------
# Exports of a file on the local disk (the same kind of file Strata's `file`/`direct` export).
sys_nbdkit_file_up() {
    server_alive nbdkit-file && return 0
    [ -f "$DATA/nbdkit-file.img" ] || fallocate -l "$FILE_SIZE" "$DATA/nbdkit-file.img"
    start_nbd_server nbdkit-file "" nbdkit -f --exit-with-parent -i 127.0.0.1 -p @PORT@ file "$DATA/nbdkit-file.img" \
        || die "nbdkit file did not start; see $LOGS/nbdkit-file.log"
}
sys_nbdkit_file_fresh() { :; }
sys_nbdkit_file_target() { echo "--ioengine=nbd --uri=nbd://127.0.0.1:${PORT_OF[nbdkit-file]}/"; }
sys_nbdkit_file_pg() { echo "${PGIDS[nbdkit-file]:-}"; }

sys_qemu_nbd_up() {
    server_alive qemu-nbd && return 0
    [ -f "$DATA/qemu-nbd.img" ] || fallocate -l "$FILE_SIZE" "$DATA/qemu-nbd.img"
    start_nbd_server qemu-nbd q qemu-nbd -b 127.0.0.1 -p @PORT@ -x q -f raw -t -e 16 \
        --cache=none --aio=io_uring "$DATA/qemu-nbd.img" \
        || start_nbd_server qemu-nbd q qemu-nbd -b 127.0.0.1 -p @PORT@ -x q -f raw -t -e 16 \
            --cache=none --aio=native "$DATA/qemu-nbd.img" \
        || die "qemu-nbd did not start; see $LOGS/qemu-nbd.log"
}
sys_qemu_nbd_fresh() { :; }
sys_qemu_nbd_target() { echo "--ioengine=nbd --uri=nbd://127.0.0.1:${PORT_OF[qemu-nbd]}/q"; }
sys_qemu_nbd_pg() { echo "${PGIDS[qemu-nbd]:-}"; }

# nbdkit's cache filter in writeback mode over the slow device (nbd plugin). Its cache is
# a temporary file under TMPDIR, which we point at our data directory. Its default 64 KiB
# cache block makes every smaller write to an uncached block read the whole block from the
# slow device first; 4 KiB blocks (BENCH_NBDKIT_CACHE_ARGS to change) suit these workloads.
NBDKIT_CACHE_ARGS=${BENCH_NBDKIT_CACHE_ARGS-cache-min-block-size=4K}
sys_nbdkit_cache_up() { server_alive nbdkit-cache || sys_nbdkit_cache_fresh; }
sys_nbdkit_cache_fresh() {
    stop_server nbdkit-cache
    [ -n "${SLOW_PORT[nc]:-}" ] || slow_start nc
    rm -rf "$DATA/nbdkit-cache-tmp"
    mkdir -p "$DATA/nbdkit-cache-tmp"
    start_nbd_server nbdkit-cache "" env TMPDIR="$DATA/nbdkit-cache-tmp" \
        nbdkit -f --exit-with-parent -i 127.0.0.1 -p @PORT@ --filter=cache \
        nbd uri="nbd://127.0.0.1:${SLOW_PORT[nc]}/" cache=writeback $NBDKIT_CACHE_ARGS \
        || die "nbdkit cache filter did not start; see $LOGS/nbdkit-cache.log"
}
sys_nbdkit_cache_target() { echo "--ioengine=nbd --uri=nbd://127.0.0.1:${PORT_OF[nbdkit-cache]}/"; }
sys_nbdkit_cache_pg() { echo "${PGIDS[nbdkit-cache]:-}"; }
# Writeback of nbdkit's cache happens on FLUSH: time one flush from a client.
sys_nbdkit_cache_writeback() {
    bg_wait timeout 3600 qemu-io -f raw -c flush "nbd://127.0.0.1:${PORT_OF[nbdkit-cache]}/" >/dev/null 2>&1
}
