#!/usr/bin/env bash
# Spindle model benchmark (not run by tests or CI): prints sequential vs random IOPS and MB/s of
# the spindle target in real time, next to the model's prediction, and the sequential/random ratio.
# Usage: itests/bench/spindle/run.sh [seconds-per-workload=3] [modelled-disk-GiB=100]
set -euo pipefail
cd "$(dirname "$0")/../../.."
if [ ! -d bundles/testkit-targets/target/classes ] || [ ! -d bundles/api/target/classes ]; then
  mvn -B -q -o -pl bundles/testkit-targets -am compile
fi
exec java -cp bundles/api/target/classes:bundles/testkit-targets/target/classes itests/bench/spindle/SpindleBench.java "$@"
