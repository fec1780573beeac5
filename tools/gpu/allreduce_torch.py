#!/usr/bin/env python3
"""The peer of gocu's all-reduce benchmarks: torch.distributed all_reduce of
float32 (sum, in place) from 8 B to 1 GiB, one process per GPU over NCCL,
measured as BenchmarkAllReduce (package nccl) and BenchmarkGPUAllReduce
(package dist) measure: each iteration is timed with CUDA events on every
rank's stream, the slowest rank counts, and the median over the iterations
is reported with nccl-tests' bandwidths, algbw = bytes/time and busbw =
algbw * 2(n-1)/n.

    torchrun --standalone --nproc_per_node=N tools/gpu/allreduce_torch.py [out.json]

Rank 0 prints one line per size and writes the JSON (default
$OUT/allreduce_torch.json, or ./allreduce_torch.json).
"""
import json
import os
import sys

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("nccl")
    rank, n = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    max_bytes = 1 << 30
    buf = torch.ones(max_bytes // 4, dtype=torch.float32, device="cuda")
    sizes = [8]
    s = 16
    while s <= max_bytes:
        sizes.append(s)
        s *= 4
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    slowest = torch.zeros(1, dtype=torch.float64, device="cuda")
    rows = []
    for size in sizes:
        x = buf[: size // 4]
        warm, iters = (20, 200) if size < (64 << 20) else (5, 20)
        for _ in range(warm):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(iters):
            start.record()
            dist.all_reduce(x)
            end.record()
            end.synchronize()
            slowest.fill_(start.elapsed_time(end) / 1e3)
            dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
            times.append(slowest.item())
        times.sort()
        med = times[len(times) // 2]
        algbw = size / med / 1e9
        busbw = algbw * 2 * (n - 1) / n
        rows.append({"bytes": size, "us": med * 1e6, "algGBps": algbw, "busGBps": busbw})
        if rank == 0:
            print(f"torch all_reduce {size:>11d} B  {med * 1e6:10.2f} us  algbw {algbw:8.2f} GB/s  busbw {busbw:8.2f} GB/s", flush=True)
    if rank == 0:
        path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ.get("OUT", "."), "allreduce_torch.json")
        with open(path, "w") as f:
            json.dump({"ranks": n, "torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                       "gpu": torch.cuda.get_device_name(local), "rows": rows}, f, indent=1)
        print(f"torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, {n} ranks: {path}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
