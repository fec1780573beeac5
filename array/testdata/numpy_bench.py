#!/usr/bin/python3
# NumPy on the workloads of package array's CPU benchmarks (bench_test.go).
# Run in the same session as `go test -bench . ./array` and compare ratios.
import time
import numpy as np

def best(f, reps):
    t = 1e9
    for _ in range(reps):
        s = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - s)
    return t

n = 1 << 24
rng = np.random.default_rng(1)
x = rng.uniform(-1, 1, n).astype(np.float32)
y = rng.uniform(-1, 1, n).astype(np.float32)
z = np.empty_like(x)
t = best(lambda: np.add(x, y, out=z), 20)
print("add 2^24 f32 (out=)      %8.3f ms  %6.1f GB/s" % (t * 1e3, 12 * n / t / 1e9))
t = best(lambda: x + y, 20)
print("add 2^24 f32 (new array) %8.3f ms  %6.1f GB/s" % (t * 1e3, 12 * n / t / 1e9))
t = best(lambda: x.sum(), 20)
print("sum 2^24 f32             %8.3f ms  %6.1f GB/s" % (t * 1e3, 4 * n / t / 1e9))
t = best(lambda: np.maximum(x * np.float32(1.5) + np.float32(0.5), 0) * np.float32(2), 10)
print("relu(1.5x+0.5)*2         %8.3f ms" % (t * 1e3))
m = 1024
a = rng.uniform(-1, 1, (m, m)).astype(np.float32)
b = rng.uniform(-1, 1, (m, m)).astype(np.float32)
a @ b
t = best(lambda: a @ b, 10)
print("matmul 1024^2 f32        %8.3f ms  %6.1f GFLOP/s" % (t * 1e3, 2 * m**3 / t / 1e9))
a64, b64 = a.astype(np.float64), b.astype(np.float64)
t = best(lambda: a64 @ b64, 10)
print("matmul 1024^2 f64        %8.3f ms  %6.1f GFLOP/s" % (t * 1e3, 2 * m**3 / t / 1e9))
s16 = x[:16].copy()
t = best(lambda: s16 + np.float32(1), 20000)
print("add 16 f32 (overhead)    %8.3f us" % (t * 1e6))
big = rng.normal(size=(4096, 4096)).astype(np.float32)
t = best(lambda: big.sum(axis=0), 10)
print("sum axis 0 4096^2 f32    %8.3f ms  %6.1f GB/s" % (t * 1e3, 4 * 4096 * 4096 / t / 1e9))
sm = rng.normal(size=(4096, 1024)).astype(np.float32)
def softmax():
    e = np.exp(sm - sm.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
t = best(softmax, 10)
print("softmax 4096x1024 f32    %8.3f ms  %6.1f GB/s" % (t * 1e3, 8 * 4096 * 1024 / t / 1e9))
