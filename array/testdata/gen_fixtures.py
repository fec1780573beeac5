#!/usr/bin/python3
# Regenerates the NumPy fixtures of package array's tests:
#   /usr/bin/python3 testdata/gen_fixtures.py   (from the array directory)
# Needs Debian's python3-numpy (1.24 was used); NEP 50 weak-scalar results
# use numpy's _set_promotion_state("weak"), the NumPy 2 behaviour.
import json, os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
names = ["bool", "uint8", "int32", "int64", "float32", "float64", "int8", "int16", "uint16", "uint32", "uint64"]
dt = {n: np.dtype(n) for n in names}

prom = {}
for a in names:
    for b in names:
        prom[a + "," + b] = str(np.promote_types(dt[a], dt[b]))
div = {a: str((np.ones(1, dt[a]) / np.ones(1, dt[a])).dtype) for a in names}
sqrt = {a: str(np.sqrt(np.ones(1, dt[a])).dtype) for a in names}
np._set_promotion_state("weak")
weak = {}
for a in names:
    x = np.ones(2, dt[a])
    weak[a + ",bool"] = str((x + True).dtype)
    weak[a + ",int"] = str((x + 1).dtype)
    weak[a + ",float"] = str((x + 2.5).dtype)
np._set_promotion_state("legacy")
with open(os.path.join(here, "promotion.json"), "w") as f:
    json.dump({"promote": prom, "weak": weak, "truediv": div, "sqrt": sqrt}, f, indent=1, sort_keys=True)

# .npy files: every dtype, C and Fortran order, format 1.0 and 2.0,
# big-endian, 0-d and empty arrays. Values are deterministic so that the
# Go test recomputes them: element i in C order of the logical array.
def values(name, shape):
    n = int(np.prod(shape)) if shape else 1
    i = np.arange(n)
    if name == "bool":
        v = (i % 3) == 1
    elif name == "uint8":
        v = (i * 37 + 11) % 256
    elif name == "int32":
        v = i * 7919 - 5000
    elif name == "int64":
        v = (i * 7919 - 5000) * 1000003
    elif name in ("int8", "int16"):
        v = i * 7919 - 5000  # wraps in astype, as C
    elif name == "uint16":
        v = (i * 40503 + 11) % 65536
    elif name == "uint32":
        v = (i * 2654435761 + 7) % 2**32
    elif name == "uint64":
        v = np.array([(int(k) * 0x9E3779B97F4A7C15 + 3) % 2**64 for k in i.ravel()], dtype=np.uint64)
    else:
        v = (i - 3.25) / 7.0
    return v.astype(dt[name]).reshape(shape)

npydir = os.path.join(here, "npy")
os.makedirs(npydir, exist_ok=True)
cases = []
def save(fn, a, name, shape, version=None):
    path = os.path.join(npydir, fn)
    if version:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, a, version=version)
    else:
        np.save(path, a)
    cases.append({"file": fn, "dtype": name, "shape": list(shape)})

for name in names:
    for shape in [(), (0,), (5,), (3, 4), (2, 3, 4)]:
        save("%s_%s_c.npy" % (name, "x".join(map(str, shape)) or "scalar"), values(name, shape), name, shape)
    save("%s_3x4_f.npy" % name, np.asfortranarray(values(name, (3, 4))), name, (3, 4))
    save("%s_2x3x4_f.npy" % name, np.asfortranarray(values(name, (2, 3, 4))), name, (2, 3, 4))
    if name not in ("bool", "uint8", "int8"):
        save("%s_3x4_be.npy" % name, values(name, (3, 4)).astype(dt[name].newbyteorder(">")), name, (3, 4))
    save("%s_3x4_v2.npy" % name, values(name, (3, 4)), name, (3, 4), version=(2, 0))
with open(os.path.join(npydir, "cases.json"), "w") as f:
    json.dump(cases, f, indent=1)

# Printing: str() of arrays the Go test builds the same way.
def p(key, a):
    return {"key": key, "str": str(a)}
prints = [
    p("arange12f32/7", np.arange(12, dtype=np.float32).reshape(3, 4) / np.float32(7)),
    p("arange2000", np.arange(2000.0)),
    p("arange2000x2", np.arange(2000.0).reshape(2, 1000)),
    p("sci", np.array([1e-5, 1.0, 1e5])),
    p("pad", np.array([1.5, 2, 3])),
    p("bool", np.array([True, False])),
    p("scalar", np.array(3.5)),
    p("int2x2", np.array([[1, 2], [3, 4]], np.int64)),
    p("nonfinite", np.array([np.nan, np.inf, -np.inf, 1.25])),
    p("empty", np.zeros((2, 0, 3))),
    p("u8cube", np.zeros((2, 2, 2), np.uint8)),
    p("f32tenth", np.array([0.1, 0.25, 100.0], np.float32)),
    p("int3d", np.arange(30).reshape(2, 3, 5)),
    p("big", np.array([123456789.0, 0.5])),
    p("wrap", np.arange(40.0) * 1.1),
    p("int3000", np.arange(3000, dtype=np.int32)),
    p("neg", np.array([-1.0, 2.0])),
    p("tiny", np.array([1e-10, 1.0])),
    p("f32neg", np.array([-0.5, 0, 0.5], np.float32)),
    p("cube", np.arange(1200, dtype=np.float32).reshape(10, 10, 12) / np.float32(3)),
    p("i16", np.array([[-32768, 5], [32767, 0]], np.int16)),
    p("u16", np.array([0, 65535, 7], np.uint16)),
    p("u32", np.array([4294967295, 1, 0], np.uint32)),
    p("u64", np.array([18446744073709551615, 9223372036854775808, 3], np.uint64)),
]
with open(os.path.join(here, "print.json"), "w") as f:
    json.dump(prints, f, indent=1)
