#!/usr/bin/python3
"""Writes sortscan.json: sorting, scan and statistics cases computed by NumPy.

Run with Debian's python3-numpy: /usr/bin/python3 gen_sortscan.py
Each case is {"name", "op", "params", "inputs": [arr...], "want": [arr...]},
an array being {"dtype", "shape", "data"} with NaN and infinities written as
the strings "nan", "inf" and "-inf". Inputs avoid -0.0 where gocu orders it
before +0.0 (NumPy keeps their order).
"""
import json
import math
import os
import warnings

import numpy as np

warnings.filterwarnings("ignore")  # NumPy warns of the NaN and empty cases on purpose

rng = np.random.default_rng(20261128)
cases = []


def enc(a):
    a = np.asarray(a)
    dt = {"bool": "bool", "uint8": "uint8", "int32": "int32", "int64": "int64",
          "float32": "float32", "float64": "float64", "int16": "int16", "uint16": "uint16",
          "uint32": "uint32", "uint64": "uint64"}[a.dtype.name]
    out = []
    for v in a.ravel().tolist():
        if isinstance(v, float):
            if math.isnan(v):
                v = "nan"
            elif math.isinf(v):
                v = "inf" if v > 0 else "-inf"
        elif isinstance(v, bool):
            v = int(v)
        out.append(v)
    return {"dtype": dt, "shape": list(a.shape), "data": out}


def add(name, op, params, inputs, wants):
    cases.append({"name": name, "op": op, "params": params,
                  "inputs": [enc(x) for x in inputs], "want": [enc(w) for w in wants]})


def data(dt, shape, nan=True):
    n = int(np.prod(shape))
    if dt == "bool":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dt == "uint8":
        return rng.integers(0, 256, n).astype(np.uint8).reshape(shape)
    if dt in ("int32", "int64"):
        return rng.integers(-20, 21, n).astype(dt).reshape(shape)
    v = (rng.integers(-10, 11, n) / 4).astype(dt)
    if nan:
        m = rng.random(n)
        v[m < 0.05] = np.nan
        v[(m >= 0.05) & (m < 0.08)] = np.inf
        v[(m >= 0.08) & (m < 0.1)] = -np.inf
    v[v == 0] = 0  # no -0
    return v.reshape(shape)


def fdt(r, x):
    """NumPy 2's result dtype (NEP 50): float32 input, float32 result."""
    r = np.asarray(r)
    return r.astype(np.float32) if x.dtype == np.float32 else r


shapes = [((0,), [0]), ((1,), [-1]), ((17,), [0]), ((4, 9), [0, -1]), ((2, 3, 5), [0, 1, 2]), ((3, 0), [0, 1])]
dtypes = ["bool", "uint8", "int32", "int64", "float32", "float64"]

for shape, axes in shapes:
    for dt in dtypes:
        x = data(dt, shape)
        for ax in axes:
            tag = f"{dt}{list(shape)}_ax{ax}"
            add("sort_" + tag, "sort", {"axis": ax}, [x], [np.sort(x, axis=ax, kind="stable")])
            add("argsort_" + tag, "argsort", {"axis": ax}, [x], [np.argsort(x, axis=ax, kind="stable").astype(np.int64)])
            if x.shape[ax] > 0:
                k = int(rng.integers(0, x.shape[ax]))
                add("partition_" + tag, "partition", {"axis": ax, "kth": k}, [x],
                    [np.take(np.partition(x, k, axis=ax), k, axis=ax)])
            if dt != "bool":
                add("cumsum_" + tag, "cumsum", {"axis": ax}, [x], [np.cumsum(x, axis=ax)])
                add("cummax_" + tag, "cummax", {"axis": ax}, [x], [np.maximum.accumulate(x, axis=ax)])
                add("cummin_" + tag, "cummin", {"axis": ax}, [x], [np.minimum.accumulate(x, axis=ax)])
            else:
                add("cumsum_" + tag, "cumsum", {"axis": ax}, [x], [np.cumsum(x, axis=ax)])
            if dt in ("int32", "float64"):
                add("cumprod_" + tag, "cumprod", {"axis": ax}, [x], [np.cumprod(x, axis=ax)])
            for n in (1, 2):
                add(f"diff{n}_" + tag, "diff", {"axis": ax, "n": n}, [x], [np.diff(x, n=n, axis=ax)])

# Integer overflow wraps in cumsum and cumprod.
big = rng.integers(-2**62, 2**62, 50, dtype=np.int64) * 3
with np.errstate(over="ignore"):
    add("cumsum_wrap_int64", "cumsum", {"axis": 0}, [big], [np.cumsum(big)])
    add("cumprod_wrap_int64", "cumprod", {"axis": 0}, [big], [np.cumprod(big)])

# Stability: many ties, long rows.
for dt in ["int32", "float32"]:
    x = data(dt, (3, 200))
    add(f"argsort_ties_{dt}", "argsort", {"axis": -1}, [x], [np.argsort(x, axis=-1, kind="stable")])

for dt in dtypes:
    for shape in [(0,), (1,), (40,), (5, 8)]:
        x = data(dt, shape)
        v, i, inv, c = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
        add(f"unique_{dt}{list(shape)}", "unique", {}, [x],
            [v, i.astype(np.int64), inv.astype(np.int64).reshape(-1), c.astype(np.int64)])

for dt in ["uint8", "int32", "int64", "float32", "float64"]:
    for n, m in [(0, 4), (1, 3), (30, 20), (100, 0)]:
        a = np.sort(data(dt, (n,)), kind="stable")
        v = data(dt, (m,))
        for side in ["left", "right"]:
            add(f"searchsorted_{dt}_{n}_{m}_{side}", "searchsorted", {"right": side == "right"}, [a, v],
                [np.searchsorted(a, v, side=side).astype(np.int64)])
    b = np.sort(data(dt, (4, 5)).ravel(), kind="stable")
    q = data(dt, (2, 3))
    add(f"searchsorted_{dt}_2d_values", "searchsorted", {"right": False}, [b, q], [np.searchsorted(b, q).astype(np.int64)])

for dt in ["uint8", "int32", "int64", "bool"]:
    for n in [0, 1, 60]:
        x = rng.integers(0, 2 if dt == "bool" else 30, n).astype(dt)
        add(f"bincount_{dt}_{n}", "bincount", {"minlength": 5}, [x], [np.bincount(x, minlength=5).astype(np.int64)])
        w = rng.standard_normal(n)
        add(f"bincount_w_{dt}_{n}", "bincount", {"minlength": 0, "weights": True}, [x, w],
            [np.bincount(x, weights=w, minlength=0).astype(np.float64)])  # NumPy gives int64 when empty

for dt in ["float32", "float64", "int32"]:
    for n in [0, 1, 200]:
        x = (rng.standard_normal(n) * 3).astype(dt)
        for bins, lo, hi in [(10, -2.0, 2.0), (1, -1.0, 1.0), (7, -3.5, 0.5)]:
            h, e = np.histogram(x, bins=bins, range=(lo, hi))
            add(f"histogram_{dt}_{n}_{bins}", "histogram", {"bins": bins, "lo": lo, "hi": hi}, [x], [h.astype(np.int64), e])
    x = (rng.standard_normal(100) * 3).astype(dt)
    h, e = np.histogram(x, bins=12)
    add(f"histogram_auto_{dt}", "histogram", {"bins": 12}, [x], [h.astype(np.int64), e])

for dt in ["float32", "float64", "int32", "int64", "uint8"]:
    for shape, axes in [((30,), [None]), ((5, 12), [None, 0, 1]), ((3, 4, 5), [(0, 2), 1, -1])]:
        x = data(dt, shape, nan=False) if dt.startswith("float") else data(dt, shape)
        if dt.startswith("float"):
            x = (rng.standard_normal(shape) * 4).astype(dt)
        for ax in axes:
            tag = f"{dt}{list(shape)}_ax{ax}"
            p = {"axes": ([] if ax is None else list(ax) if isinstance(ax, tuple) else [ax])}
            for ddof in (0, 1):
                add(f"var{ddof}_" + tag, "var", dict(p, ddof=ddof), [x], [np.asarray(np.var(x, axis=ax, ddof=ddof))])
                add(f"std{ddof}_" + tag, "std", dict(p, ddof=ddof), [x], [np.asarray(np.std(x, axis=ax, ddof=ddof))])
            add("median_" + tag, "median", p, [x], [np.asarray(np.median(x, axis=ax))])
            for q in (0.0, 0.3, 0.75, 1.0):
                add(f"quantile{q}_" + tag, "quantile", dict(p, q=q), [x], [fdt(np.quantile(x, q, axis=ax), x)])
            add("percentile_" + tag, "percentile", dict(p, p=42.0), [x], [fdt(np.percentile(x, 42.0, axis=ax), x)])
            add("count_nonzero_" + tag, "count_nonzero", p, [x], [np.asarray(np.count_nonzero(x, axis=ax)).astype(np.int64)])
            if not isinstance(ax, tuple):
                add("argmax_" + tag, "argmax", p, [x], [np.asarray(np.argmax(x, axis=ax)).astype(np.int64)])
                add("argmin_" + tag, "argmin", p, [x], [np.asarray(np.argmin(x, axis=ax)).astype(np.int64)])

with np.errstate(all="ignore"):
    for dt in ["float32", "float64"]:
        x = (rng.standard_normal((6, 10)) * 2).astype(dt)
        x[rng.random((6, 10)) < 0.3] = np.nan
        x[2] = np.nan
        for ax in [None, 0, 1]:
            p = {"axes": [] if ax is None else [ax]}
            tag = f"{dt}_ax{ax}"
            for q in (0.0, 0.4, 0.5, 1.0):
                add(f"nanquantile{q}_{tag}", "nanquantile", dict(p, q=q), [x], [np.asarray(np.nanquantile(x, q, axis=ax)).astype(x.dtype)])
            add(f"nanmedian_{tag}", "nanmedian", p, [x], [np.asarray(np.nanmedian(x, axis=ax))])
            add(f"nanpercentile_{tag}", "nanpercentile", dict(p, p=73.0), [x], [np.asarray(np.nanpercentile(x, 73.0, axis=ax)).astype(x.dtype)])
            for f in ["nansum", "nanmean", "nanmax", "nanmin", "nanprod"]:
                add(f"{f}_{tag}", f, p, [x], [np.asarray(getattr(np, f)(x, axis=ax))])
            for ddof in (0, 1):
                add(f"nanvar{ddof}_{tag}", "nanvar", dict(p, ddof=ddof), [x], [np.asarray(np.nanvar(x, axis=ax, ddof=ddof))])
                add(f"nanstd{ddof}_{tag}", "nanstd", dict(p, ddof=ddof), [x], [np.asarray(np.nanstd(x, axis=ax, ddof=ddof))])
        y = x[[0, 1, 3, 4, 5]]
        for ax in [0, 1]:
            add(f"nanargmax_{dt}_ax{ax}", "nanargmax", {"axes": [ax]}, [y], [np.nanargmax(y, axis=ax).astype(np.int64)])
            add(f"nanargmin_{dt}_ax{ax}", "nanargmin", {"axes": [ax]}, [y], [np.nanargmin(y, axis=ax).astype(np.int64)])

a = np.array([1, 1, np.inf, np.inf, np.nan, 0, 1e-9, -np.inf, 1e10, 2.0])
b = np.array([1 + 1e-6, 1.1, np.inf, -np.inf, np.nan, 1e-9, 0, -np.inf, 1.00001e10, 2.1])
for eq in (False, True):
    add(f"isclose_equalnan{eq}", "isclose", {"rtol": 1e-5, "atol": 1e-8, "equal_nan": eq}, [a, b],
        [np.isclose(a, b, equal_nan=eq)])
    add(f"isclose_rtol_equalnan{eq}", "isclose", {"rtol": 0.05, "atol": 0.0, "equal_nan": eq}, [a, b],
        [np.isclose(a, b, rtol=0.05, atol=0.0, equal_nan=eq)])

# The 16-bit and wide unsigned integers, with values at the edges of their
# range (the high bit of uint32 and uint64), from a stream of their own so
# that the cases above keep their data.
rng = np.random.default_rng(20261129)


def wide(dt, shape):
    info = np.iinfo(dt)
    edges = np.array([info.min, info.min + 1, 0, 1, 2, info.max // 2, info.max // 2 + 1, info.max - 1, info.max],
                     dtype=object)
    n = int(np.prod(shape))
    v = rng.integers(info.min, int(info.max) + 1, n, dtype=dt)
    pick = rng.random(n) < 0.4
    v[pick] = np.array([int(e) for e in edges[rng.integers(0, len(edges), int(pick.sum()))]], dtype=dt)
    return v.reshape(shape)


with np.errstate(over="ignore"):
    for dt in ["int16", "uint16", "uint32", "uint64"]:
        for shape, axes in [((0,), [0]), ((17,), [0]), ((4, 9), [0, -1]), ((2, 3, 5), [1])]:
            x = wide(dt, shape)
            for ax in axes:
                tag = f"{dt}{list(shape)}_ax{ax}"
                add("sort_" + tag, "sort", {"axis": ax}, [x], [np.sort(x, axis=ax, kind="stable")])
                add("argsort_" + tag, "argsort", {"axis": ax}, [x], [np.argsort(x, axis=ax, kind="stable").astype(np.int64)])
                if x.shape[ax] > 0:
                    k = int(rng.integers(0, x.shape[ax]))
                    add("partition_" + tag, "partition", {"axis": ax, "kth": k}, [x],
                        [np.take(np.partition(x, k, axis=ax), k, axis=ax)])
                    p = {"axes": [ax]}
                    add("argmax_" + tag, "argmax", p, [x], [np.asarray(np.argmax(x, axis=ax)).astype(np.int64)])
                    add("argmin_" + tag, "argmin", p, [x], [np.asarray(np.argmin(x, axis=ax)).astype(np.int64)])
                add("cumsum_" + tag, "cumsum", {"axis": ax}, [x], [np.cumsum(x, axis=ax)])
                add("cummax_" + tag, "cummax", {"axis": ax}, [x], [np.maximum.accumulate(x, axis=ax)])
                add("cummin_" + tag, "cummin", {"axis": ax}, [x], [np.minimum.accumulate(x, axis=ax)])
                add("diff1_" + tag, "diff", {"axis": ax, "n": 1}, [x], [np.diff(x, n=1, axis=ax)])
        for shape in [(0,), (40,), (5, 8)]:
            x = wide(dt, shape)
            v, i, inv, c = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
            add(f"unique_{dt}{list(shape)}", "unique", {}, [x],
                [v, i.astype(np.int64), inv.astype(np.int64).reshape(-1), c.astype(np.int64)])
        a = np.sort(wide(dt, (30,)), kind="stable")
        v = np.concatenate([wide(dt, (20,)), a[:5]])
        for side in ["left", "right"]:
            add(f"searchsorted_{dt}_{side}", "searchsorted", {"right": side == "right"}, [a, v],
                [np.searchsorted(a, v, side=side).astype(np.int64)])

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sortscan.json")
with open(out, "w") as f:
    json.dump({"numpy": np.__version__, "cases": cases}, f, separators=(",", ":"))
    f.write("\n")
print(f"{len(cases)} cases written to {out}")
