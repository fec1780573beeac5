#!/usr/bin/env bash
# Compiles the generated CUDA of internal/lecture on this (GPU-less) machine
# with NVRTC and shows what ptxas made of each tensor kernel: registers,
# spills, and a count of SASS opcodes in the whole kernel and in its longest
# loop. NVRTC, ptxas and cuobjdump come from Debian's nvidia-cuda-toolkit
# 12.4 (trixie, non-free), unpacked under /opt/cuda124 without installing
# (--setup does that once: apt-get download + dpkg -x).
#   bash tools/gpu/local-cuda.sh --setup
#   bash tools/gpu/local-cuda.sh [ARCH] [KERNEL...]     # ARCH sm_90 (default), sm_90a, sm_80, ...
set -euo pipefail
root=$(git rev-parse --show-toplevel); cd "$root"
cu=/opt/cuda124/root
if [ "${1:-}" = --setup ]; then
  if [ ! -x $cu/usr/bin/ptxas ]; then
    printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main contrib non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' > /etc/apt/sources.list.d/trixie.sources
    printf 'Package: *\nPin: release n=trixie\nPin-Priority: 50\n' > /etc/apt/preferences.d/trixie-low
    apt-get update -qq
    mkdir -p /opt/cuda124/debs && cd /opt/cuda124/debs
    apt-get download -qq nvidia-cuda-toolkit/trixie libnvrtc12/trixie libnvrtc-builtins12.4/trixie
    for f in *.deb; do dpkg -x "$f" $cu; done
  fi
  $cu/usr/bin/ptxas --version | tail -1
  exit 0
fi
arch=${1:-sm_90}; shift || true
export LD_LIBRARY_PATH=$cu/usr/lib/x86_64-linux-gnu
out=${TMPDIR:-/tmp}/gocu-local; mkdir -p "$out"
go run ./cmd/gocu gen --cu ./internal/lecture >/dev/null
mv internal/lecture/zz_gocu_lecture.cu "$out/kernels.cu"
rm -f "$out/kernels.cubin" # a stale one would be read below as if it were this build
go run ./cmd/gocu compile "$out/kernels.cu" --arch "$arch" --std c++17 -o "$out/kernels.cubin" 2>&1 | grep -E 'error|rror:' || true
if [ ! -s "$out/kernels.cubin" ]; then
  # NVRTC does not show ptxas's messages: ask ptxas itself
  go run ./cmd/gocu compile "$out/kernels.cu" --arch "compute_${arch#sm_}" --std c++17 --ptx -o "$out/kernels.ptx" >/dev/null 2>&1 &&
    $cu/usr/bin/ptxas -arch="$arch" "$out/kernels.ptx" -o /dev/null 2>&1 | head -20
  echo "no CUBIN for $arch" >&2; exit 1
fi
$cu/usr/bin/cuobjdump -res-usage "$out/kernels.cubin" 2>&1 | awk '/Function/{f=$2} /REG:/{print f, $1, $2, $4}' | sed 's/://' | column -t
ks=("$@"); [ ${#ks[@]} -gt 0 ] || ks=($($cu/usr/bin/cuobjdump -res-usage "$out/kernels.cubin" 2>&1 | awk '/Function/{print $2}' | sed 's/://' | grep -E 'Gemm|Flash'))
for k in "${ks[@]}"; do
  $cu/usr/bin/cuobjdump -sass -fun "$k" "$out/kernels.cubin" | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's/ *\/\* 0x[0-9a-f]* \*\///' > "$out/$k.sass"
  # the longest backward branch is the main loop
  python3 - "$out/$k.sass" "$k" <<'PY'
import re, sys, collections
lines = open(sys.argv[1]).read().splitlines()
addr = lambda l: int(re.search(r'/\*([0-9a-f]{4,})\*/', l).group(1), 16)
best = None
for i, l in enumerate(lines):
    m = re.search(r'BRA (0x[0-9a-f]+)', l)
    if m and int(m.group(1), 16) < addr(l):
        span = addr(l) - int(m.group(1), 16)
        if best is None or span > best[0]: best = (span, int(m.group(1), 16), addr(l))
def hist(ls):
    c = collections.Counter()
    for l in ls:
        op = re.sub(r'^@!?U?P\w+\s+', '', l.split('*/', 1)[1].strip()).split(' ')[0].split('.')[0]
        c[op] += 1
    return c
tot = hist(lines)
print(f"{sys.argv[2]}: {len(lines)} instructions; HMMA {tot['HMMA']} HGMMA {tot['HGMMA']} LDSM {tot['LDSM']} LDGSTS {tot['LDGSTS']} BAR {tot['BAR']} local {tot['LDL']+tot['STL']}")
if best:
    body = [l for l in lines if best[1] <= addr(l) <= best[2]]
    c = hist(body)
    print(f"  main loop {best[1]:#x}-{best[2]:#x}: {len(body)} instructions: " + ", ".join(f"{k} {v}" for k, v in c.most_common(14)))
PY
done
echo "(cubin, SASS: $out)"
