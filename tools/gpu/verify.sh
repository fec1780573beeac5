#!/usr/bin/env bash
# One device call that checks the newest GPU paths and measures them beside
# their peers: low-precision arrays, the per-operation cost, training.
# Build with: tools/gpu/bundle-xz.sh array cublas cuda . internal/mnisttrain
# (+ .gpu/mnist with GoMNIST's four files), then run with carry [".gpu"].
set -u
# A GPU test that cannot reach the GPU or a CUDA library fails here instead of skipping.
export GOCU_REQUIRE_GPU=1
cd "$(dirname "$0")/../.."
R=$PWD; out=${OUT:-/tmp/verify}; mkdir -p "$out"
for f in .gpu/*.xz; do [ -e "$f" ] && xz -d -T4 "$f"; done; chmod +x .gpu/*.test .gpu/gocu 2>/dev/null
export GOCU_CACHE_DIR=/tmp/gc PYTHONUNBUFFERED=1 GOCU_MNIST_DIR=$R/.gpu/mnist PATH=$PATH:/usr/local/cuda/bin
t() { local d=$1 b=$2; shift 2; (cd "$d" && timeout "${TO:-240}" "$R/.gpu/$b.test" "$@" 2>&1); }
{
echo "##### tests"
t array array -test.run 'Lowp|Int8|Storage|Quantiz|Scaled|Promotion|FP8|NumPyFloat16|OverheadAllocs|Capture|Pending|Interop|UserKernel' -test.v | grep -E '^(--- |FAIL|ok|PASS|panic)' | grep -v -- '--- PASS: .*/'
t cublas cublas -test.run 'Lt|GPU' -test.v | grep -E '^(--- |FAIL|ok|PASS|panic)'
t internal/mnisttrain internal_mnisttrain -test.v | grep -E '^(--- |FAIL|ok|PASS|panic)|accuracy'
echo "##### per-op cost"
t array array -test.run '^$' -test.bench 'OverheadGPU' -test.benchtime 20x -test.count 3 -test.cpuprofile "$out/ov.prof" | grep Bench
t cuda cuda -test.run '^$' -test.bench '^BenchmarkLaunch$|DriverCall' -test.benchmem -test.count 3 | grep Bench
t . root -test.run '^$' -test.bench 'LaunchGPU' -test.benchmem -test.count 3 | grep Bench
nvcc -O2 -arch=sm_90 -o /tmp/lf .gpu/anchors/launch_floor.cu -lcuda && /tmp/lf
echo "##### training"
t internal/mnisttrain internal_mnisttrain -test.run '^$' -test.bench 'MLPStep/gpu|Adam/gpu' -test.benchtime 300x | grep Bench
TO=300 t internal/mnisttrain internal_mnisttrain -test.run '^$' -test.bench 'MLPEpoch/gpu' -test.benchtime 2x | grep Bench
OUT=$out timeout 200 python3 .gpu/anchors/train_mlp.py 2>&1 | tail -12
echo "##### lowp arrays"
t array array -test.run '^$' -test.bench 'LowpMatMulGPU|QuantizeRowsGPU|SoftmaxRowsGPU|AddBF16GPU' -test.benchtime 20x | grep Bench
OUT=$out timeout 200 python3 .gpu/anchors/baseline_lowp.py 2>&1 | grep -vi warn | tail -22
} 2>&1 | tee "$out/verify.txt"
