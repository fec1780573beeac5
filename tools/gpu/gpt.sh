#!/usr/bin/env bash
# Device side of the GPU pass of package gpt, after tools/gpu/gpt-bundle.sh
# built .gpu/ here:   PARTS=tests bash tools/gpu/gpt.sh   (parts: tests,
# bench, prof, bytes, bytes2, gpt2; one or two per call: a call has 10
# minutes).
# bytes trains the byte model for the first BYTES_STOP (5m) of a
# BYTES_TIME (10m) run and bytes2, in the next call, resumes it to the end.
# GPT2_TIME sets GPT-2's duration (4m); GRAPH=1 replays the training step
# as a CUDA graph. Results go to $OUT (or /tmp/gpu-gpt): logs, loss
# curves, samples.
set -u
export GOCU_REQUIRE_GPU=1 GOCU_CACHE_DIR=/tmp/gocu-cache
root=$(cd "$(dirname "$0")/../.." && pwd); cd "$root"
out=${OUT:-/tmp/gpu-gpt}; mkdir -p "$out"
parts=${PARTS:-tests}
has() { case ",$parts," in *",$1,"*) return 0;; esac; return 1; }
for f in .gpu/gpt.test.gz .gpu/gocu.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
graph=""; [ "${GRAPH:-0}" = 1 ] && graph=--graph
# The checkpoint lives outside .gpu: a call carrying .gpu replaces it whole.
ckpt=${CKPT:-/tmp/gocu-gpt-ckpt/bytes.safetensors}; mkdir -p "$(dirname "$ckpt")"

if has tests; then
  echo "##### the gpt tests: GPU against CPU, bf16 training, generation, graph replay, torch checkpoints"
  (cd gpt && timeout 500 ../.gpu/gpt.test -test.v 2>&1) > "$out/tests-full.txt"
  grep -E '^(---|ok|FAIL|PASS|panic)|^\s+--- (FAIL|SKIP)|rror' "$out/tests-full.txt" | grep -v -- '--- PASS' | head -80 | tee "$out/tests.txt"
  grep -E -- '--- (PASS|FAIL|SKIP): Test(GPU|Torch)' "$out/tests-full.txt" | tee -a "$out/tests.txt"
fi

if has bench; then
  echo "##### one training step: gocu (BenchmarkGPTStepGPU) and torch (train_gpt.py) in the same call"
  (cd gpt && timeout 400 ../.gpu/gpt.test -test.run '^$' -test.bench GPTStepGPU -test.benchtime 20x 2>&1) | tee "$out/bench.txt" | grep -E 'Benchmark|FAIL|panic|skip'
  [ -f .gpu/train_gpt.py ] && timeout 400 python3 .gpu/train_gpt.py "$out/train_gpt.json" 2>&1 | tee "$out/train_gpt.txt"
fi

if has prof; then
  echo "##### where a step's time goes: 30 byte-model steps under the profiler, then its table"
  GOCU_PROFILE="$out/gpt-trace.json" timeout 300 .gpu/gocu gpt train --data .gpu/gosrc.tok.gz --model bytes --bf16 $graph \
    --steps 30 --report 10 --eval 0 --eval-batches 1 --save "" --sample 0 2>&1 | tail -5
  .gpu/gocu prof "$out/gpt-trace.json" 2>&1 | head -60 | tee "$out/gpt-prof.txt"
fi

if has bytes; then
  # BYTES_STOP=0 trains in one call (then BYTES_TIME must leave a minute of the call's ten: 8m30s).
  stop=${BYTES_STOP:-5m}; sample=0; plot=$out/bytes-loss-1.png
  [ "$stop" = 0 ] && sample=600 && plot=$out/bytes-loss.png
  echo "##### the byte model (6 layers, 384 wide, context 256) on the Go corpus: ${BYTES_TIME:-10m}, stopping after $stop"
  timeout 580 .gpu/gocu gpt train --data .gpu/gosrc.tok.gz --model bytes --bf16 $graph --time "${BYTES_TIME:-10m}" --stop "$stop" \
    --report 100 --eval 500 --plot "$plot" --save "$ckpt" --sample $sample 2>&1 | tee "$out/bytes-1.txt"
fi

if has bytes2; then
  echo "##### the byte model, resumed to the end (the next call, while the machine is warm)"
  timeout 580 .gpu/gocu gpt train --data .gpu/gosrc.tok.gz --resume "$ckpt" $graph \
    --report 100 --eval 500 --plot "$out/bytes-loss.png" --sample 600 2>&1 | tee "$out/bytes-2.txt"
  .gpu/gocu gpt sample --ckpt "$ckpt" --prompt 'func main() {' --tokens 400 --seed 2 2>&1 | tee "$out/bytes-sample.txt"
fi

if has gpt2; then
  echo "##### GPT-2 124M (12 layers, 768 wide, context 1024, vocabulary 50304) on the Go corpus, ${GPT2_TIME:-4m}"
  timeout 580 .gpu/gocu gpt train --data .gpu/gosrc.tok.gz --model gpt2 --bf16 $graph --time "${GPT2_TIME:-4m}" \
    --report 20 --eval 200 --eval-batches 4 --plot "$out/gpt2-loss.png" --save "" --sample 300 2>&1 | tee "$out/gpt2.txt"
fi
