#!/usr/bin/env bash
# Issue 24's GPU pass in one call: memory pacing and scopes, the per-op
# cost with its allocation and CPU profiles, and the fused chain beside
# its peers. Build: tools/gpu/bundle-xz.sh array nn; carry [".gpu"].
set -u
cd "$(dirname "$0")/../.."
R=$PWD; out=${OUT:-/tmp/issue24}; mkdir -p "$out"
for f in .gpu/*.xz; do [ -e "$f" ] && xz -d -T4 "$f"; done; chmod +x .gpu/*.test .gpu/gocu 2>/dev/null
export GOCU_CACHE_DIR=/tmp/gc PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin GOCU_REQUIRE_GPU=1
t() { local d=$1 b=$2; shift 2; (cd "$d" && timeout "${TO:-240}" "$R/.gpu/$b.test" "$@" 2>&1); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "##### tests"
t array array -test.run 'Scope|Pacing|OverheadAllocsGPU' -test.v | grep -E '^(--- |ok|FAIL|PASS)|pacing_test|overhead_test'
t nn nn -test.run 'ScopedTraining' -test.v | grep -E '^(--- |    ---|ok|FAIL|PASS)'
t array array -test.run 'OverheadAllocsGPU' -test.count 3 -test.memprofilerate 1 -test.memprofile "$out/allocs.prof" | tail -3
echo "##### peers"
timeout 200 python3 .gpu/anchors/baseline.py > /tmp/anch.txt 2>&1; grep -E 'chain|vadd|launch' /tmp/anch.txt
nvcc -O2 -arch=sm_90 -o /tmp/lf .gpu/anchors/launch_floor.cu -lcuda && for i in 1 2 3; do /tmp/lf; done | grep -i launch
echo "##### benchmarks"
t array array -test.run '^$' -test.bench 'JitterGPU|OverheadGPU' -test.benchtime 1x -test.benchmem -test.cpuprofile "$out/ov.prof" | grep -E '^Bench|pacer'
t nn nn -test.run '^$' -test.bench 'ScopedStepGPU' -test.benchtime 3x | grep -E '^Bench|peak'
.gpu/gocu bench --compare "$out/baseline.json" --only add,chain_fused,chain_unfused,array_op_overhead 2>&1 | grep -v '^\s*[0-9]*/[0-9]* ' | tail -9
true
