#!/usr/bin/env bash
# The GPU test pass, for one 10-minute device call. Locally:
#   RACE="cuda" tools/gpu/bundle-xz.sh <package dirs...>   (plus MNIST's files in .gpu/mnist)
# then on the device, carrying [".gpu"]: bash tools/gpu/final-tests.sh
# Test functions only: the Examples that need the go command cannot run
# there (CI runs every Example). array, the longest, runs beside the
# others, and the root package (its out-of-memory probe takes the whole
# GPU) runs after both, with a soak of GOCU_SOAK (default 60s).
set -u
# A GPU test that cannot reach the GPU or a CUDA library fails here instead of skipping.
export GOCU_REQUIRE_GPU=1
cd "$(dirname "$0")/../.."
root=$PWD
out=${OUT:-/tmp/gpu-pass}; mkdir -p "$out"; logs=/tmp/gpu-logs; mkdir -p "$logs"
for f in .gpu/*.xz; do [ -e "$f" ] && xz -d -T4 "$f"; done
chmod +x .gpu/*.test .gpu/gocu 2>/dev/null
[ -d .gpu/mnist ] && export GOCU_MNIST_DIR=$root/.gpu/mnist
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader | tee "$out/gpu.txt"
pkg() { # name dir cache [pattern]
  local t0=$SECONDS
  (cd "$root/$2" && GOCU_CACHE_DIR=$3 timeout 450 "$root/.gpu/$1.test" -test.run "${4:-^Test}" -test.v -test.timeout 440s > "$logs/$1.log" 2>&1)
  echo "$2 rc=$? $((SECONDS - t0))s"
}
(pkg array array /tmp/cache-a) > "$logs/group-a.txt" 2>&1 &
while read -r name rel; do
  case $name in array|root) continue;; esac
  pkg "$name" "$rel" /tmp/cache-b
done < .gpu/packages | tee "$logs/group-b.txt"
wait
cat "$logs/group-a.txt"
GOCU_SOAK=${GOCU_SOAK:-60s} pkg root . /tmp/cache-b | tee -a "$logs/group-a.txt"
for t in .gpu/race-*.test; do
  [ -e "$t" ] || continue
  n=$(basename "$t" .test); rel=$(echo "${n#race-}" | tr '_' '/')
  (cd "$rel" && GOCU_CACHE_DIR=/tmp/cache-b timeout 200 "$root/$t" -test.run "${RACERUN:-^Test}" -test.v > "$logs/$n.log" 2>&1; echo "race $rel rc=$?") | tee -a "$logs/group-b.txt"
done
cd "$logs" && for l in *.log; do
  echo "$l pass=$(grep -c -- '--- PASS' "$l") skip=$(grep -c -- '--- SKIP' "$l") fail=$(grep -c -- '--- FAIL' "$l")"
done | tee counts.txt
grep -h -- '--- FAIL' *.log | head -40
tar czf "$out/logs.tgz" *.log *.txt
