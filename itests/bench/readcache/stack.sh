#!/usr/bin/env bash
# Read-cache benchmark over NBD (issue 12, performance 2), with the suite's machinery
# (itests/bench/lib) and job files, in one run, systems in alternation. Usage:
#
#   itests/bench/readcache/stack.sh [--quick] [--reps N] [--out DIR] [--only W[,W…]]
#
# Workloads (W):
#   mix-zipf-cold  the suite's mix-zipf.fio on caches that start empty and are not written
#                  first: reads that miss come from the slow device, so a read cache matters
#   mix-zipf       the suite's mix-zipf.fio after the suite's warm-up (prep-fill.fio writes)
#   randread-zipf  4 KiB zipf random reads (jobs/randread-4k-zipf.fio) on a readcache warmed
#                  by reading the region once, against Strata's export of the fast device
# Systems: strata-rcwb (writeboost over readcache over the slow device, docs/readcache.md's
# recipe: write_promote=on readahead=64K, idle-only writeback), strata-rcwb-inv (the same with
# write_promote=off: writeback invalidates), nbdkit-cache-cor (nbdkit's cache filter with
# cache-on-read and 4K blocks, the reference of both mixes), nbdkit-cache-cor-dflt (the same at
# nbdkit's default 64K blocks), strata-wb
# (writeboost alone, for comparison), strata-rc (readcache alone), strata-file (the
# reference of randread-zipf). Every system over the slow device has its own instance.
# Prints medians, the issue's ratios and each job's slow-device requests (slow.tsv); writes
# summary.txt (with uptime), raw.tsv, fio JSON
# and logs under --out (default itests/bench/target/readcache-DATE). Not part of run.sh's
# table (its report is shared with the other caches' work); the same servers, job files and
# slow device. Needs the distribution (mvn -B -q -DskipTests package).
# Environment: BENCH_RC_BLOCK (readcache block_size, e.g. 64K; default 4096), BENCH_RC_POLICY,
# BENCH_RC_READAHEAD (the stacks' readahead, default 64K; 0 off), BENCH_NBDKIT_CACHE_ARGS
# (default cache-min-block-size=4K), BENCH_NBDKIT_CACHE_DFLT_ARGS (default none), BENCH_RCWB_WB_ARGS
# (default writeback.controller=idle), BENCH_RCWB_WB_SET (default writeback.busy_kib_per_sec=0;
# empty: writeboost's defaults), BENCH_RCWB_WB_SIZE, BENCH_SLOW_LOG (1: count the slow device's
# requests), BENCH_SLOW_DELAY, BENCH_SLOW_RATE, BENCH_WB_CACHE.
set -u
set -o pipefail
{
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=$(cd "$HERE/.." && pwd)
ROOT=$(cd "$BENCH/../.." && pwd)
JOBS=$BENCH/jobs
RC_JOBS=$HERE/jobs
QUICK=0 REPS=3 OUT="" ONLY=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --reps) REPS=${2:?--reps needs a number}; shift ;;
        --out) OUT=${2:?--out needs a directory}; shift ;;
        --only) ONLY=${2:?--only needs a list}; shift ;;
        -h|--help) sed -n '2,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "stack: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
case "$REPS" in ''|*[!0-9]*|0) echo "stack: --reps needs a positive number" >&2; exit 2 ;; esac
for t in fio nbdkit nbdinfo jq setsid fallocate; do
    command -v "$t" >/dev/null 2>&1 || { echo "stack: '$t' not found; see itests/bench/README.md (What it needs)" >&2; exit 1; }
done

. "$BENCH/lib/common.sh"
. "$BENCH/lib/systems.sh"
. "$BENCH/lib/strata.sh"
. "$HERE/systems.sh"
strata_available || { echo "stack: $STRATA_NOTE; build it with: mvn -B -q -DskipTests package" >&2; exit 1; }

. "$BENCH/lib/session.sh"
bench_session strata-rcbench "$BENCH/target/readcache-$(date -u +%Y%m%d-%H%M%S)"

# strata-wb's cache device driver (lib/strata.sh): a file, like the readcache stacks' caches
WB_CACHE=${BENCH_WB_CACHE:-file}
SLOW_DELAY=${BENCH_SLOW_DELAY:-5ms}
SLOW_RATE=${BENCH_SLOW_RATE-1200M}
case "$SLOW_RATE" in 0|none|off) SLOW_RATE="" ;; esac
if [ $QUICK -eq 1 ]; then
    MODE=quick SLOW_SIZE=1G FILE_SIZE=256M CACHE_SIZE=512M READ_REGION=64M RUNTIME=2 IO_BIG=128M PREP_BS=16k
else
    MODE=full SLOW_SIZE=4G FILE_SIZE=4G CACHE_SIZE=4G READ_REGION=512M RUNTIME=5 IO_BIG=1536M PREP_BS=16k
fi
SLOW_PREFILL=$(numfmt --from=iec "$READ_REGION")
MEM_PREFILL=$SLOW_PREFILL

ALL_WORKLOADS="mix-zipf-cold mix-zipf randread-zipf"
declare -A SYSTEMS_OF=(
    [mix-zipf-cold]="nbdkit-cache-cor nbdkit-cache-cor-dflt strata-rcwb strata-rcwb-inv strata-wb"
    [mix-zipf]="nbdkit-cache-cor nbdkit-cache-cor-dflt strata-rcwb strata-rcwb-inv strata-wb"
    [randread-zipf]="strata-file strata-rc"
)
wanted() { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }
for w in ${ONLY//,/ }; do
    [[ " $ALL_WORKLOADS " == *" $w "* ]] || die "unknown workload '$w' (one of: $ALL_WORKLOADS)"
done

{
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "mode=$MODE reps=$REPS"
    echo "commit=$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null)$(cd "$ROOT" && git diff --quiet HEAD -- . ':!docs' 2>/dev/null || echo '+local changes')"
    echo "uptime_start=$(uptime)"
    echo "slow=$(slow_cmd PORT)"
    echo "sizes=caches $CACHE_SIZE each, region $READ_REGION, runtime cap ${RUNTIME}s"
    echo "readcache block_size=${RC_BLOCK:-default (4096)} (BENCH_RC_BLOCK), stacks' readahead=${RC_READAHEAD:-0 (off)} (BENCH_RC_READAHEAD); stacks' writeboost: ${RCWB_WB_ARGS:-defaults} (BENCH_RCWB_WB_ARGS), then cache:set ${RCWB_WB_SET:-nothing} (BENCH_RCWB_WB_SET)"
    echo "nbdkit-cache-cor args: ${NBDKIT_CACHE_ARGS:-none (its defaults)} (BENCH_NBDKIT_CACHE_ARGS); nbdkit-cache-cor-dflt args: ${NBDKIT_CACHE_DFLT_ARGS:-none (its defaults: 64K blocks)} (BENCH_NBDKIT_CACHE_DFLT_ARGS)"
} >"$RESULTS/summary.txt"

RUN_TOTAL=0
for w in $ALL_WORKLOADS; do wanted "$w" && RUN_TOTAL=$((RUN_TOTAL + REPS * $(wc -w <<<"${SYSTEMS_OF[$w]}"))); done
say "stack: $MODE run, $REPS repetitions, $RUN_TOTAL measurements; data in $BENCH_TMP"

measure() { # W S REP JOB
    local w=$1 s=$2 rep=$3 job=$4 out=$RESULTS/json/$1-$2-$3.json log l0 l1
    RUN_NO=$((RUN_NO + 1))
    log=$(slow_log "$s"); l0=$(slow_lines "$log")
    # shellcheck disable=SC2046
    if run_fio_job "$out" "$(sys_call "$s" pg)" "$job" $(sys_call "$s" target); then
        read -r mibs iops p99 cpu bytes secs <<<"$FIO_RESULT"
        record "$w" "$s" "$rep" "$mibs" "$iops" "$p99" "$cpu" "$bytes" "$secs" ""
        l1=$(slow_lines "$log")
        [ -n "$log" ] && printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$s" "$rep" "$iops" "$bytes" \
            "$(slow_counts "$log" "$l0" "$l1" | tr ' ' '\t')" >>"$RESULTS/slow.tsv"
        progress "$w rep $rep/$REPS $s: $iops IOPS, p99 ${p99} us"
    else
        record "$w" "$s" "$rep" "" "" "" "" "" "" "fio failed"
        progress "$w rep $rep/$REPS $s: fio failed (see $out.log)"
    fi
}

# workload W JOB WARM(none|write|read): every system up, warmed once, then A B C, A B C, …
workload() {
    local w=$1 job=$2 warm=$3 s rep live=()
    for s in ${SYSTEMS_OF[$w]}; do
        if ensure_up "$s"; then live+=("$s"); else progress "$w $s: ${SYS_NOTE[$s]}"; fi
    done
    for s in "${live[@]}"; do
        if [ "$warm" = read ] && declare -F "sys_$(fn "$s")_warm" >/dev/null; then
            progress "$w: warming $s (reading $READ_REGION once)"
            sys_call "$s" warm || progress "$w: warming $s failed"
        elif [ "$warm" != none ]; then
            progress "$w: warming $s (prep-fill.fio, $READ_REGION in $PREP_BS writes)"
            # shellcheck disable=SC2046
            BENCH_REGION=$READ_REGION BENCH_BS=$PREP_BS run_fio_job "$RESULTS/json/prep-$w-$s.json" "" \
                "$JOBS/prep-fill.fio" $(sys_call "$s" target) || progress "$w: warming $s failed"
        fi
    done
    for ((rep = 1; rep <= REPS; rep++)); do
        for s in "${live[@]}"; do measure "$w" "$s" "$rep" "$job"; done
    done
}

# Start everything first, so no start-up lands in another system's numbers.
for w in $ALL_WORKLOADS; do
    wanted "$w" || continue
    for s in ${SYSTEMS_OF[$w]}; do ensure_up "$s" || true; done
done
export BENCH_RUNTIME=$RUNTIME BENCH_REGION=$READ_REGION BENCH_IO=$IO_BIG
# the cold mix first: nothing has been read or written through the caches yet
if wanted mix-zipf-cold; then workload mix-zipf-cold "$JOBS/mix-zipf.fio" none; fi
if wanted mix-zipf; then workload mix-zipf "$JOBS/mix-zipf.fio" write; fi
if wanted randread-zipf; then workload randread-zipf "$RC_JOBS/randread-4k-zipf.fio" read; fi
for kind in rc rcwb rcwbi; do
    [ -n "${STRATA_PORT[$kind]:-}" ] && strata_cmd "dev:status ${kind}rc" && {
        echo "--- dev:status ${kind}rc after the run"; cat <<<"$STRATA_OUT"; } >>"$RESULTS/status.txt"
    [ "$kind" != rc ] && [ -n "${STRATA_PORT[$kind]:-}" ] && strata_cmd "dev:status ${kind}wb" && {
        echo "--- dev:status ${kind}wb after the run"; cat <<<"$STRATA_OUT"; } >>"$RESULTS/status.txt"
done
echo "uptime_end=$(uptime)" >>"$RESULTS/summary.txt"
stop_all_servers

# medians and ratios
median_iops() { # W S
    awk -F'\t' -v w="$1" -v s="$2" '$1 == w && $2 == s && $5 != "" { print $5 }' "$RESULTS/raw.tsv" | sort -n \
        | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && b > 0) printf "%.2f", a / b; else printf "-" }'; }
{
    echo
    echo "medians (IOPS) of $REPS repetitions:"
    for w in $ALL_WORKLOADS; do
        wanted "$w" || continue
        for s in ${SYSTEMS_OF[$w]}; do printf '  %-14s %-17s %s\n' "$w" "$s" "$(median_iops "$w" "$s")"; done
    done
    echo
    for w in mix-zipf-cold mix-zipf; do
        wanted "$w" || continue
        echo "$w: strata-rcwb / nbdkit-cache-cor = $(ratio "$(median_iops "$w" strata-rcwb)" "$(median_iops "$w" nbdkit-cache-cor)") (goal >= 1.2); strata-rcwb / nbdkit-cache-cor-dflt = $(ratio "$(median_iops "$w" strata-rcwb)" "$(median_iops "$w" nbdkit-cache-cor-dflt)"); strata-rcwb-inv / nbdkit-cache-cor = $(ratio "$(median_iops "$w" strata-rcwb-inv)" "$(median_iops "$w" nbdkit-cache-cor)"); strata-wb / nbdkit-cache-cor = $(ratio "$(median_iops "$w" strata-wb)" "$(median_iops "$w" nbdkit-cache-cor)")"
    done
    if [ -s "$RESULTS/slow.tsv" ]; then
        echo
        echo "slow-device requests during each job (client I/Os = fio's bytes / 4 KiB; reads, writes: count and mean KiB; per 1000 client I/Os):"
        awk -F'\t' '{ ops = $5 / 4096
            printf "  %-14s %-17s rep %s  %7d client I/Os  reads %6d (%5.1f KiB)  writes %6d (%6.1f KiB)  flushes %4d  other %d  per 1000: %.1f reads %.1f writes\n",
                $1, $2, $3, ops, $6, $6 ? $7 / $6 / 1024 : 0, $8, $8 ? $9 / $8 / 1024 : 0, $10, $11,
                ops ? 1000 * $6 / ops : 0, ops ? 1000 * $8 / ops : 0 }' "$RESULTS/slow.tsv"
    fi
    if wanted randread-zipf; then
        echo "randread-zipf: strata-rc / strata-file = $(ratio "$(median_iops randread-zipf strata-rc)" "$(median_iops randread-zipf strata-file)") (goal >= 0.9)"
    fi
} >>"$RESULTS/summary.txt"
cat "$RESULTS/summary.txt"
say "stack: results in $RESULTS"
exit 0
}
