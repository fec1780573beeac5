#!/usr/bin/python3
"""Writes complex_fft.json: NumPy's results for gocu's complex dtypes and
package array/fft. Run with Debian's python3-numpy:

    /usr/bin/python3 array/testdata/conformance/gen_complex_fft.py

Arrays are {"dtype", "shape", "data"}; complex elements are [re, im] pairs;
NaN and infinities are the strings "nan", "inf" and "-inf".
"""
import json
import os

import numpy as np

rng = np.random.default_rng(20261128)


def num(v):
    """A float, or "nan", "inf", "-inf", which JSON lacks."""
    v = float(v)
    if np.isfinite(v):
        return v
    return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")


def enc(a):
    a = np.asarray(a)
    if np.iscomplexobj(a):
        data = [[num(v.real), num(v.imag)] for v in a.ravel()]
    elif a.dtype == np.bool_:
        data = [bool(v) for v in a.ravel()]
    else:
        data = [num(v) for v in a.ravel()]
    return {"dtype": a.dtype.name, "shape": list(a.shape), "data": data}


def crand(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


cases = []


def case(op, want, **kw):
    c = {"op": op, "want": enc(want)}
    for k, v in kw.items():
        c[k] = enc(v) if isinstance(v, np.ndarray) else v
    cases.append(c)


# Elementwise and reductions on complex128.
x, y = crand(3, 5), crand(3, 5)
y[0, 0] = 1e-3 + 2e3j  # a divisor with very different parts (Smith's algorithm)
x[1, 1] = -4 + 0j  # sqrt and log on the negative real axis
x[1, 2] = -4 - 0.0j
for op, f in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide),
              ("eq", np.equal), ("ne", np.not_equal)]:
    case(op, f(x, y), x=x, y=y)
yy = y.copy()
yy[::2] = x[::2]
case("eq", np.equal(x, yy), x=x, y=yy)
case("ne", np.not_equal(x, yy), x=x, y=yy)
px = np.array([1 + 1j, 2, 3 - 1j, 4j, 0, -2.5 + 0.5j, 0.3 - 0.7j])
py = np.array([2, 0.5 + 1j, -1, 2 - 3j, 2, 0, 1.5 + 0.25j])
case("pow", px ** py, x=px, y=py)
for op, f in [("abs", np.abs), ("angle", np.angle), ("conj", np.conj), ("real", np.real), ("imag", np.imag),
              ("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("neg", np.negative), ("square", np.square),
              ("reciprocal", np.reciprocal)]:
    case(op, f(x), x=x)
for axis in [None, 0, 1]:
    for op, f in [("sum", np.sum), ("mean", np.mean), ("prod", np.prod)]:
        case(op, f(x, axis=axis), x=x, axis=axis)
a, b = crand(4, 6), crand(6, 3)
case("matmul", a @ b, x=a, y=b)
ar = rng.standard_normal((4, 6))
case("matmul", ar @ b, x=ar, y=b)
case("matmul", a @ ar.T, x=a, y=ar.T.copy())
ba, bb = crand(2, 3, 4), crand(2, 4, 5)
case("matmul", ba @ bb, x=ba, y=bb)

# Promotion (array with array).
names = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64", "complex64", "complex128"]
promo = []
for p in names:
    for q in ["complex64", "complex128"]:
        promo.append([p, q, np.promote_types(p, q).name])

# FFTs. Lengths: powers of two, odd, prime and composite.
for n in [1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 31, 64, 97, 100]:
    z = crand(n)
    r = rng.standard_normal(n)
    for norm in ["backward", "ortho", "forward"]:
        case("fft", np.fft.fft(z, norm=norm), x=z, norm=norm)
        case("ifft", np.fft.ifft(z, norm=norm), x=z, norm=norm)
        case("rfft", np.fft.rfft(r, norm=norm), x=r, norm=norm)
        if n > 1:
            h = np.fft.rfft(r)
            case("irfft", np.fft.irfft(h, n=n, norm=norm), x=h, n=n, norm=norm)
            case("irfft", np.fft.irfft(h, norm=norm), x=h, norm=norm)
m = crand(6, 10)
mr = rng.standard_normal((6, 10))
for n in [4, 10, 13]:
    for axis in [0, 1, -1]:
        case("fft", np.fft.fft(m, n=n, axis=axis), x=m, n=n, axis=axis)
        case("ifft", np.fft.ifft(m, n=n, axis=axis), x=m, n=n, axis=axis)
        case("rfft", np.fft.rfft(mr, n=n, axis=axis), x=mr, n=n, axis=axis)
        case("irfft", np.fft.irfft(m, n=n, axis=axis), x=m, n=n, axis=axis)
c3 = crand(3, 4, 5)
r3 = rng.standard_normal((3, 4, 5))
for norm in ["backward", "ortho", "forward"]:
    case("fft2", np.fft.fft2(c3, norm=norm), x=c3, norm=norm)
    case("ifft2", np.fft.ifft2(c3, norm=norm), x=c3, norm=norm)
    case("fftn", np.fft.fftn(c3, norm=norm), x=c3, norm=norm)
    case("ifftn", np.fft.ifftn(c3, norm=norm), x=c3, norm=norm)
    case("rfftn", np.fft.rfftn(r3, norm=norm), x=r3, norm=norm)
    h3 = np.fft.rfftn(r3)
    case("irfftn", np.fft.irfftn(h3, s=r3.shape, norm=norm), x=h3, s=list(r3.shape), norm=norm)
case("fft2", np.fft.fft2(c3, axes=(0, 2)), x=c3, axes=[0, 2])
case("fftn", np.fft.fftn(c3, s=(2, 6), axes=(2, 0)), x=c3, s=[2, 6], axes=[2, 0])
case("fftn", np.fft.fftn(c3, s=(3, 7)), x=c3, s=[3, 7])
case("rfftn", np.fft.rfftn(r3, axes=(0, 1)), x=r3, axes=[0, 1])
case("irfftn", np.fft.irfftn(np.fft.rfftn(r3, axes=(2, 0)), axes=(2, 0)), x=np.fft.rfftn(r3, axes=(2, 0)), axes=[2, 0])
case("irfftn", np.fft.irfftn(crand(3, 4, 3)), x=np.fft.rfftn(r3)[:, :, :3] * 0 + crand(3, 4, 3))
for n in [1, 2, 5, 8]:
    for d in [1.0, 0.1]:
        case("fftfreq", np.fft.fftfreq(n, d), n=n, d=d)
        case("rfftfreq", np.fft.rfftfreq(n, d), n=n, d=d)
s1 = rng.standard_normal(7)
s2 = rng.standard_normal((4, 5))
case("fftshift", np.fft.fftshift(s1), x=s1)
case("ifftshift", np.fft.ifftshift(s1), x=s1)
case("fftshift", np.fft.fftshift(s2), x=s2)
case("ifftshift", np.fft.ifftshift(s2), x=s2)
case("fftshift", np.fft.fftshift(s2, axes=1), x=s2, axes=[1])

# The irfftn case above with random input: regenerate want from its x.
last = cases[[i for i, c in enumerate(cases) if c["op"] == "irfftn"][-1]]
xv = np.array([complex(*map(float, v)) for v in last["x"]["data"]]).reshape(last["x"]["shape"])
last["want"] = enc(np.fft.irfftn(xv))

# Printing (str and repr).
prints = []
for a in [np.array([1 + 2j, 3.5 - 4j]), np.array([[1e-5 + 1j, 2 - 3e6j], [np.nan + 1j, -np.inf - 1j]]),
          np.array([0j, 1j, -1j], dtype=np.complex64), np.arange(12).reshape(3, 4) * (1 + 0.5j) / 3,
          np.array([1.25 + 0.5j, -2 + 1e-3j], dtype=np.complex64)]:
    prints.append({"x": enc(a), "str": str(a), "repr": repr(a)})

# .npy files of complex arrays, C and Fortran order.
npy = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "npy")
c8 = (np.arange(6).reshape(2, 3) * (1 - 0.5j) + 0.25j).astype(np.complex64)
np.save(os.path.join(npy, "complex64_2x3.npy"), c8)
np.save(os.path.join(npy, "complex128_fortran_3x2.npy"), np.asfortranarray((c8.T * (1 + 1j)).astype(np.complex128)))

out = {"numpy": np.__version__, "promotion": promo, "cases": cases, "print": prints}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "complex_fft.json")
with open(path, "w") as f:
    json.dump(out, f, separators=(",", ":"))
    f.write("\n")
print(len(cases), "cases ->", path)
