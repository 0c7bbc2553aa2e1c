#!/usr/bin/env bash
# Mirror benchmarks (issue 15; not tests), every ratio from one run. Usage:
#
#   itests/bench/mirror/run.sh [--quick] [--reps N] [--out DIR] [--only inproc,io,fio]
#                              [--kinds file,spindle,direct,uneven]
#
# inproc  MirrorBench.java in one JVM over files on the local disk (no NBD): (a) resync after a
#         crash — bytes resynced against dirty regions × region size, legs compared; (c) log round
#         trips per flush and writes/s with the disk: log, integrated flush vs naive
#         (integrated_flush=false), and hot-region writes disk: vs core log.
# io      MirrorIoBench.java in one JVM: the mirror's I/O path without NBD (mirror over two legs vs
#         one leg, file / direct / spindle legs): throughput, CPU s per GiB or per million reads
#         of the whole JVM, bytes allocated per request.
# fio     (b) through Strata's NBD export with fio's nbd engine, as the suite measures: a mirror
#         over two file legs vs each leg alone (sequential 1 MiB writes vs the slower leg;
#         4 KiB random reads vs one leg), and the same over two spindle legs (the test kit's disk
#         model: one request at a time, as a disk serves them) where spreading reads can pay, and
#         over two direct legs (O_DIRECT files: no page cache, but both on the same disk). Then
#         4 KiB random reads on a mirror of one file and one spindle leg (one leg far busier),
#         read_policy=round_robin vs least_loaded. Systems alternate within each repetition; every
#         export runs each workload once unmeasured first (the JIT), and the file mirror's writes are
#         (and the spindle mirror's) measured twice, write_fanout=parallel (the default) and
#         write_fanout=caller. For the file
#         legs the CPU table: CPU of the Strata JVM and of fio per GiB and per request, the cores both
#         used while fio ran, the whole machine's busy share, context switches per request, and the
#         bound a CPU-bound machine sets (CPU per GiB of the leg alone / of the mirror).
#         --kinds picks leg kinds (default all four).
# Writes summary.md (uptime at start and end, the tables, the ratios), raw.tsv, fio JSON and logs
# under --out (default itests/bench/target/mirror-DATE). Needs fio, jq, nbdinfo, a JDK and the
# built distribution (mvn -B -q -DskipTests package).
set -u
set -o pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=$(cd "$HERE/.." && pwd)
ROOT=$(cd "$BENCH/../.." && pwd)
JOBS=$BENCH/jobs
QUICK=0 REPS="" OUT="" ONLY="" KINDS=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --reps) REPS=${2:?--reps needs a number}; shift ;;
        --out) OUT=${2:?--out needs a directory}; shift ;;
        --only) ONLY=${2:?--only needs a list}; shift ;;
        --kinds) KINDS=${2:?--kinds needs a list}; shift ;;
        -h|--help) sed -n '2,29p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "mirror bench: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$REPS" ] || { [ $QUICK -eq 1 ] && REPS=2 || REPS=3; }
case "$REPS" in ''|*[!0-9]*|0) echo "mirror bench: --reps needs a positive number" >&2; exit 2 ;; esac
wanted() { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }
kind() { [ -z "$KINDS" ] || [[ ",$KINDS," == *",$1,"* ]]; }
for k in ${KINDS//,/ }; do
    case "$k" in file|spindle|direct|uneven) ;; *) echo "mirror bench: --kinds: '$k' is none of file, spindle, direct, uneven" >&2; exit 2 ;; esac
done
for t in fio jq nbdinfo setsid fallocate javac java; do
    command -v "$t" >/dev/null 2>&1 || { echo "mirror bench: '$t' not found; see itests/bench/README.md (What it needs)" >&2; exit 1; }
done

. "$BENCH/lib/common.sh"
. "$BENCH/lib/strata.sh"
. "$BENCH/lib/session.sh"
declare -A SYS_NOTE=()
ALL_WORKLOADS="" ; declare -A SYSTEMS_OF=()
bench_session strata-mirrorbench "$BENCH/target/mirror-$(date -u +%Y%m%d-%H%M%S)"
SUMMARY=$RESULTS/summary.md
if [ $QUICK -eq 1 ]; then
    MODE=quick LEG_SIZE=512M REGION=256M RUNTIME=2 IO=2G
else
    MODE=full LEG_SIZE=2G REGION=1G RUNTIME=5 IO=8G
fi
{
    echo "# Mirror benchmarks ($MODE, $REPS repetitions)"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- commit: $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null)$(cd "$ROOT" && git diff --quiet HEAD -- . ':!docs' 2>/dev/null || echo ' +local changes')"
    echo "- uptime at start: $(uptime)"
    echo
} >"$SUMMARY"

# --- in process ----------------------------------------------------------------------------
if wanted inproc; then
    MJAR=$(ls "$ROOT"/bundles/mirror/target/dev.strata.mirror-*.jar 2>/dev/null | grep -v sources | head -1 || true)
    API=$(ls "$ROOT"/bundles/api/target/dev.strata.api-*.jar 2>/dev/null | head -1 || true)
    if [ -z "$MJAR" ] || [ -z "$API" ]; then
        (cd "$ROOT" && mvn -B -o -q -pl bundles/mirror -am package -DskipTests) || die "building the mirror bundle failed"
        MJAR=$(ls "$ROOT"/bundles/mirror/target/dev.strata.mirror-*.jar | grep -v sources | head -1)
        API=$(ls "$ROOT"/bundles/api/target/dev.strata.api-*.jar | head -1)
    fi
    CLS=$BENCH_TMP/classes
    mkdir -p "$CLS"
    javac -d "$CLS" -cp "$MJAR:$API" "$HERE/MirrorBench.java" || die "MirrorBench.java does not compile"
    say "mirror bench: in process (resync after a crash, log round trips) in $DATA"
    ARGS=("$DATA")
    [ $QUICK -eq 1 ] && ARGS+=(--quick)
    java -Xmx1g -cp "$CLS:$MJAR:$API" MirrorBench "${ARGS[@]}" | tee -a "$SUMMARY" || die "MirrorBench failed"
fi

# --- the I/O path in process ---------------------------------------------------------------
if wanted io; then
    MJAR=$(ls "$ROOT"/bundles/mirror/target/dev.strata.mirror-*.jar 2>/dev/null | grep -v sources | head -1 || true)
    API=$(ls "$ROOT"/bundles/api/target/dev.strata.api-*.jar 2>/dev/null | head -1 || true)
    KIT=$(ls "$ROOT"/bundles/testkit-targets/target/dev.strata.testkit-*.jar 2>/dev/null | grep -v sources | head -1 || true)
    if [ -z "$MJAR" ] || [ -z "$API" ] || [ -z "$KIT" ]; then
        (cd "$ROOT" && mvn -B -o -q -pl bundles/mirror,bundles/testkit-targets -am package -DskipTests) || die "building the mirror bundle failed"
        MJAR=$(ls "$ROOT"/bundles/mirror/target/dev.strata.mirror-*.jar | grep -v sources | head -1)
        API=$(ls "$ROOT"/bundles/api/target/dev.strata.api-*.jar | head -1)
        KIT=$(ls "$ROOT"/bundles/testkit-targets/target/dev.strata.testkit-*.jar | grep -v sources | head -1)
    fi
    CLS=$BENCH_TMP/classes-io
    mkdir -p "$CLS"
    javac -d "$CLS" -cp "$MJAR:$API:$KIT" "$HERE/MirrorIoBench.java" || die "MirrorIoBench.java does not compile"
    say "mirror bench: the I/O path in process in $DATA"
    ARGS=("$DATA" --reps "$REPS")
    [ $QUICK -eq 1 ] && ARGS+=(--quick)
    java -Xmx1g -cp "$CLS:$MJAR:$API:$KIT" MirrorIoBench "${ARGS[@]}" | tee -a "$SUMMARY" || die "MirrorIoBench failed"
fi

# --- through NBD with fio ------------------------------------------------------------------
if wanted fio; then
    strata_available || die "$STRATA_NOTE; build it with: mvn -B -q -DskipTests package"
    strata_prepare_home
    strata_start || die "$STRATA_NOTE"
    for f in la lb sa sb xa xb xsa xsb da db xda xdb ua ub; do fallocate -l "$LEG_SIZE" "$DATA/$f.img"; done
    for f in mlog slog dlog ulog; do fallocate -l 1M "$DATA/$f.img"; done
    strata_must "dev:create la file path=$DATA/la.img"
    strata_must "dev:create lb file path=$DATA/lb.img"
    strata_must "dev:create mlog file path=$DATA/mlog.img"
    strata_must "dev:create mfile mirror legs=la,lb region_size=512k log=disk:mlog nosync=true"
    strata_must "dev:create sa0 file path=$DATA/sa.img"
    strata_must "dev:create sb0 file path=$DATA/sb.img"
    strata_must "dev:create sa spindle device=sa0 seed=1"
    strata_must "dev:create sb spindle device=sb0 seed=2"
    strata_must "dev:create slog file path=$DATA/slog.img"
    strata_must "dev:create mspin mirror legs=sa,sb region_size=512k log=disk:slog nosync=true"
    # "one leg alone" is a third file (and a third spindle) of the same kind on the same disk: a
    # mirror claims its legs, and a leg's file is never opened by a second device
    strata_must "dev:create xa file path=$DATA/xa.img"
    strata_must "dev:create xb file path=$DATA/xb.img"
    strata_must "dev:create xsa0 file path=$DATA/xsa.img"
    strata_must "dev:create xsa spindle device=xsa0 seed=1"
    strata_must "dev:create xsb0 file path=$DATA/xsb.img"
    strata_must "dev:create xsb spindle device=xsb0 seed=2"
    # direct legs: O_DIRECT files, no page cache (each write reaches the disk), same disk for all
    strata_must "dev:create da direct path=$DATA/da.img"
    strata_must "dev:create db direct path=$DATA/db.img"
    strata_must "dev:create dlog file path=$DATA/dlog.img"
    strata_must "dev:create mdirect mirror legs=da,db region_size=512k log=disk:dlog nosync=true"
    strata_must "dev:create xda direct path=$DATA/xda.img"
    strata_must "dev:create xdb direct path=$DATA/xdb.img"
    # uneven legs: a file (page cache) and a spindle; the spindle is the busier leg under reads
    strata_must "dev:create ua file path=$DATA/ua.img"
    strata_must "dev:create ub0 file path=$DATA/ub.img"
    strata_must "dev:create ub spindle device=ub0 seed=3"
    strata_must "dev:create ulog file path=$DATA/ulog.img"
    strata_must "dev:create muneven mirror legs=ua,ub region_size=512k log=disk:ulog nosync=true"
    for e in mfile mspin xa xb xsa xsb mdirect xda xdb muneven; do strata_export "$e" "$e"; done
    uri() { echo "nbd://127.0.0.1:${STRATA_PORT[$1]}/$1"; }
    # the regions the workloads touch are written once through every system first
    PREP=""
    kind file && PREP="mfile xa xb"
    kind direct && PREP="$PREP mdirect xda"
    for e in $PREP; do
        BENCH_REGION=$REGION BENCH_BS=1m run_fio_job "$RESULTS/json/prep-$e.json" "" "$JOBS/prep-fill.fio" \
            --ioengine=nbd --uri="$(uri "$e")" || die "prefill of $e failed"
    done
    # a spindle's counters (requests, seeks, bytes): whether the mirror splits requests or hands
    # its legs the writes in an order that costs seeks a leg alone does not pay
    spin_counters() { # DEV -> "requests seeks bytes"
        strata_cmd "dev:status --bytes $1" || { echo "0 0 0"; return; }
        awk '$(NF-1)=="requests"{r=$NF} $(NF-1)=="seeks"{s=$NF} $(NF-1)=="bytes"{b=$NF} END{print r+0, s+0, b+0}' <<<"$STRATA_OUT"
    }
    declare -A SPINDLES=([xsa]=xsa [xsb]=xsb [mspin]="sa sb" [mspin_caller]="sa sb")
    machine_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat; } # busy, idle+iowait
    strata_ctx() { # voluntary, involuntary context switches of the Strata JVM's live threads
        cat /proc/"${PGIDS[strata]}"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt/ { v += $2 } /^nonvoluntary_ctxt/ { n += $2 } END { print v + 0, n + 0 }'
    }
    measure() { # WORKLOAD SYSTEM REP JOB [REGION]; EXPORT=NAME when the system is not an export's name
        local w=$1 s=$2 rep=$3 job=$4 region=${5:-$REGION} out=$RESULTS/json/$1-$2-$3.json d
        local -A before=()
        if [ "$w" = seqwrite-1m-spindle ]; then
            for d in ${SPINDLES[$s]}; do before[$d]=$(spin_counters "$d"); done
        fi
        local st0 st1 cs0 cs1
        st0=$(machine_ticks); cs0=$(strata_ctx)
        if BENCH_REGION=$region BENCH_IO=$IO BENCH_RUNTIME=$RUNTIME run_fio_job "$out" "${PGIDS[strata]}" "$job" \
            --ioengine=nbd --uri="$(uri "${EXPORT:-$s}")"; then
            st1=$(machine_ticks); cs1=$(strata_ctx)
            read -r mibs iops p99 cpu bytes secs <<<"$FIO_RESULT"
            record "$w" "$s" "$rep" "$mibs" "$iops" "$p99" "$cpu" "$bytes" "$secs" ""
            # fio's own CPU (its job's usr+sys share of its runtime), the machine's busy share, the
            # Strata JVM's context switches: workload system rep fio_cpu_s fio_runtime_s busy% vol invol
            printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$s" "$rep" \
                "$(jq -r '.jobs[0] | "\((.usr_cpu + .sys_cpu) / 100 * .job_runtime / 1000)\t\(.job_runtime / 1000)"' "$out")" \
                "$(awk -v a="$st0" -v b="$st1" 'BEGIN { split(a, x, " "); split(b, y, " "); t = (y[1] - x[1]) + (y[2] - x[2]);
                    if (t > 0) printf "%.0f", 100 * (y[1] - x[1]) / t }')" \
                "$(awk -v a="$cs0" -v b="$cs1" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%d\t%d", y[1] - x[1], y[2] - x[2] }')" \
                >>"$RESULTS/cpu.tsv"
            say "$w rep $rep $s: $mibs MiB/s, $iops IOPS, p99 $p99 us"
            for d in "${!before[@]}"; do
                read -r r0 s0 b0 <<<"${before[$d]}"
                read -r r1 s1 b1 <<<"$(spin_counters "$d")"
                printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$s" "$rep" "$d" $((r1 - r0)) $((s1 - s0)) $((b1 - b0)) >>"$RESULTS/spindle.tsv"
            done
        else
            record "$w" "$s" "$rep" "" "" "" "" "" "" "fio failed"
        fi
    }
    SPIN_REGION=64M
    if kind uneven; then
        BENCH_REGION=$SPIN_REGION BENCH_BS=1m run_fio_job "$RESULTS/json/prep-muneven.json" "" "$JOBS/prep-fill.fio" \
            --ioengine=nbd --uri="$(uri muneven)" || die "prefill of muneven failed"
    fi
    # every export once through each workload, unmeasured: the first system measured would
    # otherwise pay for the JIT (C2 threads are part of the Strata JVM's CPU)
    warm() { # EXPORT REGION
        local j
        for j in seqwrite-1m randread-4k; do
            BENCH_REGION=$2 BENCH_IO=$IO BENCH_RUNTIME=1 run_fio_job "$RESULTS/json/warm-$j-$1.json" "" "$JOBS/$j.fio" \
                --ioengine=nbd --uri="$(uri "$1")" || die "warm-up of $1 failed"
        done
    }
    kind file && { warm xa "$REGION"; warm mfile "$REGION"; }
    kind direct && { warm xda "$REGION"; warm mdirect "$REGION"; }
    kind spindle && { warm xsa "$SPIN_REGION"; warm mspin "$SPIN_REGION"; }
    for ((rep = 1; rep <= REPS; rep++)); do
        if kind file; then
            for s in xa xb mfile; do measure seqwrite-1m "$s" "$rep" "$JOBS/seqwrite-1m.fio"; done
            strata_must "dev:message mfile write_fanout caller"
            EXPORT=mfile measure seqwrite-1m mfile_caller "$rep" "$JOBS/seqwrite-1m.fio"
            strata_must "dev:message mfile write_fanout parallel"
            for s in xa mfile; do measure randread-4k "$s" "$rep" "$JOBS/randread-4k.fio"; done
        fi
        if kind spindle; then
            for s in xsa xsb mspin; do measure seqwrite-1m-spindle "$s" "$rep" "$JOBS/seqwrite-1m.fio" "$SPIN_REGION"; done
            # legs that wait (a modelled disk each): what writing them one after the other costs
            strata_must "dev:message mspin write_fanout caller"
            EXPORT=mspin measure seqwrite-1m-spindle mspin_caller "$rep" "$JOBS/seqwrite-1m.fio" "$SPIN_REGION"
            strata_must "dev:message mspin write_fanout parallel"
            for s in xsa mspin; do measure randread-4k-spindle "$s" "$rep" "$JOBS/randread-4k.fio" "$SPIN_REGION"; done
        fi
        if kind direct; then
            for s in xda xdb mdirect; do measure seqwrite-1m-direct "$s" "$rep" "$JOBS/seqwrite-1m.fio"; done
            for s in xda mdirect; do measure randread-4k-direct "$s" "$rep" "$JOBS/randread-4k.fio"; done
        fi
        if kind uneven; then
            strata_must "dev:message muneven read_policy round_robin"
            EXPORT=muneven measure randread-4k-uneven round_robin "$rep" "$JOBS/randread-4k.fio" "$SPIN_REGION"
            strata_must "dev:message muneven read_policy least_loaded"
            EXPORT=muneven measure randread-4k-uneven least_loaded "$rep" "$JOBS/randread-4k.fio" "$SPIN_REGION"
        fi
    done
    strata_cmd "mirror:status" && { echo "--- mirror:status after the run"; cat <<<"$STRATA_OUT"; } >"$RESULTS/status.txt"
    # medians, and the ratio of each repetition (the systems of one repetition ran back to back,
    # so a ratio is fairer than a ratio of medians on a shared machine), then their median
    val() { awk -F'\t' -v w="$1" -v s="$2" -v r="$3" -v f="$4" '$1==w && $2==s && $3==r && $f!="" {print $f}' "$RESULTS/raw.tsv"; }
    median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print ""; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
    med() { awk -F'\t' -v w="$1" -v s="$2" -v f="$3" '$1==w && $2==s && $f!="" {print $f}' "$RESULTS/raw.tsv" | median; }
    vals() { # WORKLOAD SYSTEM FIELD: the values of every repetition
        local r out=""
        for ((r = 1; r <= REPS; r++)); do out="$out${out:+, }$(val "$1" "$2" "$r" "$3")"; done
        echo "$out"
    }
    cpu_per_gib() { # WORKLOAD SYSTEM: median CPU seconds of the Strata JVM per GiB moved
        awk -F'\t' -v w="$1" -v s="$2" '$1==w && $2==s && $8>0 {printf "%.3f\n", $7 / ($8 / 1073741824)}' "$RESULTS/raw.tsv" | median
    }
    rep_ratios() { # WORKLOAD MIRROR FIELD LEG… : per repetition, mirror / the slowest leg alone
        local w=$1 m=$2 f=$3 r; shift 3
        for ((r = 1; r <= REPS; r++)); do
            local legs="" l
            for l in "$@"; do legs="$legs $(val "$w" "$l" "$r" "$f")"; done
            awk -v a="$(val "$w" "$m" "$r" "$f")" -v legs="$legs" 'BEGIN { n = split(legs, v, " "); if (a == "" || n == 0) exit;
                min = v[1]; for (i = 2; i <= n; i++) if (v[i] < min) min = v[i]; if (min > 0) printf "%.2f\n", a / min }'
        done
    }
    {
        echo "## mirror vs one leg, through NBD (fio nbd engine, $REPS repetitions)"
        echo
        echo "| workload | legs | leg alone (median) | mirror (median) | mirror / leg, per repetition | median ratio | goal |"
        echo "|---|---|---|---|---|---|---|"
        for row in "seqwrite-1m file 4 MiB/s ≥0.9 mfile xa xb" "seqwrite-1m file 4 MiB/s ≥0.9 mfile_caller xa xb" \
                   "randread-4k file 5 IOPS ≥1.5 mfile xa" \
                   "seqwrite-1m-spindle spindle 4 MiB/s ≥0.9 mspin xsa xsb" "seqwrite-1m-spindle spindle 4 MiB/s ≥0.9 mspin_caller xsa xsb" \
                   "randread-4k-spindle spindle 5 IOPS ≥1.5 mspin xsa" \
                   "seqwrite-1m-direct direct 4 MiB/s ≥0.9 mdirect xda xdb" "randread-4k-direct direct 5 IOPS ≥1.5 mdirect xda"; do
            read -r w lk f unit goal m legs <<<"$row"
            kind "$lk" || continue
            # shellcheck disable=SC2086
            ratios=$(rep_ratios "$w" "$m" "$f" $legs)
            alone=""
            for l in $legs; do alone="$alone${alone:+ / }$(med "$w" "$l" "$f")"; done
            base=${w%-spindle}; base=${base%-direct}
            note=""
            [[ "$m" == *_caller ]] && note=" (write_fanout=caller)"
            echo "| $base | two $lk legs$note | $alone $unit | $(med "$w" "$m" "$f") $unit | $(tr '\n' ' ' <<<"$ratios")| $(median <<<"$ratios")× | $goal× |"
        done
        echo
        echo "(seqwrite: against the slower of the two legs alone in the same repetition; randread: against one leg.)"
        kind file && echo "CPU of the Strata JVM per GiB written (median): file $(cpu_per_gib seqwrite-1m xa) alone, $(cpu_per_gib seqwrite-1m mfile) mirror;"
        kind direct && echo "direct $(cpu_per_gib seqwrite-1m-direct xda) alone, $(cpu_per_gib seqwrite-1m-direct mdirect) mirror (s/GiB)."
        echo
        if kind file && [ -s "$RESULTS/cpu.tsv" ]; then
            echo "### Where the CPU goes, file legs (medians of $REPS repetitions)"
            echo
            echo "Strata = the Strata JVM (every thread, /proc); fio = its job's usr+sys; cores = (Strata + fio CPU) / fio's runtime;"
            echo "machine = busy share of both cores (/proc/stat, everything on the machine); ctx = the JVM's context switches per request."
            echo
            echo "| workload | system | MiB/s | IOPS | Strata s/GiB | Strata µs/req | fio s/GiB | fio µs/req | cores | machine busy | ctx/req |"
            echo "|---|---|---|---|---|---|---|---|---|---|---|"
            for ws in "seqwrite-1m xa" "seqwrite-1m xb" "seqwrite-1m mfile" "seqwrite-1m mfile_caller" "randread-4k xa" "randread-4k mfile"; do
                read -r w sy <<<"$ws"
                awk -F'\t' -v w="$w" -v s="$sy" -v OFS=' | ' '
                    function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                        return n == 0 ? 0 : (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) }
                    FNR == 1 { f++ }
                    f == 1 && $1 == w && $2 == s && $8 > 0 { mibs[$3] = $4; iops[$3] = $5; cpu[$3] = $7; bytes[$3] = $8 }
                    f == 2 && $1 == w && $2 == s && ($3 in bytes) { n++; g = bytes[$3] / 1073741824; q = bytes[$3] / (w ~ /randread/ ? 4096 : 1048576)
                        a1[n] = mibs[$3]; a2[n] = iops[$3]; a3[n] = cpu[$3] / g; a4[n] = cpu[$3] / q * 1e6; a5[n] = $4 / g; a6[n] = $4 / q * 1e6
                        a7[n] = $5 > 0 ? (cpu[$3] + $4) / $5 : 0; a8[n] = $6; a9[n] = ($7 + $8) / q }
                    END { if (n) printf "| %s | %s | %.0f | %.0f | %.3f | %.2f | %.3f | %.2f | %.2f | %.0f%% | %.2f |\n", w, s,
                        med(a1, n), med(a2, n), med(a3, n), med(a4, n), med(a5, n), med(a6, n), med(a7, n), med(a8, n), med(a9, n) }' \
                    "$RESULTS/raw.tsv" "$RESULTS/cpu.tsv"
            done
            echo
            # if both cores are saturated, throughput goes as 1 / (CPU per GiB of Strata + fio): the bound
            bound() { # WORKLOAD MIRROR LEG…: per repetition, (Strata + fio CPU per GiB) of the legs' mean / of the mirror
                local w=$1 m=$2; shift 2
                awk -F'\t' -v w="$w" -v m="$m" -v legs=" $* " '
                    FNR == 1 { f++ }
                    f == 1 && $1 == w && $8 > 0 { cpu[$2, $3] = $7; g[$2, $3] = $8 / 1073741824 }
                    f == 2 && $1 == w && (($2, $3) in g) { per[$2, $3] = (cpu[$2, $3] + $4) / g[$2, $3]; reps[$3] = 1 }
                    END { for (r in reps) { sum = 0; k = 0; for (l in per) { split(l, x, SUBSEP); if (x[2] == r && index(legs, " " x[1] " ")) { sum += per[l]; k++ } }
                            if (k && ((m, r) in per)) printf "%.2f\n", (sum / k) / per[m, r] } }' "$RESULTS/raw.tsv" "$RESULTS/cpu.tsv" | sort -g | tr '\n' ' '
            }
            echo "CPU bound (the leg's CPU per GiB, Strata + fio, / the mirror's; what the throughput ratio comes to when both cores are"
            echo "saturated), per repetition, sorted: seq. writes $(bound seqwrite-1m mfile xa xb)(parallel), $(bound seqwrite-1m mfile_caller xa xb)(caller);" \
                 "random reads $(bound randread-4k mfile xa)."
            echo
        fi
        kind uneven && echo "Uneven legs (one file, one spindle), 4 KiB random reads, IOPS per repetition: round_robin $(vals randread-4k-uneven round_robin 5)," \
             "least_loaded $(vals randread-4k-uneven least_loaded 5); least_loaded / round_robin per repetition: $(tr '\n' ' ' <<<"$(rep_ratios randread-4k-uneven least_loaded 5 round_robin)")"
        if [ -s "$RESULTS/spindle.tsv" ]; then
            echo
            echo "Spindle counters during the sequential writes (all repetitions): $(awk -F'\t' '{r[$4]+=$5; s[$4]+=$6; b[$4]+=$7} END {
                for (d in r) printf "%s %d requests of %.2f MiB, %d seeks; ", d, r[d], b[d] / (r[d] ? r[d] : 1) / 1048576, s[d] }' "$RESULTS/spindle.tsv")"
        fi
        echo "Reads per leg after the run (mirror:status): $(grep -E '^  legs' "$RESULTS/status.txt" | tr -s ' ' | tr '\n' ';')"
        echo
    } | tee -a "$SUMMARY"
fi
echo "- uptime at end: $(uptime)" >>"$SUMMARY"
say "mirror bench: results in $RESULTS (summary.md)"
