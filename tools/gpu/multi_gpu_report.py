#!/usr/bin/env python3
"""Side by side: gocu's all-reduce benchmarks (go test -bench output of
package nccl's BenchmarkAllReduce and package dist's BenchmarkGPUAllReduce)
and the peer (tools/gpu/allreduce_torch.py's JSON, and nccl-tests'
all_reduce_perf output when there is one), with the issue's targets: bus
bandwidth at least 95% of the peer's from 256 MiB up, latency at 8 B at most
1.1x the peer's. Then the data-parallel epoch: BenchmarkGPUParallelEpoch's
s/epoch on 1 GPU and on all.

    python3 tools/gpu/multi_gpu_report.py bench-nccl.txt bench-dist.txt allreduce_torch.json [nccl-tests.txt] [bench-epoch.txt]
"""
import json
import re
import sys

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def go_bench(path):
    """size in bytes -> (us, busGB/s) from lines like
    BenchmarkAllReduce/8MiB-16  100  ...  12.3 us/allreduce  ...  45.6 busGB/s"""
    rows = {}
    try:
        text = open(path).read()
    except OSError:
        return rows
    for line in text.splitlines():
        m = re.match(r"Benchmark\w*AllReduce/(\d+)(B|KiB|MiB|GiB)(?:-\d+)?\s", line)
        if not m:
            continue
        size = int(m.group(1)) * UNITS[m.group(2)]
        us = re.search(r"([\d.]+) us/allreduce", line)
        bus = re.search(r"([\d.]+) busGB/s", line)
        if us and bus:
            rows[size] = (float(us.group(1)), float(bus.group(1)))
    return rows


def nccl_tests(path):
    """all_reduce_perf's out-of-place columns: size, time (us), busbw."""
    rows = {}
    try:
        text = open(path).read()
    except OSError:
        return rows
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0].isdigit() and f[2] == "float":
            try:
                rows[int(f[0])] = (float(f[5]), float(f[7]))
            except ValueError:
                pass
    return rows


def fmt(row):
    return f"{row[0]:10.2f} {row[1]:8.2f}" if row else f"{'-':>10} {'-':>8}"


def main(argv):
    if len(argv) < 4:
        print(__doc__)
        return 2
    g_nccl, g_dist = go_bench(argv[1]), go_bench(argv[2])
    try:
        peer = json.load(open(argv[3]))
    except (OSError, ValueError):
        peer = {"rows": []}
    torch = {r["bytes"]: (r["us"], r["busGBps"]) for r in peer["rows"]}
    nt = nccl_tests(argv[4]) if len(argv) > 4 else {}
    print(f"all-reduce float32 sum, {peer.get('ranks', '?')} ranks; torch {peer.get('torch', '?')}, NCCL {peer.get('nccl', '?')} ({peer.get('gpu', '?')})")
    print(f"{'bytes':>11} | {'gocu nccl us':>10} {'busGB/s':>8} | {'gocu dist us':>10} {'busGB/s':>8} | {'torch us':>10} {'busGB/s':>8} | {'nccl-tests':>10} {'busGB/s':>8} | bus ratio (nccl/torch, dist/torch)")
    verdict = []
    for size in sorted(set(g_nccl) | set(g_dist) | set(torch)):
        a, b, t, n = g_nccl.get(size), g_dist.get(size), torch.get(size), nt.get(size)
        ratio = ""
        if t and t[1] > 0:
            ratio = " ".join(f"{x[1] / t[1]:.3f}" if x else "-" for x in (a, b))
        print(f"{size:>11} | {fmt(a)} | {fmt(b)} | {fmt(t)} | {fmt(n)} | {ratio}")
        if t and size >= 256 << 20 and t[1] > 0:
            for name, x in (("nccl", a), ("dist", b)):
                if x:
                    verdict.append((f"busbw {size >> 20} MiB ({name})", x[1] / t[1], ">= 0.95", x[1] / t[1] >= 0.95))
        if t and size == 8:
            for name, x in (("nccl", a), ("dist", b)):
                if x:
                    verdict.append((f"latency 8 B ({name})", x[0] / t[0], "<= 1.10", x[0] / t[0] <= 1.10))
    for what, r, target, ok in verdict:
        print(f"{what:28s} {r:6.3f}x of the peer, target {target}: {'met' if ok else 'MISSED'}")
    if len(argv) > 5:
        ep = {}
        for line in open(argv[5]).read().splitlines():
            m = re.match(r"BenchmarkGPUParallelEpoch/gpus=(\d+)/b(\d+)\S*\s.*?([\d.]+) s/epoch", line)
            if m:
                ep[int(m.group(1))] = (int(m.group(2)), float(m.group(3)))
        if 1 in ep and len(ep) > 1:
            k = max(ep)
            s = ep[1][1] / ep[k][1]
            print(f"data-parallel epoch: 1 GPU batch {ep[1][0]} {ep[1][1]:.3f} s, {k} GPUs batch {ep[k][0]} {ep[k][1]:.3f} s: {s:.2f}x, target >= 1.6x on 2 GPUs: {'met' if s >= 1.6 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
