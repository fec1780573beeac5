# The torch peer of gpt's BenchmarkGPTStepGPU: train_gpt.py's own functions
# (../shared/anchors/train_gpt.py, or beside this file, or $ANCHORS), eager
# runs first so that a time limit cuts only the compiled ones. Writes
# $OUT/train_gpt.json after each configuration.
import json, os, sys

here = os.path.dirname(os.path.abspath(__file__))
for d in [os.environ.get("ANCHORS", ""), here, os.path.join(here, "..", "..", "bench", "anchors"), os.path.join(here, "..", "..", "..", "shared", "anchors"), ".gpu", ".gpu/anchors"]:
    if d and os.path.exists(os.path.join(d, "train_gpt.py")):
        sys.path.insert(0, d)
        break
import torch
import train_gpt as t

res = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name()}
out = os.path.join(os.environ.get("OUT", "."), "train_gpt.json")
runs = {"bytes": lambda: t.bench_train("char_small", 6, 6, 384, 256, 256, 64, False),
        "gpt2": lambda: t.bench_train("gpt2_124m", 12, 12, 768, 1024, 50304, 16, False),
        "attn": lambda: t.bench_attention(),
        "bytes_compile": lambda: t.bench_train("char_small", 6, 6, 384, 256, 256, 64, True),
        "gpt2_compile": lambda: t.bench_train("gpt2_124m", 12, 12, 768, 1024, 50304, 16, True)}
# PARTS picks some of them, comma-separated (default: all, in this order).
parts = [p for p in os.environ.get("PARTS", ",".join(runs)).split(",") if p]
for f in [runs[p] for p in parts]:
    torch.cuda.empty_cache()
    res.update(f())
    json.dump(res, open(out, "w"), indent=1)
