#!/usr/bin/env bash
# Device side of the GPU pass of internal/attn, after tools/gpu/attn-bundle.sh
# built .gpu/ here:   bash tools/gpu/attn.sh   (PARTS=tests,resources,bench)
# Results go to $OUT (or /tmp/gpu-attn).
set -u
export GOCU_REQUIRE_GPU=1 GOCU_CACHE_DIR=/tmp/gocu-cache PATH=$PATH:/usr/local/cuda/bin
root=$(cd "$(dirname "$0")/../.." && pwd); cd "$root"
out=${OUT:-/tmp/gpu-attn}; mkdir -p "$out"
parts=${PARTS:-tests,resources,bench}
has() { case ",$parts," in *",$1,"*) return 0;; esac; return 1; }
for f in .gpu/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
t=$root/.gpu/internal_attn.test

if has tests; then
  echo "##### correctness: the GPU tests at full size, then the simulator's"
  (cd internal/attn && timeout 900 "$t" -test.run 'TestGPU|TestSim$|TestArrays|TestErrors|TestReference' -test.v 2>&1) > "$out/tests-full.txt"
  grep -E '^(---|ok|FAIL|PASS|panic)|^\s+--- (FAIL|SKIP)|relative Frobenius|want|rror' "$out/tests-full.txt" |
    grep -v -- '--- PASS: TestSim/' | head -150 | tee "$out/tests.txt"
  echo "##### the small GPU cases again with Go's bounds checks on the GPU (GOCU_DEBUG=1)"
  (cd internal/attn && GOCU_DEBUG=1 timeout 600 "$t" -test.run 'TestGPU$/b1h2s80|TestGPU$/b2h3s1000' -test.v 2>&1) > "$out/tests-debug.txt"
  grep -E '^(---|ok|FAIL|PASS|panic)|^\s+--- (FAIL|SKIP|PASS)|rror' "$out/tests-debug.txt" | head -40 | tee -a "$out/tests.txt"
fi

if has resources; then
  echo "##### registers and spills (sm_90a, as the launchers compile)"
  .gpu/gocu compile .gpu/attn.cu --arch sm_90a 2>&1 | tee "$out/resources.txt"
  if command -v ptxas >/dev/null && .gpu/gocu compile .gpu/attn.cu --arch sm_90a --ptx -o /tmp/attn.ptx >/dev/null 2>&1; then
    ptxas -arch=sm_90a -v /tmp/attn.ptx -o /tmp/attn.cubin 2>&1 | grep -A1 "Compiling entry function" | grep -v '^--' | tee -a "$out/resources.txt"
  fi
fi

if has bench; then
  echo "##### benchmarks: B4 H16 S4096, TFLOP/s as FlashAttention counts them"
  (cd internal/attn && timeout 900 "$t" -test.run '^$' -test.bench GPU -test.benchtime 20x 2>&1) | tee "$out/bench.txt" | grep -E 'Benchmark|FAIL|panic|skip'
fi
