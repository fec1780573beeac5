#!/usr/bin/env bash
# One device call: the peers and gocu bench first (an idle GPU), then the
# GPU tests of the packages this round changed, several at a time.
# Build: tools/gpu/bundle-xz.sh <packages>; carry [".gpu"].
set -u
cd "$(dirname "$0")/../.."
R=$PWD; out=${OUT:-/tmp/pass}; L=/tmp/pass-logs; mkdir -p "$out" "$L"
for f in .gpu/*.xz; do [ -e "$f" ] && xz -d -T8 -f "$f"; done; chmod +x .gpu/*.test .gpu/gocu 2>/dev/null
export GOCU_CACHE_DIR=/tmp/gc PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
part=${1:-bench}
if [ "$part" = bench ]; then
OUT=$L timeout 120 python3 .gpu/anchors/baseline.py > "$L/anchors.txt" 2>&1
OUT=$L timeout 110 python3 .gpu/anchors/baseline_numpy.py > "$L/numpy.txt" 2>&1
timeout 60 python3 tools/gpu/quant_peer.py > "$L/quant.txt" 2>&1
nvcc -O2 -arch=sm_90 -o /tmp/lf .gpu/anchors/launch_floor.cu -lcuda && for i in 1 2 3; do /tmp/lf; done > "$L/floor.txt" 2>&1
python3 -c "import json,sys; d={}; [d.update(json.load(open(f))) for f in sys.argv[1:]]; json.dump(d, open('$L/peers.json','w'))" "$L/baseline.json" "$L/baseline_numpy.json"
B() { timeout "$1" .gpu/gocu bench --compare "$L/peers.json" "${@:2}" 2>&1 | grep -v '^\s*[0-9]*/[0-9]* '; }
B 60 --json "$L/b-arrays.json" --only copy,add,sum,chain_fused,chain_unfused,array_op_overhead,launch > "$L/b-arrays.txt"
B 90 -n 10 --suite numpy --json "$L/b-numpy.json" > "$L/b-numpy.txt"
B 80 -n 10 --suite linalg --json "$L/b-linalg.json" > "$L/b-linalg.txt"
(cd array && timeout 60 "$R/.gpu/array.test" -test.run '^$' -test.bench 'OverheadGPU' -test.benchtime 10x -test.benchmem) > "$L/go-bench.txt" 2>&1
(cd nn && timeout 40 "$R/.gpu/nn.test" -test.run '^$' -test.bench 'ScopedStepGPU' -test.benchtime 2x) >> "$L/go-bench.txt" 2>&1
echo "== benches done at ${SECONDS}s"
cd "$L" && tail -n +1 b-arrays.txt b-numpy.txt b-linalg.txt | grep -v '^$' | head -90
grep -E 'Bench' go-bench.txt; grep -i 'quant\|copy' quant.txt; grep launch floor.txt | head -6
tar czf "$out/bench.tgz" *.txt *.json
exit 0
fi
export GOCU_REQUIRE_GPU=1
run() { (cd "$R/$2" && timeout ${TO:-240} "$R/.gpu/$1.test" -test.run '^Test' -test.v -test.timeout $((${TO:-240} - 10))s > "$L/$1.log" 2>&1)
  echo "$1 rc=$? pass=$(grep -c -- '--- PASS' "$L/$1.log") skip=$(grep -c -- '--- SKIP' "$L/$1.log") fail=$(grep -c -- '--- FAIL' "$L/$1.log")"; }
while read -r n d; do [ "$n" = root ] || [ "$n" = cuda ] || TO=$([ "$n" = array ] && echo 330 || echo 240) run "$n" "$d" & done < .gpu/packages; wait
run cuda cuda; run root .
echo "== tests done at ${SECONDS}s"
cd "$L" && grep -h -B2 -A6 -- '--- FAIL' *.log | head -80
tar czf "$out/tests.tgz" *.log
