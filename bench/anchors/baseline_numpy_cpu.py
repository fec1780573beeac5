#!/usr/bin/python3
# baseline_numpy_cpu.py: NumPy on the CPU sizes of the numpy suite
# (internal/bench/numpy_workloads.go and numpy_indexing_workloads.go, cpuNumpy
# and cpuIx), the CPU backend's peer. Run it on the machine that runs
#   gocu bench --suite numpy --device cpu
# and compare the medians workload by workload.
#   OUT=dir /usr/bin/python3 baseline_numpy_cpu.py   -> a table, and $OUT/baseline_numpy_cpu.json
# Each figure is the median of reps wall-clock timings after a warm-up, in
# milliseconds. NumPy runs these on one core; the figures depend on how
# many cores are free, so run both sides in the same session.
import json, os, sys, time
import numpy as np

res = {"numpy": np.__version__, "cpus": os.cpu_count()}


def put(k, v):
    res[k] = v
    print(f"{k:40s} {v}", flush=True)


def med(fn, reps=10, warm=2):
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(reps):
        s = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - s) * 1e3)
    return round(float(np.median(ts)), 3)


rng = np.random.default_rng(1)
n, q = 1 << 22, 1 << 20  # cpuNumpy.n and n/4
rows, cols, mat = 256, 32768, 2048
xf = rng.standard_normal(n, dtype=np.float32)
xi = rng.integers(-(1 << 31), 1 << 31, n, dtype=np.int64).astype(np.int32)
# gocu's sorts are stable; NumPy's default sort is not: both figures.
put("sort_f32_ms", med(lambda: np.sort(xf)))
put("sort_f32_stable_ms", med(lambda: np.sort(xf, kind="stable")))
put("sort_i32_ms", med(lambda: np.sort(xi)))
put("sort_i32_stable_ms", med(lambda: np.sort(xi, kind="stable")))
put("argsort_f32_ms", med(lambda: np.argsort(xf)))
put("argsort_f32_stable_ms", med(lambda: np.argsort(xf, kind="stable")))
m2 = rng.standard_normal((rows, cols), dtype=np.float32)
put("sort_rows_f32_ms", med(lambda: np.sort(m2, axis=1), reps=5))
put("sort_rows_f32_stable_ms", med(lambda: np.sort(m2, axis=1, kind="stable"), reps=5))


def topk(x, k):
    # NumPy has no top-k: the usual argpartition, then sort the k.
    i = np.argpartition(x, -k, axis=-1)[..., -k:]
    v = np.take_along_axis(x, i, axis=-1)
    o = np.argsort(-v, axis=-1, kind="stable")
    return np.take_along_axis(v, o, axis=-1), np.take_along_axis(i, o, axis=-1)


put("topk_k100_ms", med(lambda: topk(xf[:q], 100)))
logits = rng.standard_normal((64, 50304), dtype=np.float32)
put("topk_rows_k50_ms", med(lambda: topk(logits, 50)))
small = rng.integers(0, 1 << 16, n, dtype=np.int32)
put("unique_i32_ms", med(lambda: np.unique(small), reps=5))
sorted_keys = np.sort(rng.standard_normal(q, dtype=np.float32))
vals = rng.standard_normal(q, dtype=np.float32)
put("searchsorted_ms", med(lambda: np.searchsorted(sorted_keys, vals)))
put("bincount_ms", med(lambda: np.bincount(small, minlength=1 << 16)))
put("histogram_ms", med(lambda: np.histogram(xf, bins=256, range=(-4, 4))))
put("cumsum_f32_ms", med(lambda: np.cumsum(xf)))
st = rng.standard_normal((mat, mat), dtype=np.float32)
put("var_rows_ms", med(lambda: np.var(st, axis=1)))
put("median_rows_ms", med(lambda: np.median(st, axis=1), reps=5))
# Indexing (cpuIx).
idx = rng.integers(0, n, n)
put("take_f32_ms", med(lambda: np.take(xf, idx)))
emb = rng.standard_normal((50304, 768), dtype=np.float32)
tok = rng.integers(0, 50304, 16384)
put("embedding_gather_ms", med(lambda: np.take(emb, tok, axis=0)))
g = rng.standard_normal((16384, 768), dtype=np.float32)


def scatter_add():
    z = np.zeros_like(emb)
    np.add.at(z, tok, g)
    return z


put("embedding_scatter_add_ms", med(scatter_add, reps=3, warm=1))
put("nonzero_f32_ms", med(lambda: np.nonzero(xf > 0)))
put("boolean_mask_f32_ms", med(lambda: xf[xf > 0]))
if os.environ.get("OUT"):
    with open(os.path.join(os.environ["OUT"], "baseline_numpy_cpu.json"), "w") as f:
        json.dump(res, f, indent=1)
