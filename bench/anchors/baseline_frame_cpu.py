#!/usr/bin/python3
# baseline_frame_cpu.py: pandas on the development machine, the peer of frame's CPU backend
# (frame/bench_test.go's cpu sub-benchmarks). baseline_frame.py needs pyarrow, which Debian
# does not package; this runs its pandas queries on the same generated data without it, with
# the string key as pandas' own "string" dtype. Run it on the machine that runs
#   FRAME_BENCH_ROWS=N go test -run '^$' -bench '(GroupBy|Join|Sort|Filter)[A-Za-z0-9]*/cpu' ./frame
#   OUT=dir /usr/bin/python3 baseline_frame_cpu.py [rows]    (wall-clock seconds, best of 3)
import json, os, sys, time
import numpy as np
import pandas as pd

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
K = 100
res = {"rows": N, "pandas": pd.__version__, "cores": os.cpu_count()}


def put(k, v):
    res[k] = v
    print(f"{k:40s} {v}", flush=True)


def best(fn, reps=3):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return round(min(ts), 4)


rng = np.random.default_rng(1)
df = pd.DataFrame({
    "id1": rng.integers(1, K + 1, N).astype(np.int32),
    "id2": rng.integers(1, K + 1, N).astype(np.int32),
    "id3": rng.integers(1, N // K + 1, N).astype(np.int32),
    "v1": rng.integers(1, 6, N).astype(np.int32),
    "v2": rng.integers(1, 16, N).astype(np.int32),
    "v3": np.round(rng.uniform(0, 100, N), 6),
})
df["id4"] = ("id" + df["id1"].astype(str)).astype("string")
small = pd.DataFrame({"id1": np.arange(1, K + 1, dtype=np.int32), "w": rng.uniform(0, 1, K)})
big = pd.DataFrame({"id3": np.arange(1, N // K + 1, dtype=np.int32), "w": rng.uniform(0, 1, N // K)})
put("GroupByQ1", best(lambda: df.groupby("id1").v1.sum()))
put("GroupByQ2", best(lambda: df.groupby(["id1", "id2"]).v1.sum()))
put("GroupByQ3", best(lambda: df.groupby("id3").agg(v1=("v1", "sum"), v3=("v3", "mean"))))
put("GroupByQ5", best(lambda: df.groupby("id4")[["v1", "v2", "v3"]].sum()))
put("GroupByQ7", best(lambda: df.groupby("id3").agg(a=("v1", "max"), b=("v2", "min"))))
put("GroupByStd", best(lambda: df.groupby("id2").v3.std()))
put("JoinSmallInner", best(lambda: df.merge(small, on="id1")))
put("JoinBigInner", best(lambda: df.merge(big, on="id3")))
put("JoinBigLeft", best(lambda: df.merge(big, on="id3", how="left")))
put("SortV3", best(lambda: df.sort_values("v3")))
put("SortID1ID3", best(lambda: df.sort_values(["id1", "id3"])))
put("Filter", best(lambda: df[df.v3 > 50]))
out = os.environ.get("OUT", ".")
json.dump(res, open(os.path.join(out, f"baseline_frame_cpu_{N}.json"), "w"), indent=1)
