#!/usr/bin/env bash
# One GPU pass on the lent machine, after ../shared/tools/gpu-bundle built .gpu/ here:
#   bash tools/gpu/pass.sh [tests] [race] [bench] [anchors] [demo]
# Logs go to $OUT (or /tmp/gpu-pass); a short summary is printed last.
set -u
# A GPU test that cannot reach the GPU or a CUDA library fails here instead of skipping.
export GOCU_REQUIRE_GPU=1
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-/tmp/gpu-pass}; mkdir -p "$out"
export PYTHONUNBUFFERED=1 GOCU_CACHE_DIR=${GOCU_CACHE_DIR:-/tmp/gocu-cache}
want() { case " $* " in *" $sel "*) return 0;; esac; return 1; }
sel_all="$*"; [ -n "$sel_all" ] || sel_all="tests bench"
has() { case " $sel_all " in *" $1 "*) return 0;; esac; return 1; }
# binaries may travel gzipped to fit the transfer limit
for f in .gpu/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader | tee "$out/gpu.txt"
if has tests; then
  echo "##### tests"; bash .gpu/run.sh "${TESTRUN:-.}" 2>&1 | tee "$out/tests.txt" | grep -E '^(=== |--- (FAIL|SKIP)|FAIL|ok|panic|gpu-bundle)' | head -150
fi
if has race && [ -d .gpu-race ]; then
  echo "##### race"; for t in .gpu-race/*.test; do n=$(basename "$t" .test); d=$(grep "^$n " .gpu-race/packages | cut -d' ' -f2); (cd "$d" && "$root/$t" -test.run "${RACERUN:-.}" 2>&1 | tail -5) ; done | tee "$out/race.txt"
fi
if has bench; then
  echo "##### bench"
  while read -r name rel; do
    pat=$(grep "^$name " tools/gpu/benches 2>/dev/null | cut -d' ' -f2-)
    [ -n "$pat" ] || continue
    (cd "$rel" && "$root/.gpu/$name.test" -test.run '^$' -test.bench "$pat" -test.benchmem -test.benchtime "${BENCHTIME:-1x}" 2>&1) | tee -a "$out/bench.txt" | grep -E 'Benchmark|FAIL|panic|skip'
  done < .gpu/packages
fi
if has anchors; then
  echo "##### anchors"; python3 .gpu/anchors/baseline.py 2>&1 | tee "$out/anchors.txt" | tail -40
fi
if has demo && [ -x .gpu/gocu ]; then
  echo "##### demo"; .gpu/gocu demo 2>&1 | tee "$out/demo.txt" | tail -40
fi
# at most 8 files come back: keep the logs in one archive
(cd "$out" && tar czf logs.tgz --exclude=logs.tgz *.log *.txt 2>/dev/null && rm -f *.log *.txt)
