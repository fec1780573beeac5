#!/usr/bin/env bash
# Issue 24, second pass: the per-op cost's CPU profile, the allocation
# count, and row-kernel variants for quantize_rows beside torch.compile.
set -u
cd "$(dirname "$0")/../.."
R=$PWD; out=${OUT:-/tmp/issue24}; mkdir -p "$out"
for f in .gpu/*.xz; do [ -e "$f" ] && xz -d -T4 -f "$f"; done; chmod +x .gpu/*.test 2>/dev/null
export GOCU_CACHE_DIR=/tmp/gc PYTHONUNBUFFERED=1 GOCU_REQUIRE_GPU=1
t() { local d=$1 b=$2; shift 2; (cd "$d" && timeout "${TO:-240}" "$R/.gpu/$b.test" "$@" 2>&1); }
python3 - <<'PY'
import torch
def ev(fn, iters=30, warm=5):
    for _ in range(warm): fn()
    torch.cuda.synchronize(); ts=[]
    for _ in range(iters):
        a,b=torch.cuda.Event(enable_timing=True),torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[len(ts)//2], ts[0], ts[-1]
x = torch.randn(8192, 8192, device="cuda")
def quant():
    s = x.abs().amax(dim=1, keepdim=True) / 127
    return torch.clamp(torch.round(x / s), -127, 127).to(torch.int8), s
print("torch eager quant ms med/min/max", ev(quant))
print("torch.compile quant ms med/min/max", ev(torch.compile(quant)))
print("torch copy ms", ev(lambda: x.clone()))
print("torch softmax ms", ev(lambda: torch.softmax(x, 1)))
PY
t array array -test.run 'OverheadAllocsGPU|ScopeFreesGPU' -test.count 2 -test.v | grep -E '^(--- |ok|FAIL)|_test.go'
for v in array arrv1 arrv2 arrv3; do echo "## $v"; t array $v -test.run '^$' -test.bench 'QuantizeRowsGPU|SoftmaxRowsGPU' -test.benchtime 40x | grep ^Bench; done
t array array -test.run '^$' -test.bench 'OverheadGPU' -test.benchtime 30x -test.benchmem -test.cpuprofile "$out/ov.prof" | grep ^Bench
