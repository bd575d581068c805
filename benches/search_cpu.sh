#!/bin/bash
# CPU (user + sys) and wall time of `lakestar search`, process start included: ten
# questions asked twice against one index. BENCHMARKS.md, "Search latency".
# usage: benches/search_cpu.sh BIN INDEX
set -euo pipefail
BIN=$1; IDX=$2
qs=("sales in emea for q3 2019" "sensor readings station 42 in march 2019" "error events in the logs"
    "configuration of the service timeout" "monthly revenue by region" "temperature humidity sensor"
    "json events user login" "tsv export of orders" "documentation about deployment" "quarterly sales report")
t=$(mktemp)
for r in 1 2; do for q in "${qs[@]}"; do
  /usr/bin/time -f "%U %S %e" -o "$t" "$BIN" search "$q" --index "$IDX" -k 10 >/dev/null 2>&1
  cat "$t"
done; done | sort -k3 -n | awk '{c+=$1+$2; w[NR]=$3} END {printf "cpu %.2f s total, %.1f ms/search; wall p50 %.0f ms\n", c, 1000*c/NR, 1000*w[int((NR+1)/2)]}'
rm -f "$t"
