# Writes fixture.safetensors by hand from the format's specification
# (https://github.com/huggingface/safetensors#format), the way the
# reference implementation lays a file out: an 8-byte little-endian header
# length, the JSON header padded with spaces to a multiple of 8, then the
# tensors' little-endian, row-major bytes, ordered by dtype alignment
# (largest first), then by name. Run: python3 make_fixture.py
import json, struct

tensors = {  # name: (dtype, shape, struct format, values)
    "weight": ("F32", [2, 3], "f", [0.5, -1.25, 3.0, 1e-3, -0.0, 65504.0]),
    "bias": ("F64", [3], "d", [1.0 / 3, -2.5, 1e300]),
    "steps": ("I64", [2, 2], "q", [1, -2, 2**40, -(2**62)]),
    "count": ("I32", [], "i", [-7]),
    "pixels": ("U8", [4], "B", [0, 1, 128, 255]),
    "mask": ("BOOL", [3], "?", [True, False, True]),
    "empty": ("F32", [0, 4], "f", []),
}
size = {"F64": 8, "I64": 8, "F32": 4, "I32": 4, "U8": 1, "BOOL": 1}
order = sorted(tensors, key=lambda n: (-size[tensors[n][0]], n))
header, data = {"__metadata__": {"format": "pt", "note": "written by hand"}}, b""
for n in order:
    dt, shape, fmt, vals = tensors[n]
    b = struct.pack("<%d%s" % (len(vals), fmt), *vals)
    header[n] = {"dtype": dt, "shape": shape, "data_offsets": [len(data), len(data) + len(b)]}
    data += b
h = json.dumps(header, separators=(",", ":")).encode()
h += b" " * (-len(h) % 8)
with open("fixture.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + data)
