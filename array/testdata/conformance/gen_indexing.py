#!/usr/bin/python3
# Regenerates indexing.json, the NumPy conformance cases of package array's
# indexing, shape and mask operations:
#   /usr/bin/python3 testdata/conformance/gen_indexing.py   (from array/)
# Needs Debian's python3-numpy (1.24 was used). Inputs are random with a
# fixed seed; conformance_indexing_test.go runs every case on every backend.
import json, math, os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261128)
cases = []


def enc(a):
    a = np.asarray(a)
    out = []
    for v in a.reshape(-1).tolist():
        if isinstance(v, float):
            if math.isnan(v):
                v = "nan"
            elif math.isinf(v):
                v = "inf" if v > 0 else "-inf"
        out.append(v)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": out}


def rand(dtype, shape):
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype in ("float32", "float64"):
        return rng.standard_normal(size=shape).astype(dtype)
    if dtype == "uint8":
        return rng.integers(0, 256, size=shape).astype(dtype)
    return rng.integers(-1000, 1000, size=shape).astype(dtype)


def idx(n, shape, dtype="int64", neg=True):
    lo = -n if neg else 0
    return rng.integers(lo, max(n, 1), size=shape).astype(dtype)


def add(name, op, params, inputs, want):
    if not isinstance(want, (list, tuple)):
        want = [want]
    cases.append({"name": name, "op": op, "params": params,
                  "inputs": [enc(x) for x in inputs], "want": [enc(w) for w in want]})


dtypes = ["float32", "float64", "int32", "int64", "uint8", "bool"]

# Take and IndexSelect.
for dt in dtypes:
    for shape, axis, ishape in [((7,), 0, (5,)), ((4, 6), 1, (3, 2)), ((3, 4, 5), -2, (6,)),
                                ((5, 3), 0, ()), ((0, 3), 1, (4,)), ((4, 3), 0, (0,))]:
        a = rand(dt, shape)
        n = shape[axis]
        i = idx(n, ishape, "int32" if dt == "int32" else "int64") if n > 0 else np.zeros(ishape, np.int64)
        if n == 0 and i.size:
            continue
        add(f"take/{dt}/{shape}/{axis}/{ishape}", "take", {"axis": axis}, [a, i], np.take(a, i, axis=axis))
a = rand("float32", (6, 5))
i = idx(5, (4,))
add("index_select/f32", "index_select", {"axis": 1}, [a, i], np.take(a, i, axis=1))
a = rand("int64", (5,))
add("take/uint8-indices", "take", {"axis": 0}, [a, np.array([4, 0, 2, 2], np.uint8)], a[[4, 0, 2, 2]])

# TakeAlongAxis, with broadcasting.
for dt in ["float32", "int64", "bool"]:
    a = rand(dt, (4, 5, 3))
    for axis, ishape in [(0, (2, 5, 3)), (1, (4, 7, 3)), (-1, (4, 5, 2)), (1, (1, 4, 3)), (2, (4, 1, 6))]:
        i = idx(a.shape[axis], ishape)
        add(f"take_along_axis/{dt}/{axis}/{ishape}", "take_along_axis", {"axis": axis}, [a, i],
            np.take_along_axis(a, i, axis=axis))

# Fancy indices inside Slice.
def fancy(name, a, items, arrays):
    # items: ("arr", k) | ("slice", start, stop, step) | ("int", i) | ("newaxis",) | ("ellipsis",)
    key, spec = [], []
    for it in items:
        if it[0] == "arr":
            key.append(arrays[it[1]])
            spec.append({"k": "arr", "i": it[1] + 1})
        elif it[0] == "slice":
            key.append(slice(*it[1:]))
            spec.append({"k": "slice", "a": list(it[1:])})
        elif it[0] == "int":
            key.append(it[1])
            spec.append({"k": "int", "i": it[1]})
        elif it[0] == "newaxis":
            key.append(np.newaxis)
            spec.append({"k": "newaxis"})
        else:
            key.append(Ellipsis)
            spec.append({"k": "ellipsis"})
    add("fancy/" + name, "fancy", {"index": spec}, [a] + arrays, a[tuple(key)])

a = rand("float32", (5, 6, 7))
fancy("one", a, [("arr", 0)], [idx(5, (3,))])
fancy("second-axis", a, [("slice", None, None, None), ("arr", 0)], [idx(6, (2, 2))])
fancy("two-adjacent", a, [("slice", 1, 4, None), ("arr", 0), ("arr", 1)], [idx(6, (4,)), idx(7, (4,))])
fancy("two-broadcast", a, [("arr", 0), ("arr", 1)], [idx(5, (3, 1)), idx(6, (1, 4))])
fancy("separated", a, [("arr", 0), ("slice", None, None, 2), ("arr", 1)], [idx(5, (3,)), idx(7, (3,))])
fancy("int-and-array", a, [("int", -1), ("slice", None, None, None), ("arr", 0)], [idx(7, (2,))])
fancy("int-adjacent", a, [("slice", None, None, None), ("int", 2), ("arr", 0)], [idx(7, (2, 3))])
fancy("array-int-separated", a, [("arr", 0), ("slice", None, None, None), ("int", 1)], [idx(5, (4,))])
fancy("ellipsis", a, [("ellipsis",), ("arr", 0)], [idx(7, (5,))])
fancy("newaxis", a, [("newaxis",), ("arr", 0), ("slice", None, None, -1)], [idx(5, (2,))])
fancy("mask-2d", a, [("arr", 0)], [rand("bool", (5, 6))])
fancy("mask-mid", a, [("slice", None, 3, None), ("arr", 0)], [rand("bool", (6,))])
fancy("mask-and-int", a, [("arr", 0), ("int", 2), ("arr", 1)], [np.array([1, 0, 1, 1, 0], bool), np.array([0, 6, -7])])
fancy("empty-index", a, [("arr", 0)], [np.zeros((0,), np.int64)])
b = rand("int64", (4,))
fancy("1d-negative", b, [("arr", 0)], [np.array([-1, -4, 3, 0, 0])])

# Boolean masks: select and assignment.
for dt in ["float32", "int32", "bool", "float64"]:
    a = rand(dt, (4, 5))
    m = rand("bool", (4, 5))
    add(f"mask/{dt}/full", "mask", {}, [a, m], a[m])
    m1 = rand("bool", (4,))
    add(f"mask/{dt}/rows", "mask", {}, [a, m1], a[m1])
a = rand("float32", (0, 3))
add("mask/empty", "mask", {}, [a, np.zeros((0,), bool)], a[np.zeros((0,), bool)])
a = rand("float32", (3, 4))
m = rand("bool", (3, 4))
w = a.copy(); w[m] = 2.5
add("set_mask/scalar", "set_mask", {"value": 2.5}, [a, m], w)
r = rand("float32", (4,))
m1 = np.array([True, False, True])
w = a.copy(); w[m1] = r
add("set_mask/broadcast-row", "set_mask", {}, [a, m1, r], w)
v = rand("float32", (int(m.sum()),))
w = a.copy(); w[m] = v
add("set_mask/values", "set_mask", {}, [a, m, v], w)
ai = rand("int32", (6,))
mi = rand("bool", (6,))
w = ai.copy(); w[mi] = -7
add("set_mask/int-scalar", "set_mask", {"value": -7}, [ai, mi], w)
# Static-size mask select (as JAX's size=): the first size selections, then fill.
a = rand("float32", (10,))
m = rand("bool", (10,))
sel = a[m]
for size in [2, int(m.sum()), 12]:
    want = np.full((size,), -1.0, np.float32)
    k = min(size, sel.size)
    want[:k] = sel[:k]
    add(f"mask_static/{size}", "mask_static", {"size": size, "fill": -1.0}, [a, m], want)

# Put (flat indices, in place).
for dt in ["float32", "int64", "uint8", "bool"]:
    a = rand(dt, (3, 4))
    i = rng.permutation(12)[:5] - 6
    v = rand(dt, (5,))
    w = a.copy(); np.put(w, i, v)
    add(f"put/{dt}", "put", {}, [a, i, v], w)
a = rand("float64", (6,))
w = a.copy(); np.put(w, [1, -1], 9.0)
add("put/scalar", "put", {"value": 9.0}, [a, np.array([1, -1])], w)

# ScatterAdd, IndexAdd, ScatterMax, Scatter (torch semantics; duplicates).
def scatter_ref(a, axis, index, src, ufunc):
    out = a.copy()
    axis = axis % a.ndim
    grid = list(np.indices(index.shape, sparse=False))
    grid[axis] = index
    ufunc.at(out, tuple(grid), src[tuple(slice(0, s) for s in index.shape)])
    return out

for dt in ["float32", "float64", "int32", "int64"]:
    a = rand(dt, (5, 4))
    for axis in [0, 1, -1]:
        ishape = (7, 4) if axis % 2 == 0 else (5, 9)
        index = idx(a.shape[axis], ishape, neg=False)
        src = rand(dt, ishape)
        add(f"scatter_add/{dt}/{axis}", "scatter_add", {"axis": axis}, [a, index, src], scatter_ref(a, axis, index, src, np.add))
        add(f"scatter_max/{dt}/{axis}", "scatter_max", {"axis": axis}, [a, index, src], scatter_ref(a, axis, index, src, np.maximum))
    idx1 = np.array([0, 2, 2, 4, 0, 0, -1])
    src = rand(dt, (7, 4))
    out = a.copy(); np.add.at(out, (idx1,), src)
    add(f"index_add/{dt}/0", "index_add", {"axis": 0}, [a, idx1, src], out)
    idx2 = np.array([3, 3, 1])
    src = rand(dt, (5, 3))
    out = a.copy(); np.add.at(out, (slice(None), idx2), src)
    add(f"index_add/{dt}/-1", "index_add", {"axis": -1}, [a, idx2, src], out)
a = rand("float32", (3, 4))
a[1, 2] = np.nan
index = np.array([[0, 1, 2, 0], [2, 2, 1, 0]])
src = rand("float32", (2, 4)); src[0, 3] = np.nan
add("scatter_max/nan", "scatter_max", {"axis": 0}, [a, index, src], scatter_ref(a, 0, index, src, np.maximum))
a = rand("float32", (4, 3))
index = np.array([[3, 0, 1], [1, 2, 3]])
src = rand("float32", (3, 5))
out = a.copy()
for i in range(2):
    for j in range(3):
        out[index[i, j], j] = src[i, j]
add("scatter/set", "scatter", {"axis": 0}, [a, index, src], out)
a = rand("float32", (4, 3))
add("scatter_add/empty-index", "scatter_add", {"axis": 0}, [a, np.zeros((0, 3), np.int64), rand("float32", (0, 3))], a)

# Nonzero, FlatNonzero, ArgWhere and the static form.
for dt in ["bool", "float32", "int32", "uint8"]:
    for shape in [(13,), (4, 5), (2, 3, 4), (0, 3)]:
        a = rand(dt, shape)
        if dt != "bool":
            a = np.where(rand("bool", shape), a, 0).astype(dt)
        add(f"nonzero/{dt}/{shape}", "nonzero", {}, [a], list(np.nonzero(a)))
        add(f"argwhere/{dt}/{shape}", "argwhere", {}, [a], np.argwhere(a))
        add(f"flatnonzero/{dt}/{shape}", "flatnonzero", {}, [a], np.flatnonzero(a))
a = np.array([0.0, np.nan, -0.0, 1.0], np.float64)
add("nonzero/nan", "nonzero", {}, [a], list(np.nonzero(a)))
a = rand("bool", (3, 4))
nz = np.nonzero(a)
for size in [0, 3, 20]:
    want = [np.full((size,), -1, np.int64) for _ in range(2)]
    k = min(size, nz[0].size)
    for j in range(2):
        want[j][:k] = nz[j][:k]
    add(f"nonzero_static/{size}", "nonzero_static", {"size": size, "fill": -1}, [a], want)

# Shape operations.
a = rand("float32", (6, 4))
add("split/2/0", "split", {"n": 2, "axis": 0}, [a], np.split(a, 2, axis=0))
add("split/4/-1", "split", {"n": 4, "axis": -1}, [a], np.split(a, 4, axis=-1))
add("array_split/4/0", "array_split", {"n": 4, "axis": 0}, [a], np.array_split(a, 4, axis=0))
add("array_split/5/1", "array_split", {"n": 5, "axis": 1}, [a], np.array_split(a, 5, axis=1))
add("split_at/0", "split_at", {"cuts": [1, 4, 3, 9], "axis": 0}, [a], np.split(a, [1, 4, 3, 9], axis=0))
for n in [1, 3, 4, 6, 8]:
    size = -(-6 // n)
    want = [a[i:i + size] for i in range(0, 6, size)]
    add(f"chunk/{n}", "chunk", {"n": n, "axis": 0}, [a], want)
for dt in ["float32", "int64", "bool"]:
    a = rand(dt, (2, 3))
    for reps in [[2], [2, 1], [1, 3], [2, 2, 2], [0, 2]]:
        add(f"tile/{dt}/{reps}", "tile", {"reps": reps}, [a], np.tile(a, reps))
    for rep, axis in [(2, 0), (3, 1), (0, -1), ([1, 0, 2], 1), ([2, 1], 0)]:
        add(f"repeat/{dt}/{rep}/{axis}", "repeat", {"repeats": rep, "axis": axis}, [a], np.repeat(a, rep, axis=axis))
for dt in ["float32", "int32"]:
    a = rand(dt, (3, 4))
    for w in [[[1, 2], [0, 3]], [[2, 2]], [[0, 0], [5, 1]]]:
        ww = w * 2 if len(w) == 1 else w
        add(f"pad/{dt}/constant/{w}", "pad", {"widths": w, "mode": "constant", "value": 7}, [a], np.pad(a, ww, mode="constant", constant_values=7))
        add(f"pad/{dt}/edge/{w}", "pad", {"widths": w, "mode": "edge"}, [a], np.pad(a, ww, mode="edge"))
        add(f"pad/{dt}/reflect/{w}", "pad", {"widths": w, "mode": "reflect"}, [a], np.pad(a, ww, mode="reflect"))
a = rand("float64", (5,))
add("pad/reflect-wide", "pad", {"widths": [[9, 11]], "mode": "reflect"}, [a], np.pad(a, (9, 11), mode="reflect"))
a = rand("float32", (2, 3, 4))
for axes in [[], [0], [-1], [0, 2]]:
    add(f"flip/{axes}", "flip", {"axes": axes}, [a], np.flip(a, axis=tuple(axes) if axes else None))
for shift, axis in [(1, 0), (-2, 1), (7, -1), (0, 2), (5, None), (-13, None)]:
    add(f"roll/{shift}/{axis}", "roll", {"shift": shift, "axis": axis}, [a], np.roll(a, shift, axis=axis))
for dt in ["float32", "int64", "bool"]:
    m = rand(dt, (2, 4, 5))
    for k in [0, 1, -2, 7]:
        add(f"tril/{dt}/{k}", "tril", {"k": k}, [m], np.tril(m, k))
        add(f"triu/{dt}/{k}", "triu", {"k": k}, [m], np.triu(m, k))
m = rand("float32", (4, 6))
v = rand("int32", (3,))
for k in [0, 2, -1, -5]:
    add(f"diag/2d/{k}", "diag", {"k": k}, [m], np.diag(m, k))
    add(f"diag/1d/{k}", "diag", {"k": k}, [v], np.diag(v, k))
    add(f"trace/{k}", "trace", {"offset": k}, [m], np.trace(m, k))
c = rand("float64", (3, 4, 5))
for off, a1, a2 in [(0, 0, 1), (1, 1, 2), (-1, 2, 0), (2, -1, -2)]:
    add(f"diagonal/{off}/{a1}/{a2}", "diagonal", {"offset": off, "axis1": a1, "axis2": a2}, [c], np.diagonal(c, off, a1, a2))
t = rand("int32", (3, 3))
add("trace/int", "trace", {"offset": 0}, [t], np.trace(t))
x, y, z = rand("float32", (3,)), rand("float32", (4,)), rand("float32", (2,))
add("meshgrid/xy", "meshgrid", {"ij": False}, [x, y, z], np.meshgrid(x, y, z, indexing="xy"))
add("meshgrid/ij", "meshgrid", {"ij": True}, [x, y], np.meshgrid(x, y, indexing="ij"))
a = rand("int32", (2, 3))
add("zeros_like", "zeros_like", {}, [a], np.zeros_like(a))
add("ones_like", "ones_like", {}, [a], np.ones_like(a))
add("full_like", "full_like", {"value": 5}, [a], np.full_like(a, 5))
for dt, start, stop, num, base in [("float64", 0, 3, 7, 10.0), ("float32", -1, 2, 5, 2.0), ("float64", 1, 1, 1, 10.0), ("float64", 0, 1, 0, 10.0)]:
    add(f"logspace/{dt}/{num}", "logspace", {"dtype": dt, "start": start, "stop": stop, "num": num, "base": base}, [],
        np.logspace(start, stop, num, base=base).astype(dt))

with open(os.path.join(here, "indexing.json"), "w") as f:
    json.dump({"numpy": np.__version__, "cases": cases}, f, separators=(",", ":"))
print(len(cases), "cases")
