#!/usr/bin/env bash
# Strata benchmark suite: Strata side by side with the physical limit and its peers, in one
# run, on this machine. Usage:
#
#   itests/bench/run.sh [--quick] [--rebuild] [--only WORKLOAD[,WORKLOAD…]] [--reps N]
#                       [--systems SYSTEM[,SYSTEM…]] [--out DIR] [--no-docs]
#
# --quick    small sizes and short runs (under 10 minutes on 2 cores); default is the full run
# --rebuild  run `mvn -B -q -DskipTests package` even if a distribution is already built
# --no-build never build (Strata systems are "not available" if there is no distribution)
# --only     run only these workloads (names as in the table: randwrite-4k, randwrite-512k,
#            sweep, seqwrite-1m, seqwrite-64m, randread-4k, mix-zipf, writeback, coldstart)
# --reps N   repetitions per system and workload (default 3; medians are reported)
# --systems  measure only these systems (e.g. strata-file,nbdkit-file; a workload's reference
#            that is left out is simply missing from its ratios)
# --out DIR  where raw results go (fio JSON, logs, raw.tsv; default itests/bench/target/run-DATE)
# --no-docs  do not rewrite docs/benchmarks.md and docs/img/ (results stay in --out)
#
# Everything it starts (nbdkit, qemu-nbd, the Strata JVM) runs on 127.0.0.1 on ports that
# were free, and is stopped when the script ends, however it ends (Ctrl-C included);
# data files live in a temp dir on the local disk (BENCH_TMPDIR, default /var/tmp) that is
# removed at the end. Environment knobs: BENCH_TMPDIR, BENCH_SLOW_DELAY (default 5ms),
# BENCH_SLOW_RATE (bits/s cap on the slow device, nbdkit's binary units; default 1200M, about
# 150 MiB/s like a 7200 rpm disk; 0 for none), BENCH_WB_CACHE (the driver of writeboost's cache
# device: direct, the default, O_DIRECT like a cache on a raw SSD; or file, through the page
# cache as before 2026-12-01; or memory, a RAM device on the JVM heap, to see writeboost's own
# write path without a disk under it: give the JVM the heap, JAVA_OPTS=-Xmx14g), STRATA_DIST,
# STRATA_WB_ARGS (extra writeboost key=value arguments).
set -u
set -o pipefail
# The whole script is one compound command, so bash has read all of it before it runs any
# of it: editing this file during a run cannot derail the run.
{

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
JOBS=$HERE/jobs

QUICK=0 REBUILD=0 NOBUILD=0 ONLY="" REPS=3 OUT="" DOCS=1 ONLY_SYSTEMS=""
ARGS_GIVEN="$*"
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --rebuild) REBUILD=1 ;;
        --no-build) NOBUILD=1 ;;
        --only) ONLY=${2:?--only needs a list}; shift ;;
        --reps) REPS=${2:?--reps needs a number}; shift ;;
        --systems) ONLY_SYSTEMS=${2:?--systems needs a list}; shift ;;
        --out) OUT=${2:?--out needs a directory}; shift ;;
        --no-docs) DOCS=0 ;;
        -h|--help) sed -n '2,28p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
case "$REPS" in ''|*[!0-9]*|0) echo "bench: --reps needs a positive number" >&2; exit 2 ;; esac

# --- tools ---------------------------------------------------------------------------------
missing=0
need() { # COMMAND PACKAGE
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "bench: '$1' not found; install the Debian package '$2' (apt-get install $2)" >&2
        missing=1
    fi
}
need fio fio
need nbdkit nbdkit
need qemu-nbd qemu-utils
need qemu-io qemu-utils
need nbdinfo libnbd-bin
need jq jq
need java openjdk-17-jdk-headless
need setsid util-linux
need fallocate util-linux
[ $missing -eq 0 ] || exit 1
if ! fio --enghelp 2>/dev/null | grep -qw nbd; then
    echo "bench: this fio has no nbd engine; install Debian's 'fio' package (built with libnbd)" >&2; exit 1
fi
for p in memory file nbd; do
    nbdkit "$p" --version >/dev/null 2>&1 || { echo "bench: nbdkit has no '$p' plugin; install the Debian package 'nbdkit'" >&2; exit 1; }
done
for f in cache delay noparallel rate; do
    nbdkit --filter="$f" null --version >/dev/null 2>&1 || { echo "bench: nbdkit has no '$f' filter; install the Debian package 'nbdkit'" >&2; exit 1; }
done

# shellcheck source=lib/common.sh
. "$HERE/lib/common.sh"
# shellcheck source=lib/systems.sh
. "$HERE/lib/systems.sh"
# shellcheck source=lib/strata.sh
. "$HERE/lib/strata.sh"

# --- temp dir, cleanup, watchdog (lib/session.sh) ------------------------------------
# shellcheck source=lib/session.sh
. "$HERE/lib/session.sh"
bench_session strata-bench "$HERE/target/run-$(date -u +%Y%m%d-%H%M%S)"


# --- sizes -----------------------------------------------------------------------------------
SLOW_DELAY=${BENCH_SLOW_DELAY:-5ms}
# The slow device's bandwidth (bits/s; nbdkit reads 1200M as 1200 x 2^20): 1200M is about
# 150 MiB/s, a 7200 rpm disk's sequential rate. Without a cap, 32 MiB requests reach ~1.3 GB/s on
# a RAM disk with 5 ms per request, faster than any disk, and "as fast as the slow device
# alone" would measure the NBD hop in between instead of the cache's bypass.
SLOW_RATE=${BENCH_SLOW_RATE-1200M}
# writeboost's cache device driver. `direct` by default: through the page cache (`file`) every
# 1 MiB log write is copied once more by the kernel into pages never used before, and their
# writeback throttles the writer; profiled on 2026-12-01 the flusher's pwrite copy was a third of
# the server's CPU, and 4 KiB random writes cost over twice the CPU per request of a direct cache.
WB_CACHE=${BENCH_WB_CACHE:-direct}
case "$WB_CACHE" in direct|file|memory) ;; *) echo "bench: BENCH_WB_CACHE must be direct, file or memory, not '$WB_CACHE'" >&2; exit 2 ;; esac
case "$SLOW_RATE" in 0|none|off) SLOW_RATE="" ;; esac
if [ $QUICK -eq 1 ]; then
    MODE=quick
    SLOW_SIZE=1G FILE_SIZE=256M CACHE_SIZE=512M
    REGION=256M RUNTIME=1 READ_REGION=64M PREP_BS=16k
    IO_4K=16M IO_BIG=128M IO_SEQ=256M
    SWEEP_BS="16k 64k"
    WB_REGION=8M WB_IO=4M
    COLD_FILL=384M COLD_BS=64k
else
    MODE=full
    SLOW_SIZE=4G FILE_SIZE=4G CACHE_SIZE=4G
    REGION=2G RUNTIME=5 READ_REGION=512M PREP_BS=16k
    IO_4K=256M IO_BIG=1536M IO_SEQ=2G
    SWEEP_BS="4k 8k 16k 32k 64k"
    WB_REGION=32M WB_IO=16M
    COLD_FILL=3G COLD_BS=64k
fi

# The part of each slow device the workloads write (its RAM allocated before anything is measured).
# (in bytes: fio does not take numfmt's "2.0G")
SLOW_PREFILL=$(printf '%s\n' "$(numfmt --from=iec "$REGION")" "$(numfmt --from=iec "$IO_SEQ")" | sort -n | tail -n 1)
# The same for both memory ceilings (at most their size).
# the large-write warm-up's limits (warm_big, below)
WARM_QUIET_MS=${BENCH_WARM_QUIET_MS:-50}
WARM_MAX_RUNS=${BENCH_WARM_MAX_RUNS:-16}
[[ $WARM_QUIET_MS =~ ^[0-9]+$ && $WARM_MAX_RUNS =~ ^[0-9]+$ && $WARM_MAX_RUNS -ge 2 ]] ||
    die "BENCH_WARM_QUIET_MS ($WARM_QUIET_MS) must be 0 or more and BENCH_WARM_MAX_RUNS ($WARM_MAX_RUNS) 2 or more, in whole numbers"
MEM_PREFILL=$(printf '%s\n' "$SLOW_PREFILL" "$(numfmt --from=iec "$FILE_SIZE")" | sort -n | head -n 1)

ALL_WORKLOADS="randwrite-4k randwrite-512k sweep seqwrite-1m seqwrite-64m randread-4k mix-zipf writeback coldstart"
wanted() { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }
for w in ${ONLY//,/ }; do
    [[ " $ALL_WORKLOADS " == *" $w "* ]] || die "unknown workload '$w' (one of: $ALL_WORKLOADS)"
done

# Which systems run which workload (reference first). The physical limit and the two RAM
# exports (nbdkit memory, Strata memory: the NBD ceilings, both written once before) bound what
# an NBD server can do here; the file exports compare Strata's export path with nbdkit's and
# qemu-nbd's; the caches over the slow device compare Strata writeboost with nbdkit's cache
# filter and the slow device alone. At 512 KiB, strata-direct is writeboost's cache device
# (a `direct` file on the same disk) exported alone: the most writeboost can reach there.
EXPORTS="strata-file nbdkit-file strata-direct qemu-nbd"
CACHES="strata-wb nbdkit-cache"
CEILINGS="nbdkit-memory strata-memory"
declare -A SYSTEMS_OF=(
    [randwrite-4k]="$CEILINGS raw-fast raw-slow $CACHES $EXPORTS"
    [randwrite-512k]="$CEILINGS raw-fast raw-slow $CACHES strata-direct"
    [sweep]="$CEILINGS raw-fast $CACHES"
    [seqwrite-1m]="raw-slow raw-fast $CEILINGS $CACHES $EXPORTS"
    [seqwrite-64m]="raw-slow raw-fast $CEILINGS $CACHES"
    [randread-4k]="$CEILINGS raw-fast raw-slow $CACHES $EXPORTS"
    [mix-zipf]="raw-slow raw-fast $CEILINGS $CACHES"
    [writeback]="raw-slow $CACHES"
    [coldstart]="strata-wb"
)
if [ $QUICK -eq 1 ]; then
    # Fewer side systems, so that the quick run stays under 10 minutes on 2 cores.
    SYSTEMS_OF[randwrite-512k]="$CEILINGS raw-fast $CACHES strata-direct"
    SYSTEMS_OF[sweep]="raw-fast $CACHES"
    SYSTEMS_OF[seqwrite-1m]="raw-slow $CACHES $EXPORTS"
    SYSTEMS_OF[seqwrite-64m]="raw-slow $CACHES"
    SYSTEMS_OF[randread-4k]="$CEILINGS raw-slow $CACHES $EXPORTS"
    SYSTEMS_OF[mix-zipf]="raw-slow $CACHES"
fi
ALL_SYSTEMS="raw-fast raw-slow $CEILINGS $CACHES $EXPORTS"
if [ -n "$ONLY_SYSTEMS" ]; then
    for s in ${ONLY_SYSTEMS//,/ }; do
        [[ " $ALL_SYSTEMS " == *" $s "* ]] || die "unknown system '$s' (one of: $ALL_SYSTEMS)"
    done
    for w in "${!SYSTEMS_OF[@]}"; do
        kept=""
        for s in ${SYSTEMS_OF[$w]}; do [[ ",$ONLY_SYSTEMS," == *",$s,"* ]] && kept="$kept $s"; done
        SYSTEMS_OF[$w]=${kept# }
    done
fi

# (in_run, fn, sys_call and ensure_up: lib/session.sh)

# --- build --------------------------------------------------------------------------------
if [ $NOBUILD -eq 1 ]; then
    say "bench: not building (--no-build)"
elif [ $REBUILD -eq 1 ] || [ ! -x "$STRATA_DIST/bin/strata" ]; then
    say "bench: building (mvn -B -q -DskipTests package) ..."
    if ! (cd "$ROOT" && mvn -B -q -o -DskipTests package >"$LOGS/build.log" 2>&1 \
          || mvn -B -q -DskipTests package >"$LOGS/build.log" 2>&1); then
        say "bench: the build failed (see $LOGS/build.log); Strata systems will be reported as not available"
    fi
else
    say "bench: using the existing build at ${STRATA_DIST#"$ROOT"/} ($(date -u -r "$STRATA_DIST/bin/strata" '+%Y-%m-%d %H:%M UTC'))"
fi

# --- metadata ---------------------------------------------------------------------------------
{
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "mode=$MODE"
    echo "reps=$REPS"
    echo "command=itests/bench/run.sh${ARGS_GIVEN:+ $ARGS_GIVEN}"
    echo "commit=$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null)$(cd "$ROOT" && git diff --quiet HEAD -- . ':!docs' 2>/dev/null || echo '+local changes')"
    echo "branch=$(cd "$ROOT" && git rev-parse --abbrev-ref HEAD 2>/dev/null)"
    echo "cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo) x $(nproc)"
    echo "memory=$(awk '/^MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
    echo "kernel=$(uname -sr)"
    echo "disk=$(df -T "$BENCH_TMP" | awk 'NR==2 {print $1" ("$2")"}')"
    echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "fio=$(fio --version)"
    echo "nbdkit=$(nbdkit --version | head -1)"
    echo "qemu_nbd=$(qemu-nbd --version | head -1)"
    echo "java=$(java -version 2>&1 | head -1)"
    echo "slow=$(slow_cmd PORT)"
    echo "slow_rate=${SLOW_RATE:-none}"
    echo "wb_cache=$WB_CACHE"
    echo "mem_prefill=$(numfmt --to=iec "$MEM_PREFILL")"
    echo "nbdkit_cache_args=${NBDKIT_CACHE_ARGS:-(none)}"
    echo "cache_bytes=$(numfmt --from=iec "$CACHE_SIZE")"
    echo "cold_fill=$COLD_FILL of dirty data in ${COLD_BS} random writes into the $CACHE_SIZE cache"
    echo "sizes=slow device $SLOW_SIZE, file exports $FILE_SIZE, writeboost cache $CACHE_SIZE, random-write region $REGION, read region $READ_REGION, runtime cap ${RUNTIME}s; the first $(numfmt --to=iec "$SLOW_PREFILL") of every slow device written once before any measurement"
} >"$RESULTS/meta.properties"

# --- running ------------------------------------------------------------------------------------
# fio_target SYSTEM: prints the fio arguments that aim fio at SYSTEM
fio_target() { sys_call "$1" target; }

# measure W S REP JOB: one measured fio run, recorded.
measure() {
    local w=$1 s=$2 rep=$3 job=$4 out line
    RUN_NO=$((RUN_NO + 1))
    out=$RESULTS/json/$w-$s-$rep.json
    # shellcheck disable=SC2046
    if run_fio_job "$out" "$(sys_call "$s" pg)" "$job" $(fio_target "$s"); then
        read -r mibs iops p99 cpu bytes secs <<<"$FIO_RESULT"
        record "$w" "$s" "$rep" "$mibs" "$iops" "$p99" "$cpu" "$bytes" "$secs" ""
        progress "$w rep $rep/$REPS $s: $mibs MiB/s, $iops IOPS, p99 ${p99} us"
    else
        record "$w" "$s" "$rep" "" "" "" "" "" "" "fio failed"
        progress "$w rep $rep/$REPS $s: fio failed (see $out.log)"
    fi
}

# prep S JOB: unmeasured fio run (warming or dirtying a cache)
prep() {
    local s=$1 job=$2 out=$RESULTS/json/prep-$1-$(basename "$2" .fio)-$RANDOM.json
    # shellcheck disable=SC2046
    run_fio_job "$out" "" "$job" $(fio_target "$s")
}

unavailable() { # W S
    RUN_NO=$((RUN_NO + REPS))
    record "$1" "$2" 0 "" "" "" "" "" "" "${SYS_NOTE[$2]:-not available}"
    progress "$1 $2: ${SYS_NOTE[$2]:-not available}"
}

# io_workload W JOB FRESH(each|once) PREP(yes|no): the A B A B loop.
io_workload() {
    local w=$1 job=$2 fresh=$3 prepare=$4 s rep live=()
    for s in ${SYSTEMS_OF[${w%%@*}]}; do
        if ensure_up "$s"; then live+=("$s"); else unavailable "$w" "$s"; fi
    done
    if [ "$fresh" = once ]; then
        for s in "${live[@]}"; do
            sys_call "$s" fresh
            if [ "$prepare" = yes ] && [ "$s" != raw-slow ]; then
                progress "$w: warming $s (prep-fill.fio, $READ_REGION in ${PREP_BS} writes)"
                BENCH_REGION=$READ_REGION BENCH_BS=$PREP_BS prep "$s" "$JOBS/prep-fill.fio"
            fi
        done
    fi
    for ((rep = 1; rep <= REPS; rep++)); do
        for s in "${live[@]}"; do
            [ "$fresh" = each ] && sys_call "$s" fresh
            measure "$w" "$s" "$rep" "$job"
            # a cache used up: start tearing it down now, while the other systems run
            [ "$fresh" = each ] && retire "$s"
        done
    done
}
retire() { if declare -F "sys_$(fn "$1")_retire" >/dev/null; then sys_call "$1" retire; fi; }

# writeback: dirty the cache with writeback-dirty.fio, then time the cache's writeback to
# the slow device. The slow device alone runs the same job (direct, unsorted writes).
writeback_workload() {
    local w=writeback s rep live=() t0 t1 secs mibs bytes
    for s in ${SYSTEMS_OF[$w]}; do
        if ensure_up "$s"; then live+=("$s"); else unavailable "$w" "$s"; fi
    done
    bytes=$(numfmt --from=iec "$WB_IO")
    for ((rep = 1; rep <= REPS; rep++)); do
        for s in "${live[@]}"; do
            RUN_NO=$((RUN_NO + 1))
            if [ "$s" = raw-slow ]; then
                # shellcheck disable=SC2046
                BENCH_REGION=$WB_REGION BENCH_IO=$WB_IO run_fio_job \
                    "$RESULTS/json/$w-$s-$rep.json" "$(sys_call "$s" pg)" "$JOBS/writeback-dirty.fio" $(fio_target "$s") || {
                    record "$w" "$s" "$rep" "" "" "" "" "" "" "fio failed"; continue; }
                read -r _ _ _ cpu _ secs <<<"$FIO_RESULT"
                # wall time, like the caches' writeback times (which include their command's start)
                mibs=$(awk -v b="$bytes" -v s="$secs" 'BEGIN{printf "%.2f", b/1048576/s}')
                record "$w" "$s" "$rep" "$mibs" "" "" "$cpu" "$bytes" "$secs" "direct writes"
                progress "$w rep $rep/$REPS $s: $WB_IO written directly in ${secs}s"
                continue
            fi
            # writeboost: no background writeback (writeback_threshold=0) while it is dirtied,
            # so that every dirty block is still dirty when the clock starts (nbdkit's cache
            # filter writes back only on a flush anyway)
            sys_call "$s" fresh writeback_threshold=0
            BENCH_REGION=$WB_REGION BENCH_IO=$WB_IO prep "$s" "$JOBS/writeback-dirty.fio" || {
                record "$w" "$s" "$rep" "" "" "" "" "" "" "dirtying failed"; continue; }
            local pg c0 c1 note="" d0 w0 w1
            if [ "$s" = strata-wb ]; then
                strata_cmd "dev:status wb$WB_GEN"
                d0=$(status_value dirty_blocks); w0=$(status_value writeback_writes)
            fi
            pg=$(sys_call "$s" pg); c0=$(group_cpu_ticks "$pg"); t0=$(now_ms)
            if sys_call "$s" writeback; then
                t1=$(now_ms); c1=$(group_cpu_ticks "$pg")
                if [ "$s" = strata-wb ] && strata_cmd "dev:status wb$WB_GEN"; then
                    w1=$(status_value writeback_writes)
                    note="$d0 dirty blocks at the start, written back in $((w1 - w0)) writes"
                fi
                secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", (b-a)/1000}')
                mibs=$(awk -v b="$bytes" -v s="$secs" 'BEGIN{printf "%.2f", b/1048576/s}')
                record "$w" "$s" "$rep" "$mibs" "" "" "$(awk -v a="$c0" -v b="$c1" -v hz="$CLK_TCK" 'BEGIN{printf "%.3f", (b-a)/hz}')" "$bytes" "$secs" "$note"
                progress "$w rep $rep/$REPS $s: $WB_IO dirty written back in ${secs}s${note:+ ($note)}"
            else
                record "$w" "$s" "$rep" "" "" "" "" "" "" "writeback failed"
                progress "$w rep $rep/$REPS $s: writeback failed"
            fi
        done
    done
}

# coldstart: fill the writeboost cache, kill the JVM, time the restart until the export
# answers; the same with an empty cache gives the part that is recovery. The device runs
# with writeback_threshold=0 so that no background writeback cleans the cache before the
# kill or reads it after the restart: the cache device's read bytes after the restart are
# then recovery's alone.
coldstart_workload() {
    local w=coldstart rep kind
    if ! ensure_up strata-wb; then unavailable "$w" strata-wb; return; fi
    for ((rep = 1; rep <= REPS; rep++)); do
        for kind in empty full; do
            RUN_NO=$((RUN_NO + 1))
            sys_strata_wb_fresh writeback_threshold=0
            strata_wb_reap  # nothing may be left to remove in the background at the kill
            if [ $kind = full ]; then
                BENCH_REGION=$COLD_FILL BENCH_IO=$COLD_FILL BENCH_BS=$COLD_BS prep strata-wb "$JOBS/coldstart-fill.fio" || {
                    record "$w-$kind" strata-wb "$rep" "" "" "" "" "" "" "fill failed"; continue; }
                # the power cut comes after the log went quiet: writeboost then writes its
                # durable mark (1 s after the last flush), so recovery needs headers only. A cut
                # within that second checks the data of the records flushed last (docs/writeboost.md)
                strata_wait_durable_mark "wb$WB_GEN" 30 || progress "$w rep $rep/$REPS: no durable mark within 30 s"
            fi
            if strata_coldstart; then
                record "$w-$kind" strata-wb "$rep" "" "$COLD_ENGINE_READ" "" "" "$COLD_READ" "$COLD_SECS" ""
                progress "$w rep $rep/$REPS strata-wb ($kind cache of $CACHE_SIZE): ready in ${COLD_SECS}s, $COLD_READ bytes read from the cache device (recovery's own count: ${COLD_ENGINE_READ:-?})"
            else
                record "$w-$kind" strata-wb "$rep" "" "" "" "" "" "" "restart failed"
                progress "$w rep $rep/$REPS strata-wb: restart failed (see $LOGS/strata.log)"
                SYS_NOTE[strata-wb]="not available: restart failed"
                return
            fi
        done
    done
    record "$w-full" nbdkit-cache 0 "" "" "" "" "" "" "not applicable: nbdkit's cache is a temporary file, empty after a restart"
}

# Count the runs for the progress line.
count_runs() {
    local w n=0 k
    for w in $ALL_WORKLOADS; do
        wanted "$w" || continue
        k=$(wc -w <<<"${SYSTEMS_OF[$w]}")
        case $w in
            sweep) n=$((n + k * REPS * $(wc -w <<<"$SWEEP_BS"))) ;;
            coldstart) n=$((n + 2 * REPS)) ;;
            *) n=$((n + k * REPS)) ;;
        esac
    done
    echo $n
}
RUN_TOTAL=$(count_runs)
RUN_T0=$(date +%s)
say "bench: $MODE run, $REPS repetitions, $RUN_TOTAL measurements; data in $BENCH_TMP"

# The slow device's own figures (printed and recorded): random 4 KiB and 1 MiB sequential.
calibrate_slow() {
    sys_raw_slow_up
    local t out
    # shellcheck disable=SC2046
    BENCH_REGION=$REGION BENCH_IO=1G BENCH_RUNTIME=3 run_fio_job "$RESULTS/json/calibrate-4k.json" "" \
          "$JOBS/randwrite-4k.fio" $(sys_raw_slow_target) && {
        read -r mibs iops _ <<<"$FIO_RESULT"; echo "slow_rand4k_iops=$iops" >>"$RESULTS/meta.properties"; t="$iops random 4 KiB write IOPS"; }
    # shellcheck disable=SC2046
    BENCH_REGION=$REGION BENCH_IO=1G BENCH_RUNTIME=3 run_fio_job "$RESULTS/json/calibrate-1m.json" "" \
          "$JOBS/seqwrite-1m.fio" $(sys_raw_slow_target) && {
        read -r mibs iops _ <<<"$FIO_RESULT"; echo "slow_seq1m_mibs=$mibs" >>"$RESULTS/meta.properties"; t="$t, $mibs MiB/s 1 MiB sequential writes"; }
    say "bench: slow device ($(slow_cmd PORT | sed 's/ -p PORT//')): $t"
}
if in_run raw-slow || in_run strata-wb || in_run nbdkit-cache; then calibrate_slow; fi

# Start every system this run uses before the first measurement, so that no start-up (a JVM
# compiling its hot paths, a server allocating) lands in another system's numbers; then give
# the JVM the same short unmeasured warm-up run of the hot paths that every later run gets.
all_systems=""
for w in $ALL_WORKLOADS; do wanted "$w" && all_systems="$all_systems ${SYSTEMS_OF[$w]}"; done
for s in $(tr ' ' '\n' <<<"$all_systems" | awk 'NF && !seen[$0]++'); do
    ensure_up "$s" || true
done
# Large writes take other paths through the JIT than 4 KiB ones (a writeboost write reserving
# runs of 128 blocks, records sealed full, the NBD server's large receive buffers): without a
# warm-up of their own, C2 was still compiling and recompiling them during the first two
# measured 512 KiB runs (a third of the Strata JVM's samples, 1.6-1.9 s/GiB against ~1.0 from the
# third run on; docs/benchmarks.md, "Issue 10, goal 3, second round"). So when a workload of
# large random writes is in the run, every Strata system also gets unmeasured 512 KiB runs
# (a fresh writeboost cache before each, as the measured runs get) until the JIT is quiet.
# jit_ms: milliseconds the Strata JVM's JIT has spent compiling so far (empty without jcmd).
jit_ms() {
    local pid pg=${PGIDS[strata]:-}
    # no Strata server: no figure (pgrep -g 0 would mean this script's own process group)
    [ -n "$pg" ] || return 0
    pid=$(pgrep -g "$pg" -x java | head -n 1)
    [ -n "$pid" ] && command -v jcmd >/dev/null || return 0
    jcmd "$pid" PerfCounter.print 2>/dev/null | awk -F= '
        /^sun.ci.standardTime=/ {t += $2} /^sun.ci.osrTime=/ {t += $2} /^sun.os.hrt.frequency=/ {f = $2}
        END {if (f > 0) printf "%d\n", t * 1000 / f}'
}
# warm_big S: unmeasured 512 KiB runs (a fresh cache before each) until the JIT is quiet. Two
# were not enough for writeboost: its daemons run once per 4 MiB log write or writeback batch,
# so C2 was still compiling them (and the batcher, deoptimized and compiled again) in the
# measured runs, 30-38 % of the JVM's samples in two of three (docs/benchmarks.md, fourteenth
# session). So: at least two runs, then more while a run's compiling took over
# $WARM_QUIET_MS ms, at most $WARM_MAX_RUNS runs; the count and the last run's compile time go
# into meta.properties.
warm_big() {
    local s=$1 n=0 before after spent=""
    while ((n < WARM_MAX_RUNS)); do
        sys_call "$s" fresh
        before=$(jit_ms)
        BENCH_REGION=$REGION BENCH_IO=$IO_BIG BENCH_RUNTIME=$RUNTIME prep "$s" "$JOBS/randwrite-512k.fio" || true
        after=$(jit_ms)
        n=$((n + 1))
        [ -n "$before" ] && [ -n "$after" ] || { ((n < 2)) && continue; break; }
        spent=$((after - before))
        ((n >= 2 && spent <= WARM_QUIET_MS)) && break
    done
    echo "warm_big_${s//-/_}=$n runs, last compiled ${spent:-?} ms" >>"$RESULTS/meta.properties"
    progress "warmed $s with $n unmeasured 512 KiB runs (JIT in the last: ${spent:-?} ms)"
}
WARM_BIG=0
for w in randwrite-512k sweep; do wanted "$w" && WARM_BIG=1; done
for s in strata-file strata-memory strata-direct strata-wb; do
    if [[ " $all_systems " == *" $s "* ]] && [ -n "${UP_DONE[$s]:-}" ] && [ -z "${SYS_NOTE[$s]:-}" ]; then
        progress "warming up the JVM on $s (unmeasured)"
        BENCH_REGION=$REGION BENCH_IO=$IO_4K BENCH_RUNTIME=$((RUNTIME * 2)) prep "$s" "$JOBS/randwrite-4k.fio" || true
        BENCH_REGION=$READ_REGION BENCH_IO=$IO_4K BENCH_RUNTIME=$RUNTIME prep "$s" "$JOBS/randread-4k.fio" || true
        if [ "$WARM_BIG" -eq 1 ]; then
            warm_big "$s"
        fi
    fi
done

export BENCH_RUNTIME=$RUNTIME
if wanted randwrite-4k; then
    BENCH_REGION=$REGION BENCH_IO=$IO_4K io_workload randwrite-4k "$JOBS/randwrite-4k.fio" each no
fi
if wanted randwrite-512k; then
    BENCH_REGION=$REGION BENCH_IO=$IO_BIG io_workload randwrite-512k "$JOBS/randwrite-512k.fio" each no
fi
if wanted sweep; then
    for bs in $SWEEP_BS; do
        # shorter runs: five block sizes (the full run's longest workload otherwise)
        BENCH_REGION=$REGION BENCH_IO=$IO_BIG BENCH_BS=$bs BENCH_RUNTIME=$(((RUNTIME + 1) / 2)) \
            io_workload "sweep@$bs" "$JOBS/sweep-randwrite.fio" each no
    done
fi
if wanted seqwrite-1m; then
    BENCH_REGION=$IO_SEQ BENCH_IO=$IO_SEQ BENCH_RUNTIME=$((RUNTIME * 3)) io_workload seqwrite-1m "$JOBS/seqwrite-1m.fio" each no
fi
if wanted seqwrite-64m; then
    BENCH_REGION=$IO_SEQ BENCH_IO=$IO_SEQ BENCH_RUNTIME=$((RUNTIME * 3)) io_workload seqwrite-64m "$JOBS/seqwrite-64m.fio" each no
fi
if wanted randread-4k; then
    BENCH_REGION=$READ_REGION BENCH_IO=$IO_BIG io_workload randread-4k "$JOBS/randread-4k.fio" once yes
fi
if wanted mix-zipf; then
    BENCH_REGION=$READ_REGION BENCH_IO=$IO_BIG io_workload mix-zipf "$JOBS/mix-zipf.fio" once yes
fi
if wanted writeback; then writeback_workload; fi
if wanted coldstart; then coldstart_workload; fi

echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$RESULTS/meta.properties"
[ -n "$STRATA_HOME" ] && cp "$STRATA_HOME/var/log/strata.log" "$LOGS/strata-jvm.log" 2>/dev/null
echo "elapsed_s=$(($(date +%s) - RUN_T0))" >>"$RESULTS/meta.properties"
stop_all_servers

# --- report -----------------------------------------------------------------------------------
REPORT_ARGS=("$RESULTS/raw.tsv" "$RESULTS/meta.properties" "$RESULTS/benchmarks-section.md" "$RESULTS/img")
mkdir -p "$RESULTS/img"
# two sources (Report, Charts): compiled first, as a single-file launch compiles only one
REPORT_CLASSES="$RESULTS/report-classes"
javac -d "$REPORT_CLASSES" "$HERE"/report/*.java || die "compiling the report failed"
if ! java -Djava.awt.headless=true -cp "$REPORT_CLASSES" Report "${REPORT_ARGS[@]}" >"$LOGS/report.log" 2>&1; then
    cat "$LOGS/report.log" >&2
    die "writing the report failed"
fi
if [ $DOCS -eq 1 ]; then
    mkdir -p "$ROOT/docs/img"
    cp "$RESULTS"/img/*.png "$ROOT/docs/img/"
    java -cp "$REPORT_CLASSES" Report --splice "$RESULTS/benchmarks-section.md" "$ROOT/docs/benchmarks.md" \
        || die "updating docs/benchmarks.md failed"
    say "bench: wrote docs/benchmarks.md and docs/img/bench-*.png ($(($(date +%s) - RUN_T0)) s)"
else
    say "bench: results in $RESULTS (docs not touched)"
fi
exit 0
}
