# The torch peers of issue 24's figures in one short script, measured as
# bench/anchors/baseline.py and baseline_lowp.py measure them (the median
# of CUDA-event timings after warm-up), under the same JSON keys, so that
# gocu bench --compare reads them: vector add, the three-op chain eager and
# compiled, the tiny-op launch cost, and the row quantisation.
import json, os, statistics, time
import torch

res = {}


def ev_time(fn, iters=50, warm=5):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    return statistics.median(ts)


def put(k, v):
    res[k] = v
    print(f"{k:55s} {v}", flush=True)


n = 1 << 26
x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
z = torch.empty_like(x)
put("vadd_64M_torch_ms", round(ev_time(lambda: torch.add(x, y, out=z)), 4))
put("sum_64M_torch_ms", round(ev_time(lambda: x.sum()), 4))
chain = lambda: torch.relu(x * 1.5 + 0.5) * 2.0
put("chain3_64M_torch_eager_ms", round(ev_time(chain), 4))
put("chain3_64M_torch_compile_ms", round(ev_time(torch.compile(chain)), 4))
small = torch.zeros(1, device="cuda")
for _ in range(1000):
    small.add_(1)
torch.cuda.synchronize(); t0 = time.perf_counter()
for _ in range(10000):
    small.add_(1)
torch.cuda.synchronize(); put("torch_launch_us_per_tiny_op", round((time.perf_counter() - t0) / 10000 * 1e6, 2))
m = torch.randn(8192, 8192, device="cuda")


def quant():
    s = m.abs().amax(dim=1, keepdim=True) / 127
    return torch.clamp(torch.round(m / s), -127, 127).to(torch.int8), s


put("quantise_rows_8192sq_torch_ms", round(ev_time(quant), 4))
put("quantise_rows_8192sq_compile_ms", round(ev_time(torch.compile(quant)), 4))
put("copy_8192sq_f32_torch_ms", round(ev_time(lambda: m.clone()), 4))
json.dump(res, open(os.path.join(os.environ.get("OUT", "."), "peers_c.json"), "w"), indent=1)
