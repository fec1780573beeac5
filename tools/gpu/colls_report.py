#!/usr/bin/env python3
"""The collectives' table of issue 23: gocu beside nccl-tests, in one call.

    python3 tools/gpu/colls_report.py bench-colls-nccl.txt bench-colls-dist.txt PEERDIR

bench-colls-nccl.txt is `go test -bench NCCLTests` of package nccl (raw
memory), bench-colls-dist.txt `-bench GPUCollectives` of package dist
(arrays; watchdog on and off), PEERDIR holds nccl-tests' output as
all_reduce_perf.txt, reduce_scatter_perf.txt, all_gather_perf.txt and
broadcast_perf.txt. Every figure is timed the same way (20 iterations back
to back, one synchronisation). The issue's targets: from 1 MiB up, bus
bandwidth at least 0.95x nccl-tests'; below, time at most 1.1x. A row says
ok or MISS for each gocu figure; the last lines count the misses.
"""
import os
import re
import sys

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
OPS = ["all_reduce", "reduce_scatter", "all_gather", "broadcast"]
MIB = 1 << 20


def read(path):
    try:
        return open(path).read()
    except OSError:
        return ""


def go_bench(path, prefix):
    """(op, mode, size) -> (us, busGB/s) from lines like
    BenchmarkNCCLTests/all_reduce/out/8MiB-16  5  ...  12.3 us ... 45.6 busGB/s
    (mode "" when the name has none, as package dist's)"""
    rows = {}
    pat = re.compile(prefix + r"/(\w+)/(?:(in|out)/)?(\d+)(B|KiB|MiB|GiB)(?:-\d+)?\s")
    for line in read(path).splitlines():
        m = pat.match(line)
        if not m:
            continue
        us = re.search(r"([\d.e+-]+) us(\s|$)", line)
        bus = re.search(r"([\d.e+-]+) busGB/s", line)
        if us and bus:
            size = int(m.group(3)) * UNITS[m.group(4)]
            rows[(m.group(1), m.group(2) or "", size)] = (float(us.group(1)), float(bus.group(1)))
    return rows


def nccl_tests(path):
    """size -> {"out": (us, busbw), "in": (us, busbw)} from an *_perf output."""
    rows = {}
    for line in read(path).splitlines():
        f = line.split()
        if len(f) >= 13 and f[0].isdigit() and f[2] == "float":
            try:
                rows[int(f[0])] = {"out": (float(f[5]), float(f[7])), "in": (float(f[9]), float(f[11]))}
            except ValueError:
                pass
    return rows


def judge(size, mine, peer):
    """The ratio that the target is about and whether it is met."""
    if not mine or not peer:
        return "", None
    if size >= MIB:
        if peer[1] <= 0:
            return "", None
        r = mine[1] / peer[1]
        return f"{r:5.2f}x bw", r >= 0.95
    r = mine[0] / peer[0] if peer[0] > 0 else 0
    return f"{r:5.2f}x t ", r <= 1.1


def cell(row):
    return f"{row[0]:9.1f} {row[1]:7.1f}" if row else f"{'-':>9} {'-':>7}"


def name(size):
    for u in ("GiB", "MiB", "KiB"):
        if size >= UNITS[u] and size % UNITS[u] == 0:
            return f"{size // UNITS[u]}{u}"
    return f"{size}B"


def main(argv):
    if len(argv) != 4:
        print(__doc__)
        return 2
    mine = go_bench(argv[1], "BenchmarkNCCLTests")
    # dist's AllReduce and Broadcast run in place, the others out of place.
    dist_on = go_bench(argv[2], r"BenchmarkGPUCollectives/watchdog=on")
    dist_off = go_bench(argv[2], r"BenchmarkGPUCollectives/watchdog=off")
    misses = {"nccl": 0, "dist": 0}
    counted = {"nccl": 0, "dist": 0}
    for op in OPS:
        peer = nccl_tests(os.path.join(argv[3], op + "_perf.txt"))
        if not peer and not any(k[0] == op for k in mine):
            continue
        print(f"\n{op}: us and busbw (GB/s); ratio = gocu/nccl-tests (time below 1 MiB, bus bandwidth from 1 MiB)")
        print(f"{'size':>8} | {'nccl-tests out':>17} {'gocu nccl out':>17} {'ratio':>9}    | {'nccl-tests in':>17} {'gocu nccl in':>17} {'ratio':>9}    | {'dist (watchdog on)':>18} {'ratio':>9}    | {'dist (off)':>17}")
        sizes = sorted(set(peer) | {k[2] for k in mine if k[0] == op})
        dmode = "in" if op in ("all_reduce", "broadcast") else "out"
        for size in sizes:
            p = peer.get(size, {})
            line = f"{name(size):>8} |"
            for mode in ("out", "in"):
                g = mine.get((op, mode, size))
                txt, ok = judge(size, g, p.get(mode))
                if ok is not None:
                    counted["nccl"] += 1
                    misses["nccl"] += not ok
                line += f" {cell(p.get(mode))} {cell(g)} {txt:>9} {'ok  ' if ok else 'MISS' if ok is not None else '    '} |"
            d_on = dist_on.get((op, "", size))
            d_off = dist_off.get((op, "", size))
            txt, ok = judge(size, d_on, p.get(dmode))
            if ok is not None:
                counted["dist"] += 1
                misses["dist"] += not ok
            line += f" {cell(d_on):>18} {txt:>9} {'ok  ' if ok else 'MISS' if ok is not None else '    '} | {cell(d_off)}"
            print(line)
    print()
    for k, what in (("nccl", "package nccl (raw memory)"), ("dist", "package dist (arrays, watchdog on)")):
        print(f"{what}: {counted[k] - misses[k]} of {counted[k]} figures meet the target, {misses[k]} miss")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
