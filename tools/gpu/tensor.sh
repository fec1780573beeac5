#!/usr/bin/env bash
# Device side of the tensor-core GPU pass (issue 15 and its tuning rounds,
# notes in docs/tensor-cores.md), after tools/gpu/tensor-bundle.sh built
# .gpu/ here:
#   bash tools/gpu/tensor.sh            # tests, resources, benchmarks, peers
#   NCU=1 bash tools/gpu/tensor.sh      # and one ncu-profiled launch of the kernels in $NCU_KERNELS
#   PARTS=bench bash tools/gpu/tensor.sh   # only some parts: tests,resources,bench,peers,suite (default all; PARTS=none NCU=1 for ncu alone)
# Seven files go to $OUT (or /tmp/gpu-tensor), the rest into logs.tgz there
# (the device tool brings back at most eight); a table of ratios is printed
# last.
set -u
# A GPU test that cannot reach the GPU or a CUDA library fails here instead of skipping.
export GOCU_REQUIRE_GPU=1
root=$(cd "$(dirname "$0")/../.." && pwd); cd "$root"
out=${OUT:-/tmp/gpu-tensor}; mkdir -p "$out"
logs=$out/logs; mkdir -p "$logs"
parts=${PARTS:-tests,resources,bench,peers,suite}
has() { case ",$parts," in *",$1,"*) return 0;; esac; return 1; }
for f in .gpu/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
export GOCU_CACHE_DIR=/tmp/gocu-cache PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader | tee "$logs/gpu.txt"
kt=$root/.gpu/internal_lecture.test

if has tests; then
  echo "##### correctness on the GPU (full sizes; sim cases run too)"
  (cd internal/lecture && timeout 900 "$kt" -test.run 'TestGemmBF16$|TestMatMulBF16$|TestFlashAttention$|TestWGProbe$' -test.v 2>&1) > "$logs/tests-lecture.txt"
  (cd gen && timeout 600 ../.gpu/gen.test -test.run 'GPU' -test.v 2>&1) > "$logs/tests-gen.txt"
  (cd lowp && timeout 600 ../.gpu/lowp.test -test.run 'GPU' -test.v 2>&1) > "$logs/tests-lowp.txt"
  {
    grep -E '^(---|ok|FAIL|PASS|panic)|^\s+--- (FAIL|SKIP)|relative Frobenius|want|swapped|wrong|rror' "$logs/tests-lecture.txt" | grep -v -- '--- PASS: .*/sim' | head -120
    grep -E '^(--- |ok|FAIL|PASS|panic)' "$logs/tests-gen.txt" | head -30
    grep -E '^(--- |ok|FAIL|PASS|panic)' "$logs/tests-lowp.txt" | head -10
  } | tee "$out/tests.txt"
fi

if has resources; then
  echo "##### resources (registers, spills) and the tensor instructions in SASS (sm_90a, as the launchers compile)"
  .gpu/gocu compile .gpu/kernels.cu --arch sm_90a 2>&1 | grep -E 'Gemm|Flash|WGProbe|error|warning' > "$out/resources.txt"
  if command -v ptxas >/dev/null; then
    .gpu/gocu compile .gpu/kernels.cu --arch sm_90a --ptx -o /tmp/kernels.ptx >/dev/null 2>&1 &&
      ptxas -arch=sm_90a -v /tmp/kernels.ptx -o /tmp/kernels.cubin 2>&1 | grep -A1 -E "Compiling entry function '(Gemm|Flash)" | grep -v '^--' >> "$out/resources.txt"
    command -v cuobjdump >/dev/null && cuobjdump -sass /tmp/kernels.cubin > "$out/kernels.sass" 2>&1 &&
      for k in $(grep -oE 'Function : (Gemm|Flash)[A-Za-z0-9]*' "$out/kernels.sass" | awk '{print $3}'); do
        awk -v k="$k" '/Function : /{on=($3==k)} on' "$out/kernels.sass" > /tmp/$k.sass
        printf '%-20s SASS: %4d HMMA %3d HGMMA %4d LDSM %3d LDGSTS %3d BAR %3d MUFU, %d local-memory ops\n' "$k" \
          "$(grep -c HMMA /tmp/$k.sass)" "$(grep -c HGMMA /tmp/$k.sass)" "$(grep -c LDSM /tmp/$k.sass)" "$(grep -c LDGSTS /tmp/$k.sass)" \
          "$(grep -c 'BAR.SYNC' /tmp/$k.sass)" "$(grep -c MUFU /tmp/$k.sass)" "$(grep -cE 'LDL|STL' /tmp/$k.sass)"
      done >> "$out/resources.txt"
  fi
  cat "$out/resources.txt"
fi

if has bench; then
  echo "##### benchmarks (the tensor kernels twice, for the spread)"
  (cd internal/lecture && timeout 900 "$kt" -test.run '^$' -test.bench 'GPU(SGEMM|CublasSGEMM)$' -test.benchtime 20x 2>&1
   timeout 900 "$kt" -test.run '^$' -test.bench 'GPU(GemmBF16|GemmBF16MMA|FlashAttention(128|64)(Causal)?)$' -test.benchtime 20x -test.count 2 2>&1) | tee "$out/bench.txt" | grep -E 'Benchmark|FAIL|panic|skip'
fi

if has peers; then
  echo "##### peers (torch, same call)"
  OUT="$out" python3 .gpu/anchors/baseline_lowp.py > "$logs/baseline_lowp.txt" 2>&1; grep -E 'bf16|sdpa|device' "$logs/baseline_lowp.txt"
fi

if has suite; then
  echo "##### gocu bench: the go suite's tensor-core rows against this call's peers (appended to bench.txt)"
  cmp=(); [ -s "$out/baseline_lowp.json" ] && cmp=(--compare "$out/baseline_lowp.json")
  .gpu/gocu bench --device cuda --only gemm_bf16_go,flash_attn_go,flash_attn_causal_go ${cmp[@]+"${cmp[@]}"} 2>&1 | tee -a "$out/bench.txt" | tail -15
fi

if [ "${NCU:-0}" = 1 ] && command -v ncu >/dev/null; then
  echo "##### ncu (one launch each): stall reasons, pipes, shared-memory bank conflicts"
  : > "$out/ncu.txt"
  # kernel:benchmark pairs
  for kb in ${NCU_KERNELS:-GemmBF16:GPUGemmBF16\$ GemmBF16MMA:GPUGemmBF16MMA\$ FlashAttention128:GPUFlashAttention128\$}; do
    k=${kb%%:*}
    ncuk() {
      (cd internal/lecture && timeout 300 ncu --kernel-name "$k" --launch-skip 3 --launch-count 1 \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy \
        --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats "$@" \
        "$kt" -test.run '^$' -test.bench "${kb#*:}" -test.benchtime 1x 2>&1) > "$logs/ncu-$k.txt"
    }
    ncuk --metrics 'regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$,regex:^sm__pipe_tensor_op_.*cycles_active\.avg\.pct_of_peak_sustained_active$,regex:^l1tex__data_bank_conflicts_pipe_lsu_mem_shared.*\.sum$,regex:^sm__inst_executed_pipe_tensor_op.*\.sum$,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,lts__t_bytes.sum.per_second'
    grep -q '==ERROR==' "$logs/ncu-$k.txt" && { mv "$logs/ncu-$k.txt" "$logs/ncu-$k-metrics-error.txt"; ncuk; }
    { echo "=== $k"; grep -vE '^\s*$|^==PROF==|^(goos|goarch|pkg|cpu):' "$logs/ncu-$k.txt"; } >> "$out/ncu.txt"
    grep -E 'Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|stalled_(barrier|long_scoreboard|short_scoreboard|math_pipe_throttle|mio_throttle|wait|not_selected|dispatch_stall|lg_throttle)_per|tensor_op.*pct|bank_conflicts' "$logs/ncu-$k.txt" | head -30
  done
fi

echo "##### summary (ratios against the peers of this call; the better of two runs)"
python3 - "$out/bench.txt" "$out/baseline_lowp.json" <<'PY' | tee "$out/summary.txt"
import json, re, sys
bench = {}
try:
    for line in open(sys.argv[1]):
        m = re.match(r'Benchmark(\S+?)(-\d+)?\s.*?([\d.]+) TFLOP/s', line)
        if m: bench[m.group(1)] = max(bench.get(m.group(1), 0), float(m.group(3)))
except FileNotFoundError: pass
try: peer = json.load(open(sys.argv[2]))
except Exception: peer = {}
def row(name, g, p, target):
    r = f"{g/p:.2f}" if g and p else "-"
    print(f"{name:40s} {g if g else '-':>9} {p if p else '-':>8} {r:>7s} {'>= %.2f' % target if target and p else ''}")
print(f"{'kernel':40s} {'TFLOP/s':>9s} {'peer':>8s} {'ratio':>7s} target")
gp, fp, fc = peer.get("matmul_4096_bf16_TFLOPs"), peer.get("sdpa_flash_bf16_full_TFLOPs"), peer.get("sdpa_flash_bf16_causal_TFLOPs")
for k in sorted(bench):
    if k.startswith("GPUGemmBF16"):
        row("gemm 4096^3 " + k[len("GPU"):], bench[k], gp, 0.60)
for k in sorted(bench):
    if k.startswith("GPUFlashAttention"):
        causal = k.endswith("Causal")
        d128 = k.startswith("GPUFlashAttention128")
        row("attn " + k[len("GPU"):], bench[k], (fc if causal else fp) if d128 else None, 0.60)
PY
(cd "$logs" && tar czf "$out/logs.tgz" . 2>/dev/null) && rm -rf "$logs"
