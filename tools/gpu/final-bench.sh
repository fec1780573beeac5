#!/usr/bin/env bash
# The GPU benchmark pass: the peers (baseline.py), then gocu bench compared with them,
# the package benchmarks, and the demo, all in one call so that ratios come from one run.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/gpu-pass}; mkdir -p "$out"
for f in .gpu/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
export GOCU_CACHE_DIR=/tmp/gocu-cache PYTHONUNBUFFERED=1
day=$(date -u +%F)
python3 .gpu/anchors/baseline.py > "$out/anchors.txt" 2>&1; tail -3 "$out/anchors.txt"
.gpu/gocu bench --compare "$out/baseline.json" --json "$out/bench-$day.json" --plot "$out/roofline-$day.png" 2>&1 | tee "$out/bench.txt"
bench() { # package-dir binary pattern
  (cd "$1" && timeout 240 "$OLDPWD/.gpu/$2.test" -test.run '^$' -test.bench "$3" -test.benchtime "${4:-20x}" -test.benchmem 2>&1 | grep -E 'Benchmark|FAIL|panic')
}
{ bench cuda cuda '^Benchmark(Launch|GraphReplay|CopyDtoD|CopyHtoDPageable|CopyHtoDPinned|CopyDtoHPinned|DriverCall)$'
  bench . root '^BenchmarkLaunchGPU$' 20000x
  bench nvrtc nvrtc 'CompileCold$|CacheWarm|CacheHit'
  bench internal/lecture internal_lecture 'GPU'
  bench array array 'GPU' 1x
} 2>&1 | tee "$out/gobench.txt"
.gpu/gocu demo -o "$out/gray.png" 2>&1 | tee "$out/demo.txt"
cd "$out" && tar czf logs.tgz *.txt && rm -f *.txt gray.png
