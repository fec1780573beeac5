#!/usr/bin/env bash
# Device side of the tensor-core GPU pass (issue 15), after
# tools/gpu/tensor-bundle.sh built .gpu/ here:
#   bash tools/gpu/tensor.sh            # tests, resources, benchmarks, peers
#   NCU=1 bash tools/gpu/tensor.sh      # and one ncu-profiled launch per kernel
# Logs go to $OUT (or /tmp/gpu-tensor); a table of ratios is printed last.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd); cd "$root"
out=${OUT:-/tmp/gpu-tensor}; mkdir -p "$out"
for f in .gpu/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
export GOCU_CACHE_DIR=/tmp/gocu-cache PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader | tee "$out/gpu.txt"
kt=$root/.gpu/internal_lecture.test

echo "##### correctness on the GPU (full sizes; sim cases run too)"
(cd internal/lecture && timeout 900 "$kt" -test.run 'TestGemmBF16$|TestFlashAttention$' -test.v 2>&1) > "$out/tests-kernels.txt"
grep -E '^(---|ok|FAIL|PASS|panic)|relative Frobenius|want' "$out/tests-kernels.txt" | grep -v -- '--- PASS: .*/sim' | head -60
(cd gen && timeout 600 ../.gpu/gen.test -test.run 'GPU' -test.v 2>&1) > "$out/tests-gen.txt"; grep -E '^(--- |ok|FAIL|PASS|panic)' "$out/tests-gen.txt" | head -30
(cd lowp && timeout 600 ../.gpu/lowp.test -test.run 'GPU' -test.v 2>&1) > "$out/tests-lowp.txt"; grep -E '^(--- |ok|FAIL|PASS|panic)' "$out/tests-lowp.txt" | head -10

echo "##### resources (registers, spills) and the tensor instructions in SASS"
.gpu/gocu compile .gpu/kernels.cu 2>&1 | grep -E 'GemmBF16|FlashAttention|SGEMM|error|warning' | tee "$out/resources.txt"
if command -v ptxas >/dev/null; then
  .gpu/gocu compile .gpu/kernels.cu --ptx -o /tmp/kernels.ptx >/dev/null 2>&1 &&
    ptxas -arch=sm_90 -v /tmp/kernels.ptx -o /tmp/kernels.cubin 2>&1 | grep -A1 -E 'GemmBF16|FlashAttention' | tee -a "$out/resources.txt"
  command -v cuobjdump >/dev/null && cuobjdump -sass /tmp/kernels.cubin > "$out/kernels.sass" 2>&1 &&
    for k in GemmBF16 FlashAttention128 FlashAttention64; do
      awk -v k="$k" '/Function : /{on=($3==k)} on' "$out/kernels.sass" > /tmp/$k.sass
      echo "$k SASS: $(grep -c HMMA /tmp/$k.sass) HMMA, $(grep -c LDSM /tmp/$k.sass) LDSM, $(grep -c LDGSTS /tmp/$k.sass) LDGSTS, $(grep -cE 'LDL|STL' /tmp/$k.sass) local-memory ops"
    done | tee -a "$out/resources.txt"
fi

echo "##### benchmarks"
(cd internal/lecture && timeout 900 "$kt" -test.run '^$' -test.bench 'GPU(GemmBF16|FlashAttention|SGEMM$|CublasSGEMM)' -test.benchtime 20x 2>&1) | tee "$out/bench.txt" | grep -E 'Benchmark|FAIL|panic|skip'

echo "##### peers (torch, same call)"
OUT="$out" python3 .gpu/anchors/baseline_lowp.py > "$out/baseline_lowp.txt" 2>&1; grep -E 'bf16|sdpa|device' "$out/baseline_lowp.txt"

if [ "${NCU:-0}" = 1 ] && command -v ncu >/dev/null; then
  echo "##### ncu (one launch each)"
  for k in GemmBF16:GPUGemmBF16 FlashAttention128:GPUFlashAttention128$; do
    (cd internal/lecture && timeout 600 ncu --kernel-name "${k%%:*}" --launch-skip 3 --launch-count 1 --section SpeedOfLight \
      --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats \
      "$kt" -test.run '^$' -test.bench "${k#*:}" -test.benchtime 1x 2>&1) > "$out/ncu-${k%%:*}.txt"
    grep -E 'Duration|Throughput|Registers|Achieved Occupancy|Stall|Issue Slot|Pipe' "$out/ncu-${k%%:*}.txt" | head -25
  done
fi

echo "##### summary (ratios against the peers of this call)"
python3 - "$out/bench.txt" "$out/baseline_lowp.json" <<'PY' | tee "$out/summary.txt"
import json, re, sys
bench = {}
for line in open(sys.argv[1]):
    m = re.match(r'Benchmark(\S+?)(-\d+)?\s.*?([\d.]+) TFLOP/s', line)
    if m: bench[m.group(1)] = float(m.group(3))
try: peer = json.load(open(sys.argv[2]))
except Exception: peer = {}
rows = [("GPUGemmBF16", "bf16 GEMM 4096^3", "matmul_4096_bf16_TFLOPs", 0.60),
        ("GPUFlashAttention128", "flash attention D=128", "sdpa_flash_bf16_full_TFLOPs", 0.60),
        ("GPUFlashAttention128Causal", "flash attention D=128 causal", "sdpa_flash_bf16_causal_TFLOPs", 0.60),
        ("GPUFlashAttention64", "flash attention D=64", None, None),
        ("GPUFlashAttention64Causal", "flash attention D=64 causal", None, None)]
print(f"{'kernel':32s} {'gocu TFLOP/s':>13s} {'peer':>8s} {'ratio':>7s} target")
for key, name, pk, target in rows:
    g = bench.get(key); p = peer.get(pk) if pk else None
    r = f"{g/p:.2f}" if g and p else "-"
    print(f"{name:32s} {g if g else '-':>13} {p if p else '-':>8} {r:>7s} {'>= %.2f' % target if target else ''}")
PY
(cd "$out" && tar czf logs.tgz --exclude=logs.tgz *.txt *.json *.sass 2>/dev/null)
