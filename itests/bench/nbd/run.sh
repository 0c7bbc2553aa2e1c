#!/usr/bin/env bash
# NBD export benchmark: builds our server and the drivers (offline), then runs nbd_bench.py.
# Usage: itests/bench/nbd/run.sh [--runtime S] [--rounds N] [--pairs file,direct] [--markdown FILE]
# Needs: java 17+, maven, fio, nbdkit, qemu-nbd (Debian: fio nbdkit qemu-utils).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
for pair in fio:fio nbdkit:nbdkit qemu-nbd:qemu-utils java:openjdk-17-jdk-headless mvn:maven; do
  command -v "${pair%%:*}" >/dev/null || { echo "nbd bench: ${pair%%:*} missing; install the Debian package '${pair#*:}'" >&2; exit 1; }
done
(cd "$root" && mvn -B -o -q -pl bundles/nbd,bundles/driver-file,bundles/driver-direct,bundles/driver-memory -am \
  test-compile -DskipTests)
exec python3 "$here/nbd_bench.py" "$@"
