#!/usr/bin/env bash
# The GPU test pass: every bundled package's tests (Examples need the go
# command, which the GPU machine lacks, so only Test functions run there),
# then the race-enabled cuda binary if bundled. Logs archived under $OUT.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/gpu-pass}; mkdir -p "$out"
for f in .gpu/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
export GOCU_CACHE_DIR=/tmp/gocu-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader | tee "$out/gpu.txt"
bash .gpu/run.sh '^Test' > "$out/tests.txt" 2>&1
grep -E '^(=== |--- FAIL|FAIL|ok|panic|gpu-bundle)' "$out/tests.txt"
for rel in cuda; do
  [ -x .gpu/race-$rel.test ] || continue
  echo "=== race $rel"; (cd $rel && timeout 300 ../.gpu/race-$rel.test -test.run '^Test' 2>&1 | tail -4) | tee "$out/race-$rel.txt"
done
cp /tmp/*.log "$out/" 2>/dev/null
cd "$out" && for l in *.log; do [ -e "$l" ] && { passes=$(grep -c -- '--- PASS' "$l"); skips=$(grep -c -- '--- SKIP' "$l"); fails=$(grep -c -- '--- FAIL' "$l"); echo "$l pass=$passes skip=$skips fail=$fails"; }; done | tee counts.txt
tar czf logs.tgz *.log *.txt && rm -f *.log
