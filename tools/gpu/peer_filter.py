# Runs a peer script of bench/anchors with only the cases whose names match
# a regular expression, so that one device call can time a few of them:
#   OUT=. python3 tools/gpu/peer_filter.py bench/anchors/baseline_numpy.py 'fft|complex'
#   OUT=. python3 tools/gpu/peer_filter.py bench/anchors/baseline_frame.py 'q1|q3|join' 10000000
# A script with safe(name, fn) skips the other names there; otherwise each
# top-level put(...) line that does not match is dropped. Setup still runs.
import re, sys

path, pat = sys.argv[1], re.compile(sys.argv[2])
src = open(path).read()
hook = "def safe(name, fn):\n"
if hook in src:
    src = src.replace(hook, hook + "    if not _pat.search(name):\n        return\n", 1)
else:
    keep = lambda l: not l.startswith("put(") or "rows" in l.split(",")[0] or _pat.search(l.split(",")[0])
    # Writing files is slow: only when a reading case is kept.
    io = ("to_csv(", "write_table(")
    skip = lambda l: not pat.search("read") and any(k in l for k in io)
    _pat = pat
    src = "\n".join(l for l in src.split("\n") if keep(l) and not skip(l))
sys.argv = [path] + sys.argv[3:]
exec(compile(src, path, "exec"), {"__name__": "__main__", "__file__": path, "_pat": pat})
