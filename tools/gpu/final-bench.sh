#!/usr/bin/env bash
# The GPU benchmark pass in two device calls, each with its peers in the
# same call so that every ratio comes from one run.
#   part 1: baseline.py and launch_floor.cu; gocu bench's runtime, lecture,
#           Go-kernel and array workloads; the per-operation Go benchmarks
#   part 2: baseline_lowp.py and train_mlp.py; gocu bench's lowp, training
#           and tensor-core workloads; the training benchmarks (bf16 too)
# Build: tools/gpu/bundle-xz.sh . cuda array internal/mnisttrain cmd/gocu
# (+ MNIST's files in .gpu/mnist), then on the device, carrying [".gpu"]:
#   bash tools/gpu/final-bench.sh 1   (then 2)
set -u
# A GPU test that cannot reach the GPU or a CUDA library fails here instead of skipping.
export GOCU_REQUIRE_GPU=1
cd "$(dirname "$0")/../.."
R=$PWD; part=${1:-1}; out=${OUT:-/tmp/gpu-bench}; mkdir -p "$out"; logs=/tmp/bench-logs; mkdir -p "$logs"
for f in .gpu/*.xz; do [ -e "$f" ] && xz -d -T4 "$f"; done; chmod +x .gpu/*.test .gpu/gocu 2>/dev/null
export GOCU_CACHE_DIR=/tmp/gc PYTHONUNBUFFERED=1 GOCU_MNIST_DIR=$R/.gpu/mnist PATH=$PATH:/usr/local/cuda/bin OUT=$logs
day=$(date -u +%F)
t() { local d=$1 b=$2; shift 2; (cd "$d" && timeout "${TO:-240}" "$R/.gpu/$b.test" "$@" 2>&1); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
if [ "$part" = 1 ]; then
  echo "##### peers"; timeout 240 python3 .gpu/anchors/baseline.py > "$logs/anchors.txt" 2>&1; tail -4 "$logs/anchors.txt"
  nvcc -O2 -arch=sm_90 -o /tmp/lf .gpu/anchors/launch_floor.cu -lcuda && for i in 1 2 3; do /tmp/lf; done | tee "$logs/floor.txt"
  echo "##### gocu bench"
  .gpu/gocu bench --compare "$logs/baseline.json" --json "$logs/bench1-$day.json" --plot "$logs/roofline-$day.png" \
    --only copy,sgemm_fp32,sgemm_tf32,launch,graph,h2d_pageable,h2d_pinned,d2h_pinned,nvrtc_cold,nvrtc_warm,gray,matmul_naive,matmul_tiled,gray_go,gray_fast,matmul_naive_go,matmul_tiled_go,sgemm_go,add,sum,chain_fused,chain_unfused,matmul_array_fp32,matmul_array_tf32,array_op_overhead 2>&1 | grep -v '^\s*[0-9]*/[0-9]* ' | tee "$logs/bench1.txt"
  echo "##### per-op"
  t array array -test.run '^$' -test.bench 'OverheadGPU' -test.benchtime 20x -test.count 3 -test.cpuprofile "$logs/ov.prof" | grep Bench
  t cuda cuda -test.run '^$' -test.bench '^BenchmarkLaunch$|DriverCall' -test.benchmem -test.count 3 | grep Bench
  t . root -test.run '^$' -test.bench 'LaunchGPU' -test.benchmem -test.count 3 | grep Bench
  t array array -test.run 'TestGPUScaledMatMul|TestOverheadAllocsGPU' -test.v | grep -E '^(--- |ok|FAIL|PASS)'
else
  echo "##### peers"
  timeout 200 python3 .gpu/anchors/baseline_lowp.py 2>&1 | grep -vi warn | tail -24
  timeout 200 python3 .gpu/anchors/train_mlp.py 2>&1 | tail -10
  python3 -c "import json,sys; d={}; [d.update(json.load(open(f))) for f in sys.argv[1:]]; json.dump(d, open('$logs/peers2.json','w'), indent=1)" "$logs/baseline_lowp.json" "$logs/train_mlp.json"
  echo "##### gocu bench"
  .gpu/gocu bench --compare "$logs/peers2.json" --json "$logs/bench2-$day.json" \
    --only matmul_bf16,matmul_fp16,matmul_int8,matmul_int8_tn,matmul_fp8,quantize_rows,softmax_rows,add_bf16,gemm_bf16_go,flash_attn_go,flash_attn_causal_go,mlp_step_b64_eager,mlp_step_b64_graph,mlp_step_b1024_eager,mlp_step_b1024_graph,mlp_epoch_b64_eager,mlp_epoch_b64_graph 2>&1 | grep -v '^\s*[0-9]*/[0-9]* ' | tee "$logs/bench2.txt"
  echo "##### training"
  t internal/mnisttrain internal_mnisttrain -test.run '^$' -test.bench 'MLPStep/gpu|Adam/gpu' -test.benchtime 300x | grep Bench
  echo "##### tests that need MNIST"
  t internal/mnisttrain internal_mnisttrain -test.run '^Test' -test.v > "$logs/mnisttrain.log"; grep -E '^(--- |ok|FAIL|PASS)|accuracy' "$logs/mnisttrain.log"
  TO=200 t cmd/gocu cmd_gocu -test.run '^Test' -test.v > "$logs/cmd_gocu.log"; grep -E '^(--- FAIL|ok|FAIL|PASS)' "$logs/cmd_gocu.log"
  t array array -test.run 'TestGPUScaledMatMul|TestOverheadAllocsGPU' -test.v 2>&1 | grep -v '^=== ' | head -20
  for l in "$logs"/*.log; do echo "$(basename "$l") pass=$(grep -c -- '--- PASS' "$l") skip=$(grep -c -- '--- SKIP' "$l") fail=$(grep -c -- '--- FAIL' "$l")"; done
fi
cd "$logs" && tar czf "$out/bench$part.tgz" --exclude='*.prof' . && cp ./*.prof "$out/" 2>/dev/null; true
