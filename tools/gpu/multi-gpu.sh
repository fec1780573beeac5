#!/usr/bin/env bash
# The multi-GPU pass on the lent machine, after tools/gpu/multi-gpu-bundle.sh
# built .gpu/ here (carry [".gpu"]):
#
#   bash tools/gpu/multi-gpu.sh [tests] [bench] [peer] [train]     (default: all four)
#
# Each word is one part; a device call has 10 minutes, so on a machine of
# several GPUs run the parts in separate calls (tests; bench peer; train).
# "tests" is the four words nccl, dist, mnist and cli, which also run alone.
#
#   tests  the GPU tests of nccl (collectives, groups and their cancellation,
#          InitRank, abort, several ranks on one GPU, one process per GPU),
#          dist (one rank, all GPUs, one process per GPU), internal/mnisttrain
#          (one rank through NCCL = the plain trainer; all GPUs = one GPU up to
#          rounding) and gocu train (--devices, --ranks)
#   bench  all-reduce float32 8 B..1 GiB on every GPU of the host from one
#          process: package nccl (raw memory) and package dist (arrays); the
#          data-parallel MNIST epoch at batch 1024 per GPU on 1 GPU and on all
#   peer   torch.distributed all_reduce via torchrun, one process per GPU, the
#          same sizes and timing (tools/gpu/allreduce_torch.py), and nccl-tests'
#          all_reduce_perf when one is on PATH or in $NCCL_TESTS
#   nccl-tests  (not in the default) build all_reduce_perf, reduce_scatter_perf,
#          all_gather_perf and broadcast_perf with nvcc from .gpu/nccl-tests.tgz
#          (NCCL_TESTS_SRC when bundling) against the NCCL found (system
#          headers, or PyTorch's wheel) for the peer and colls steps
#   colls  (not in the default; issue 23) the four collectives timed as
#          nccl-tests times them, 8 B..1 GiB by 2, in and out of place:
#          package nccl (BenchmarkNCCLTests), package dist (BenchmarkGPUCollectives,
#          watchdog on and off) and nccl-tests' four *_perf beside them, then
#          the table with the issue's targets (colls_report.py); DDP against
#          an all-reduce after the backward pass (BenchmarkGPUDDP). On 4 GPUs
#          or more, the same again on GPUs 0 and 1 (files *-2gpu*).
#   train  gocu train, 2 epochs: 1 GPU at batch 1024, every GPU at 1024 each
#          from one process (--devices) and one process per GPU (--ranks)
#   gpt    (not in the default; issue 23) GPT-2 124M data-parallel: the three
#          words below, which also run alone (one or two per device call):
#   gpt-tests  the GPU tests of internal/gpttrain (1 GPU vs 2, 3, 4 GPUs, DDP
#          and ZeRO-1) and gocu gpt train (--devices, --ranks vs one GPU)
#   gpt-bench  in the same call: BenchmarkGPUDataParallel (tokens/s on 1, 2
#          and 4 GPUs, DDP and ZeRO-1, 16 windows of 1024 per GPU), torch's
#          DDP peer (train_gpt_ddp.py under torchrun) on 1, 2 and 4 GPUs, and
#          torch without DDP on one (train_gpt_peer.py)
#   gpt-train  gocu gpt train --model gpt2 --bf16 on a corpus of this
#          checkout, end to end: the loss curve of a batch of 32 on one GPU
#          and on 2 ranks, and the speed at 16 per GPU on 1 and on all
#   frame  (not in the default; issue 26) frames split across the GPUs: package
#          dist's AllToAll and frame's Shards tests on every GPU, then group-by
#          (q1, q3) and the big inner join on 1 GPU and on 2 to all, of
#          GOCU_FRAME_DIST_ROWS rows (default 2e8; target: 2 GPUs >= 1.6x one)
#
# With fewer than 2 GPUs the multi-GPU benchmarks skip; the rest runs with one
# rank (NCCL allows it), which checks the one-rank paths and the group fix.
# Logs go to $OUT (default /tmp/multi-gpu), archived as logs.tgz; the summary
# (the figures side by side with the peer's, and the issue's targets) last.
set -u
# A GPU test that cannot reach the GPU or a CUDA library fails here instead of skipping.
export GOCU_REQUIRE_GPU=1
# NVLink multicast off in every process (the device documentation asks it;
# dist.Launch sets it too in the ranks it starts).
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-/tmp/multi-gpu}; mkdir -p "$out"
sel=" ${*:-tests bench peer train} "
has() { case "$sel" in *" $1 "*) return 0;; esac; return 1; }
for f in .gpu/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
export GOCU_CACHE_DIR=${GOCU_CACHE_DIR:-/tmp/gocu-cache} GOCU_MNIST_DIR=$root/.gpu/mnist PYTHONUNBUFFERED=1
ngpu=$(nvidia-smi -L | grep -c '^GPU')
{ nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; nvidia-smi topo -m; } 2>&1 | tee "$out/gpus.txt"
echo "$ngpu GPU(s)"
# gocu and the peer use one NCCL, PyTorch's (its wheel's), when there is one
# and GOCU_NCCL_LIB does not name another: the comparison is then of the
# callers, not of two NCCL versions.
py=$(command -v python3 || true)
if [ -z "${GOCU_NCCL_LIB:-}" ] && [ -n "$py" ]; then
  wheel=$("$py" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)
  if [ -n "$wheel" ] && [ -e "$wheel" ]; then export GOCU_NCCL_LIB=$wheel; fi
fi
if [ -n "${GOCU_NCCL_LIB:-}" ]; then echo "NCCL for gocu and the peer: $GOCU_NCCL_LIB"; else echo "NCCL: the first libnccl.so.2 found (the tests log which)"; fi

t() { # package dir, test binary, -test.run pattern, timeout
  echo "##### $1: $3"
  (cd "$1" && timeout "$4" "$root/.gpu/$2.test" -test.run "$3" -test.v -test.timeout "$4s" 2>&1) > "$out/test-$2.log"
  local rc=$?
  grep -E '^(--- |ok|FAIL|PASS|panic)|RESULT|bit-identical|differ|NCCL [0-9]' "$out/test-$2.log" | head -80
  [ $rc -eq 0 ] || { echo "!!! $2 exit $rc"; tail -30 "$out/test-$2.log"; }
}
if has tests || has nccl; then t nccl nccl 'TestGPU' 400; fi
if has tests || has dist; then t dist dist 'GPU|Processes|Launch|DDP|ZeRO|Hung|Watchdog|ReduceScatter' 420; fi
if has tests || has mnist; then t internal/mnisttrain internal_mnisttrain 'Parallel' 400; fi
if has tests || has cli; then t cmd/gocu cmd_gocu 'TrainDataParallel' 400; fi
if has frame; then
  t dist dist 'AllToAll' 200
  mv "$out/test-dist.log" "$out/test-dist-alltoall.log"
  t frame frame 'TestGPUShards' 300
fi

b() { # package dir, test binary, -test.bench pattern, output file[, benchtime]
  echo "##### bench $1: $3"
  (cd "$1" && "$root/.gpu/$2.test" -test.run '^$' -test.bench "$3" -test.benchtime "${5:-1s}" -test.timeout 1200s -test.v 2>&1) | tee "$out/$4" | grep -E '^Benchmark|SKIP|_test.go:|FAIL|panic'
}
if has bench; then
  b nccl nccl '^BenchmarkAllReduce$' bench-nccl.txt
  b dist dist '^BenchmarkGPUAllReduce$' bench-dist.txt
  b internal/mnisttrain internal_mnisttrain '^BenchmarkGPUParallelEpoch$' bench-epoch.txt
fi

if has frame; then
  b dist dist '^BenchmarkGPUAllToAll$' bench-alltoall.txt
  GOCU_FRAME_DIST_ROWS=${GOCU_FRAME_DIST_ROWS:-2e8} b frame frame 'Shards/./cuda' bench-frame-dist.txt 3x
fi

if has nccl-tests && [ -e .gpu/nccl-tests.tgz ] && [ -z "${NCCL_TESTS:-}" ]; then
  echo "##### building nccl-tests' all_reduce_perf"
  rm -rf /tmp/nccl-tests && tar xzf .gpu/nccl-tests.tgz -C /tmp
  home=""
  for d in /usr /usr/local/cuda; do [ -e "$d/include/nccl.h" ] && home=$d && break; done
  if [ -z "$home" ] && [ -n "$py" ]; then # PyTorch's wheel: headers and libnccl.so.2, no libnccl.so
    w=$("$py" -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null || true)
    if [ -n "$w" ] && [ -e "$w/include/nccl.h" ]; then
      home=/tmp/nccl-home; mkdir -p $home/lib; ln -sfn "$w/include" $home/include
      ln -sf "$w/lib/libnccl.so.2" $home/lib/libnccl.so; export LD_LIBRARY_PATH="$w/lib:${LD_LIBRARY_PATH:-}"
    fi
  fi
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
  if [ -n "$home" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
    (cd /tmp/nccl-tests/src && timeout 400 make -j"$(nproc)" ../build/all_reduce_perf ../build/reduce_scatter_perf \
      ../build/all_gather_perf ../build/broadcast_perf NCCL_HOME="$home" CUDA_HOME=/usr/local/cuda \
      NVCC_GENCODE="-gencode=arch=compute_$cc,code=sm_$cc" > "$out/nccl-tests-build.txt" 2>&1) &&
      export NCCL_TESTS=/tmp/nccl-tests/build && echo "built with $home" || { echo "nccl-tests did not build:"; tail -5 "$out/nccl-tests-build.txt"; }
  else
    echo "no nccl.h or nvcc here: nccl-tests not built"
  fi
fi

if has peer; then
  echo "##### peer: torch.distributed, $ngpu processes"
  if [ -n "$py" ] && "$py" -c 'import torch.distributed' 2>/dev/null; then
    "$py" -m torch.distributed.run --standalone --nproc_per_node="$ngpu" .gpu/allreduce_torch.py "$out/allreduce_torch.json" 2>&1 | tee "$out/peer-torch.txt" | grep -vE '^(W|I)[0-9]{4}'
  else
    echo "no torch here: no peer figures" | tee "$out/peer-torch.txt"
  fi
  perf=$(command -v all_reduce_perf || true)
  [ -z "$perf" ] && [ -n "${NCCL_TESTS:-}" ] && [ -x "$NCCL_TESTS/all_reduce_perf" ] && perf=$NCCL_TESTS/all_reduce_perf
  [ -z "$perf" ] && [ -x /tmp/nccl-tests/build/all_reduce_perf ] && perf=/tmp/nccl-tests/build/all_reduce_perf # built by an earlier call
  if [ -n "$perf" ]; then
    echo "##### peer: nccl-tests $perf -g $ngpu"
    LD_LIBRARY_PATH="$(dirname "${GOCU_NCCL_LIB:-/usr/lib/x86_64-linux-gnu/x}"):/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}" \
      "$perf" -b 8 -e 1G -f 4 -g "$ngpu" -d float -o sum 2>&1 | tee "$out/peer-nccl-tests.txt"
  else
    echo "(nccl-tests' all_reduce_perf not found: torch.distributed is the peer)"
  fi
fi

if has colls; then
  perfdir=${NCCL_TESTS:-}
  [ -z "$perfdir" ] && [ -x /tmp/nccl-tests/build/all_reduce_perf ] && perfdir=/tmp/nccl-tests/build
  peerlib="$(dirname "${GOCU_NCCL_LIB:-/usr/lib/x86_64-linux-gnu/x}"):/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
  colls() { # number of GPUs, file suffix
    local n=$1 sfx=$2 vis
    vis=$(seq -s, 0 $((n - 1)))
    echo "##### collectives on $n GPU(s), as nccl-tests times them"
    CUDA_VISIBLE_DEVICES=$vis b nccl nccl '^BenchmarkNCCLTests$' "bench-colls-nccl$sfx.txt" 5x | tail -3
    CUDA_VISIBLE_DEVICES=$vis b dist dist '^BenchmarkGPUCollectives$' "bench-colls-dist$sfx.txt" 5x | tail -3
    CUDA_VISIBLE_DEVICES=$vis b dist dist '^BenchmarkGPUDDP$' "bench-ddp$sfx.txt" 10x
    mkdir -p "$out/peer$sfx"
    for op in all_reduce reduce_scatter all_gather broadcast; do
      if [ -n "$perfdir" ] && [ -x "$perfdir/${op}_perf" ]; then
        echo "##### nccl-tests ${op}_perf -g $n"
        LD_LIBRARY_PATH="$peerlib" "$perfdir/${op}_perf" -b 8 -e 1G -f 2 -g "$n" -d float -o sum > "$out/peer$sfx/${op}_perf.txt" 2>&1
        grep -E '^# (Avg|nThread|Using)|NCCL version' "$out/peer$sfx/${op}_perf.txt" | head -3
      else
        echo "(nccl-tests' ${op}_perf not built: run with the word nccl-tests, bundled with NCCL_TESTS_SRC)"
      fi
    done
    python3 .gpu/colls_report.py "$out/bench-colls-nccl$sfx.txt" "$out/bench-colls-dist$sfx.txt" "$out/peer$sfx" 2>&1 | tee "$out/colls-summary$sfx.txt"
    for op in all_reduce reduce_scatter all_gather broadcast; do
      [ -e "$out/peer$sfx/${op}_perf.txt" ] && cp "$out/peer$sfx/${op}_perf.txt" "$out/peer-${op}$sfx.txt"
    done
    rm -rf "$out/peer$sfx"
  }
  colls "$ngpu" ""
  [ "$ngpu" -ge 4 ] && colls 2 "-2gpu"
fi

if has gpt || has gpt-tests; then
  if [ "$ngpu" -ge 2 ]; then
    t internal/gpttrain internal_gpttrain 'GPUDataParallel' 400
    t cmd/gocu cmd_gocu 'GPUGPTDataParallel' 300
  else
    echo "(gpt: $ngpu GPU, the data-parallel tests need 2)"
  fi
fi
if has gpt || has gpt-bench; then
  echo "##### gpt: gocu BenchmarkGPUDataParallel, GPT-2 124M, 16x1024 tokens per GPU"
  b internal/gpttrain internal_gpttrain '^BenchmarkGPUDataParallel$' bench-gpt-dp.txt 20x
  if [ -n "$py" ] && "$py" -c 'import torch.distributed' 2>/dev/null && [ -f .gpu/train_gpt.py ]; then
    echo "##### gpt: torch, one GPU without DDP (train_gpt_peer.py, eager)"
    PARTS=gpt2 OUT=$out timeout 300 "$py" .gpu/train_gpt_peer.py 2>&1 | tee "$out/gpt-torch-1.txt" | grep -E 'gpt2|Error'
    for k in 1 2 4; do
      [ "$k" -gt "$ngpu" ] && continue
      echo "##### gpt: torch DDP, $k GPU(s) (torchrun, train_gpt_ddp.py)"
      CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((k - 1))) timeout 300 "$py" -m torch.distributed.run --standalone --nproc_per_node="$k" \
        .gpu/train_gpt_ddp.py "$out/train_gpt_ddp.json" 2>&1 | tee "$out/gpt-torch-ddp$k.txt" | grep -vE '^(W|I)[0-9]{4}'
    done
  else
    echo "no torch or no .gpu/train_gpt.py here: no torch DDP figures" | tee "$out/gpt-torch-ddp.txt"
  fi
fi
if has gpt || has gpt-train; then
  if [ "$ngpu" -ge 2 ]; then
    echo "##### gpt: gocu gpt train --model gpt2 --bf16, end to end on this checkout's Go files"
    ./.gpu/gocu gpt prepare --src "$root" --out /tmp/gocu-src.tok > /dev/null 2>&1 || echo "gocu gpt prepare failed"
    gtrain() { # label, args...
      local label=$1; shift
      echo "## $label: $*"
      timeout 240 ./.gpu/gocu gpt train --data /tmp/gocu-src.tok --model gpt2 --bf16 --steps 40 --warmup 10 --eval 0 \
        --eval-batches 1 --sample 0 --save "" --report 10 "$@" 2>&1 | tr '\r' '\n' | tee "$out/gpt-train-$label.txt" |
        grep -E 'training a GPT|^step|tokens/s|error|gocu:' | tail -7
    }
    # The loss curve of one global batch of 32 windows: one GPU, then 2 ranks.
    gtrain curve-1gpu --device cuda:0 --batch 32
    gtrain curve-2ranks --ranks 2 --batch 32
    # Speed at 16 windows per GPU.
    gtrain speed-1gpu --device cuda:0 --batch 16
    [ "$ngpu" -gt 2 ] && gtrain "speed-${ngpu}ranks" --ranks "$ngpu" --batch $((16 * ngpu))
  fi
fi

if has train; then
  all=$(seq -s, -f 'cuda:%g' 0 $((ngpu - 1)))
  train_run() { # label, args...
    local label=$1; shift
    echo "##### gocu train $label: $*"
    ./.gpu/gocu train --epochs 2 --plot "" "$@" 2>&1 | tr '\r' '\n' | tee "$out/train-$label.txt" | grep -E 'training|s, .*images/s|accuracy|rank|error|gocu:' | tail -6
  }
  train_run one --device cuda:0 --batch 1024
  if [ "$ngpu" -ge 2 ]; then
    train_run devices --devices "$all" --batch $((1024 * ngpu))
    train_run ranks --ranks "$ngpu" --batch $((1024 * ngpu))
  else
    train_run devices --devices cuda:0 --batch 1024
    train_run ranks --ranks 1 --batch 1024
  fi
  echo "(epoch 2's time is the steady one: epoch 1 includes compiling)"
fi

echo "##### summary"
[ -e "$out/bench-nccl.txt" ] && python3 .gpu/multi_gpu_report.py "$out/bench-nccl.txt" "$out/bench-dist.txt" "$out/allreduce_torch.json" \
  "$out/peer-nccl-tests.txt" "$out/bench-epoch.txt" 2>&1 | tee "$out/summary.txt"
[ -e "$out/bench-gpt-dp.txt" ] && { echo "gpt data-parallel, tokens/s:"; grep -E '^BenchmarkGPUDataParallel' "$out/bench-gpt-dp.txt";
  [ -e "$out/train_gpt_ddp.json" ] && cat "$out/train_gpt_ddp.json"; [ -e "$out/train_gpt.json" ] && grep -E 'gpt2_124m_eager_(tokens|ms)' "$out/train_gpt.json"; } 2>&1 | tee "$out/summary-gpt.txt"
for l in "$out"/test-*.log; do
  [ -e "$l" ] && echo "$(basename "$l"): pass=$(grep -c -- '--- PASS' "$l") skip=$(grep -c -- '--- SKIP' "$l") fail=$(grep -c -- '--- FAIL' "$l")"
done | tee "$out/counts.txt"
# at most 8 files come back: everything in one archive, the summary beside it
(cd "$out" && shopt -s nullglob && files=(*.log *.txt *.json) && tar czf logs.tgz -- "${files[@]}" &&
  for f in "${files[@]}"; do case "$f" in summary.txt|summary-gpt.txt|counts.txt) ;; *) rm -f -- "$f" ;; esac; done)
