#!/usr/bin/env bash
# TLS cost of NBD exports (issue 17): the suite's 4 KiB random write and 1 MiB sequential write
# jobs (jobs/randwrite-4k.fio, jobs/seqwrite-1m.fio) against Strata, nbdkit and qemu-nbd, each
# in plaintext and with TLS required (X.509 certificates certtool makes for the run), all in one
# run, systems in alternation. Usage:
#
#   itests/bench/tls/run.sh [--quick] [--reps N] [--out DIR] [--no-docs]
#
# Servers (all serving RAM, so the transport is what is measured):
#   strata   bin/strata --daemon, a `memory` device exported twice: plaintext, and
#            --tls require --tls-creds DIR
#   nbdkit   nbdkit memory, and nbdkit --tls=require --tls-certificates DIR memory
#   qemu     qemu-nbd on a raw file in /dev/shm, and the same with
#            --object tls-creds-x509,dir=DIR,endpoint=server,verify-peer=off --tls-creds
# The client: fio's nbd engine cannot be given a certificate directory (libnbd refuses the URI's
# tls-certificates= unless the program allows local files, which fio does not; as root libnbd
# would only look in /etc/pki/libnbd), so every fio job goes through a local nbdkit nbd-plugin
# proxy (libnbd: a real TLS client) - `tls=require tls-certificates=DIR` for the TLS servers,
# plaintext for the others, one upstream connection per fio connection - the same hop for
# every system. Server CPU is the server process's own (utime+stime from /proc, the proxy
# excluded), per GiB written.
# Prints medians and the TLS/plaintext ratios; writes summary.txt (with uptime), raw.tsv, fio
# JSON and logs under --out (default itests/bench/target/tls-DATE), and the "NBD over TLS"
# section of docs/benchmarks.md (unless --no-docs). Needs the distribution
# (mvn -B -q -DskipTests package), fio, nbdkit, qemu-nbd, nbdinfo, certtool, jq.
set -u
set -o pipefail
{
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=$(cd "$HERE/.." && pwd)
ROOT=$(cd "$BENCH/../.." && pwd)
JOBS=$BENCH/jobs
QUICK=0 REPS=3 OUT="" DOCS=1
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --reps) REPS=${2:?--reps needs a number}; shift ;;
        --out) OUT=${2:?--out needs a directory}; shift ;;
        --no-docs) DOCS=0 ;;
        -h|--help) sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "tls bench: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
case "$REPS" in ''|*[!0-9]*|0) echo "tls bench: --reps needs a positive number" >&2; exit 2 ;; esac
for pair in fio:fio nbdkit:nbdkit qemu-nbd:qemu-utils nbdinfo:libnbd-bin certtool:gnutls-bin jq:jq setsid:util-linux; do
    command -v "${pair%%:*}" >/dev/null 2>&1 \
        || { echo "tls bench: '${pair%%:*}' not found; install the Debian package '${pair#*:}'" >&2; exit 1; }
done

. "$BENCH/lib/common.sh"
STRATA_DIST=${STRATA_DIST:-$ROOT/distribution/target/strata}
[ -x "$STRATA_DIST/bin/strata" ] \
    || { echo "tls bench: no distribution at $STRATA_DIST; build it with: mvn -B -q -DskipTests package" >&2; exit 1; }

. "$BENCH/lib/session.sh"
bench_session strata-tlsbench "$BENCH/target/tls-$(date -u +%Y%m%d-%H%M%S)"

if [ $QUICK -eq 1 ]; then
    MODE=quick REGION=256M RUNTIME=3 IO=256M WARM=4
    [ "$REPS" -eq 3 ] && REPS=1
else
    MODE=full REGION=1G RUNTIME=10 IO=1G WARM=8
fi
WORKLOADS="randwrite-4k seqwrite-1m"
SERVERS="strata nbdkit qemu"
SHM=/dev/shm
[ -d "$SHM" ] && [ -w "$SHM" ] || SHM=$DATA
say "tls bench: $MODE mode, $REPS rep(s), region $REGION, ${RUNTIME}s per job; results in $RESULTS"
uptime >"$RESULTS/uptime-start.txt"

# --- certificates (the layout qemu and libnbd use) --------------------------------------
CERTS=$BENCH_TMP/certs
mkdir -p "$CERTS/server" "$CERTS/client"
(
    cd "$CERTS" || exit 1
    certtool --generate-privkey --outfile ca-key.pem
    printf 'cn = Strata bench CA\nca\ncert_signing_key\nexpiration_days = 2\n' >ca.info
    certtool --generate-self-signed --load-privkey ca-key.pem --template ca.info --outfile ca-cert.pem
    certtool --generate-privkey --outfile server/server-key.pem
    printf 'cn = localhost\ndns_name = localhost\nip_address = 127.0.0.1\ntls_www_server\nencryption_key\nsigning_key\nexpiration_days = 2\n' >server.info
    certtool --generate-certificate --load-ca-certificate ca-cert.pem --load-ca-privkey ca-key.pem \
        --load-privkey server/server-key.pem --template server.info --outfile server/server-cert.pem
    cp ca-cert.pem server/ && cp ca-cert.pem client/
) >"$LOGS/certtool.log" 2>&1 || die "certtool failed; see $LOGS/certtool.log"

# --- servers -------------------------------------------------------------------------------
declare -A PORT_OF=() PROXY_OF=() EXPORT_OF=()
# uri_of SYSTEM: what the proxy connects to (and what wait_for checks)
uri_of() {
    local s=$1 scheme=nbd q=""
    [[ $s == *-tls ]] && scheme=nbds q="?tls-certificates=$CERTS/client"
    echo "$scheme://127.0.0.1:${PORT_OF[$s]}/${EXPORT_OF[$s]}$q"
}
wait_for() { # URI DEADLINE_S NAME
    local deadline=$(($(date +%s) + $2))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        timeout 5 nbdinfo --size "$1" >/dev/null 2>&1 && return 0
        server_alive "$3" || return 1
        sleep 0.2
    done
    return 1
}

start_strata() {
    local home=$BENCH_TMP/strata-home
    cp -a "$STRATA_DIST" "$home"
    rm -f "$home"/deploy/*.cfg
    rm -rf "$home/var" && mkdir -p "$home/var"
    pick_port; PORT_OF[strata-plain]=$PORT EXPORT_OF[strata-plain]=m0
    pick_port; PORT_OF[strata-tls]=$PORT EXPORT_OF[strata-tls]=m0t
    local script="dev:create --transient m0 memory size=$REGION; nbd:export m0 --port ${PORT_OF[strata-plain]};"
    script+=" nbd:export m0 --name m0t --port ${PORT_OF[strata-tls]} --tls require --tls-creds $CERTS/server"
    start_server strata "$LOGS/strata.log" bash -c 'cd "$1" && exec bin/strata --daemon --no-default-stack -c "$2"' \
        strata "$home" "$script"
    wait_for "$(uri_of strata-plain)" 180 strata && wait_for "$(uri_of strata-tls)" 60 strata \
        || die "Strata did not start; see $LOGS/strata.log"
    PGIDS[strata-plain]=${PGIDS[strata]} PGIDS[strata-tls]=${PGIDS[strata]}
}

start_nbdkit() { # SYSTEM TLS_ARGS...
    local s=$1; shift
    pick_port; PORT_OF[$s]=$PORT EXPORT_OF[$s]=""
    start_server "$s" "$LOGS/$s.log" nbdkit -f --exit-with-parent -i 127.0.0.1 -p "$PORT" "$@" memory "$REGION"
    wait_for "$(uri_of "$s")" 30 "$s" || die "$s did not start; see $LOGS/$s.log"
}

start_qemu() { # SYSTEM TLS_ARGS...
    local s=$1; shift
    pick_port; PORT_OF[$s]=$PORT EXPORT_OF[$s]=q
    truncate -s "$REGION" "$SHM/strata-tlsbench-$$-$s.img"
    echo "$SHM/strata-tlsbench-$$-$s.img" >>"$STATE_DIR/shm-files"
    start_server "$s" "$LOGS/$s.log" qemu-nbd -f raw -x q -b 127.0.0.1 -p "$PORT" -e 8 --persistent \
        --cache=writeback --aio=threads "$@" "$SHM/strata-tlsbench-$$-$s.img"
    wait_for "$(uri_of "$s")" 30 "$s" || die "$s did not start; see $LOGS/$s.log"
}

# the client side: a plaintext nbdkit proxy per system, TLS to the server where it requires it
start_proxy() { # SYSTEM
    local s=$1 tls=(tls=off)
    [[ $s == *-tls ]] && tls=(tls=require "tls-certificates=$CERTS/client")
    pick_port; PROXY_OF[$s]=$PORT
    start_server "proxy-$s" "$LOGS/proxy-$s.log" nbdkit -f --exit-with-parent -i 127.0.0.1 -p "$PORT" \
        nbd hostname=127.0.0.1 "port=${PORT_OF[$s]}" "export=${EXPORT_OF[$s]}" "${tls[@]}"
    wait_for "nbd://127.0.0.1:$PORT/" 30 "proxy-$s" || die "the proxy of $s did not start; see $LOGS/proxy-$s.log"
}

cleanup_shm() { [ -f "$STATE_DIR/shm-files" ] && xargs -r rm -f <"$STATE_DIR/shm-files"; }
trap 'cleanup_shm; bench_cleanup' EXIT

start_strata
start_nbdkit nbdkit-plain
start_nbdkit nbdkit-tls --tls=require --tls-certificates "$CERTS/server"
start_qemu qemu-plain
start_qemu qemu-tls --object "tls-creds-x509,id=tls0,dir=$CERTS/server,endpoint=server,verify-peer=off" --tls-creds tls0
SYSTEMS=""
for srv in $SERVERS; do SYSTEMS+=" $srv-plain $srv-tls"; done
for s in $SYSTEMS; do start_proxy "$s"; done

# Written once over the region first (not measured): RAM is allocated, page faults are not measured.
export BENCH_REGION=$REGION BENCH_IO=$IO BENCH_RUNTIME=$RUNTIME
for s in $SYSTEMS; do
    timeout 600 fio --name=prefill --ioengine=nbd --uri="nbd://127.0.0.1:${PROXY_OF[$s]}/" --rw=write --bs=4m \
        --iodepth=2 --size="$REGION" >"$LOGS/prefill-$s.log" 2>&1 || say "tls bench: pre-writing $s failed (ignored)"
done

# Warm-up (not measured): every job on every system for WARM s. Strata's JVM compiles its TLS
# path (JSSE's AES-GCM intrinsics need C2) in the first seconds: cold, a 3 s run measured
# 3,800 random-write IOPS where the same server warm did 21,000 in the same load.
for w in $WORKLOADS; do
    for s in $SYSTEMS; do
        BENCH_RUNTIME=$WARM timeout 600 fio --ioengine=nbd --uri="nbd://127.0.0.1:${PROXY_OF[$s]}/" "$JOBS/$w.fio" \
            >"$LOGS/warm-$w-$s.log" 2>&1 || say "tls bench: warm-up of $w on $s failed (ignored)"
    done
done

# --- measure: every rep runs every workload on every system, in alternation -----------------
RUN_TOTAL=$((REPS * 2 * $(wc -w <<<"$SYSTEMS")))
for ((rep = 1; rep <= REPS; rep++)); do
    for w in $WORKLOADS; do
        for s in $SYSTEMS; do
            RUN_NO=$((RUN_NO + 1))
            progress "$w on $s (rep $rep)"
            json=$RESULTS/json/$w-$s-$rep.json
            if run_fio_job "$json" "${PGIDS[$s]}" "$JOBS/$w.fio" --ioengine=nbd --uri="nbd://127.0.0.1:${PROXY_OF[$s]}/"; then
                read -r mibs iops p99 cpu bytes secs <<<"$FIO_RESULT"
                record "$w" "$s" "$rep" "$mibs" "$iops" "$p99" "$cpu" "$bytes" "$secs" ""
            else
                record "$w" "$s" "$rep" "" "" "" "" "" "" "fio failed"
            fi
        done
    done
done
uptime >"$RESULTS/uptime-end.txt"

# --- report -----------------------------------------------------------------------------------
# median FIELD W S: the median of a raw.tsv column (4 MiB/s, 5 IOPS, 7 CPU s, 8 bytes)
median() {
    awk -F'\t' -v f="$1" -v w="$2" -v s="$3" '$1 == w && $2 == s && $f != "" { print $f }' "$RESULTS/raw.tsv" \
        | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# cpu_per_gib W S: median over reps of the server's CPU seconds per GiB written
cpu_per_gib() {
    awk -F'\t' -v w="$1" -v s="$2" '$1 == w && $2 == s && $8 > 0 { printf "%.3f\n", $7 / ($8 / 1073741824) }' "$RESULTS/raw.tsv" \
        | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'; }

commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "?")
{
    echo "NBD over TLS: $MODE mode, $REPS rep(s) (medians), region $REGION, ${RUNTIME} s per job, $(date -u +%Y-%m-%d\ %H:%M) UTC, commit $commit"
    echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); $(java -version 2>&1 | head -n 1)"
    echo "load average at start: $(sed 's/.*load average: *//' "$RESULTS/uptime-start.txt"); at end: $(sed 's/.*load average: *//' "$RESULTS/uptime-end.txt")"
    echo "client: fio's nbd engine through a local nbdkit nbd-plugin proxy (the TLS client) for every system; every job warmed up ${WARM} s first"
    echo
    echo "| job | server | plaintext IOPS | TLS IOPS | TLS/plain IOPS | plaintext MiB/s | TLS MiB/s | server CPU s/GiB plain | server CPU s/GiB TLS | TLS/plain CPU |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    for w in $WORKLOADS; do
        for srv in $SERVERS; do
            pi=$(median 5 "$w" "$srv-plain"); ti=$(median 5 "$w" "$srv-tls")
            pm=$(median 4 "$w" "$srv-plain"); tm=$(median 4 "$w" "$srv-tls")
            pc=$(cpu_per_gib "$w" "$srv-plain"); tc=$(cpu_per_gib "$w" "$srv-tls")
            echo "| $w | $srv | ${pi:--} | ${ti:--} | $(ratio "$ti" "$pi") | ${pm:--} | ${tm:--} | ${pc:--} | ${tc:--} | $(ratio "$tc" "$pc") |"
        done
    done
    echo
    echo "Strata vs the peers, TLS (Strata/peer):"
    for w in $WORKLOADS; do
        for peer in nbdkit qemu; do
            echo "- $w, Strata/$peer: IOPS $(ratio "$(median 5 "$w" strata-tls)" "$(median 5 "$w" "$peer-tls")"), server CPU per GiB $(ratio "$(cpu_per_gib "$w" strata-tls)" "$(cpu_per_gib "$w" "$peer-tls")")"
        done
    done
} >"$RESULTS/summary.txt"
cat "$RESULTS/summary.txt" >&2

if [ $DOCS -eq 1 ]; then
    doc=$ROOT/docs/benchmarks.md
    section=$(
        echo "<!-- tls-bench:begin (generated by itests/bench/tls/run.sh; edits here are overwritten) -->"
        echo "## NBD over TLS (issue 17)"
        echo
        echo '```'
        echo "itests/bench/tls/run.sh$([ $QUICK -eq 1 ] && echo ' --quick')$([ "$REPS" -ne 1 ] && [ $QUICK -eq 1 ] && echo " --reps $REPS")"
        echo '```'
        echo
        echo "Measured under load (a shared 2-core machine; other work ran at the same time): compare"
        echo "the ratios within this run, not the absolute figures with other runs."
        echo
        sed -n '1,4p' "$RESULTS/summary.txt" | sed 's/$/  /'
        sed -n '5,$p' "$RESULTS/summary.txt"
        echo "<!-- tls-bench:end -->"
    )
    if grep -q '<!-- tls-bench:begin' "$doc"; then
        awk -v repl="$section" '
            /<!-- tls-bench:begin/ { print repl; skip = 1; next }
            /<!-- tls-bench:end -->/ { skip = 0; next }
            !skip { print }' "$doc" >"$doc.tmp" && mv "$doc.tmp" "$doc"
    else
        printf '\n%s\n' "$section" >>"$doc"
    fi
    say "tls bench: wrote the 'NBD over TLS' section of docs/benchmarks.md"
fi
exit 0
}
