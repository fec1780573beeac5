#!/usr/bin/env bash
# The third session's closing pass in one device call: the peers and the
# benchmarks first, on an idle GPU, then the GPU tests of the changed
# packages, all at once. Build: tools/gpu/bundle-xz.sh <packages>; carry
# [".gpu"]. ONLY lists gocu bench's workloads, NUMPY the baseline_numpy.py
# cases (a regular expression), FRAME the frame benchmarks and their
# baseline_frame.py cases, GO extra Go benchmarks as "pkg:pattern ...".
set -u
cd "$(dirname "$0")/../.."
R=$PWD; out=${OUT:-/tmp/pass-c}; L=/tmp/pass-logs; mkdir -p "$out" "$L"
for f in .gpu/*.xz; do [ -e "$f" ] && xz -d -T8 -f "$f"; done; chmod +x .gpu/*.test .gpu/gocu 2>/dev/null
export GOCU_CACHE_DIR=/tmp/gc PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin
A=.gpu/anchors
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ "${BENCH:-1}" = 1 ]; then
  OUT=$L timeout 90 python3 tools/gpu/peers_c.py > "$L/peers_c.txt" 2>&1
  OUT=$L timeout 90 python3 tools/gpu/peer_filter.py $A/baseline_numpy.py "${NUMPY:-fft|complex}" > "$L/numpy.txt" 2>&1
  OUT=$L PARTS=${GPTPEER:-bytes,gpt2} timeout 120 python3 tools/gpu/train_gpt_peer.py > "$L/train_gpt.txt" 2>&1
  nvcc -O2 -arch=sm_90 -o /tmp/lf $A/launch_floor.cu -lcuda && for i in 1 2 3; do /tmp/lf; done > "$L/floor.txt" 2>&1
  python3 -c "import json,sys,os; d={}; [d.update(json.load(open(f))) for f in sys.argv[1:] if os.path.exists(f)]; json.dump(d, open('$L/peers.json','w'))" \
    "$L/peers_c.json" "$L/baseline_numpy.json" "$L/train_gpt.json"
  echo "== peers done at ${SECONDS}s"
  B() { timeout "$1" .gpu/gocu bench --compare "$L/peers.json" "${@:2}" 2>&1 | grep -v '^\s*[0-9]*/[0-9]* '; }
  [ -n "${ONLY:-}" ] && B 100 --json "$L/b-only.json" --only "$ONLY" > "$L/b-only.txt"
  [ -n "${SUITE:-}" ] && B 80 --json "$L/b-suite.json" --suite "$SUITE" > "$L/b-suite.txt"
  for g in ${GO:-}; do
    p=${g%%:*}; b=${g#*:}; n=$(echo "$p" | tr / _)
    (cd "$p" && timeout 90 "$R/.gpu/$n.test" -test.run '^$' -test.bench "$b" -test.benchtime ${BT:-10x} -test.benchmem) >> "$L/go-bench.txt" 2>&1
    echo "== $g done at ${SECONDS}s"
  done
  if [ -n "${FRAME:-}" ]; then
    (cd frame && FRAME_BENCH_ROWS=${ROWS:-10000000} timeout ${FTO:-90} "$R/.gpu/frame.test" -test.run '^$' -test.bench "$FRAME" -test.benchtime ${FBT:-3x}) > "$L/frame-bench.txt" 2>&1
    OUT=$L timeout 60 python3 tools/gpu/peer_filter.py $A/baseline_frame.py "${FRAMEPEER:-q1|q3|q5|join}" ${ROWS:-10000000} > "$L/frame-peer.txt" 2>&1
  fi
  echo "== benches done at ${SECONDS}s"
  cd "$L" && cat b-*.txt 2>/dev/null | grep -v '^$' | head -70
  grep -hE '^Bench' go-bench.txt frame-bench.txt 2>/dev/null; grep -v '^$' peers_c.txt numpy.txt frame-peer.txt 2>/dev/null | head -60
  grep -E 'ms/step' train_gpt.txt; grep launch floor.txt | head -6
  tar czf "$out/bench.tgz" *.txt *.json; cd "$R"
fi
if [ "${TESTS:-1}" = 1 ]; then
  export GOCU_REQUIRE_GPU=1
  run() { (cd "$R/$2" && timeout ${TO:-240} "$R/.gpu/$1.test" -test.run "${PAT:-^Test}" -test.v -test.timeout $((${TO:-240} - 10))s > "$L/$1.log" 2>&1)
    echo "$1 rc=$? pass=$(grep -c -- '--- PASS' "$L/$1.log") skip=$(grep -c -- '--- SKIP' "$L/$1.log") fail=$(grep -c -- '--- FAIL' "$L/$1.log")"; }
  # Second runs: nn's GPU tests with the fused kernels off, frame's tests
  # with the GPU as the default device.
  runenv() { local log=$1 e=$2; shift 2; (cd "$R/$2" && env "$e" timeout ${TO:-240} "$R/.gpu/$1.test" -test.run "$3" -test.v > "$L/$log.log" 2>&1)
    echo "$log rc=$? pass=$(grep -c -- '--- PASS' "$L/$log.log") skip=$(grep -c -- '--- SKIP' "$L/$log.log") fail=$(grep -c -- '--- FAIL' "$L/$log.log")"; }
  [ -e .gpu/nn.test ] && runenv nn-nofuse GOCU_NOFUSE=1 nn nn 'GPU' &
  [ -e .gpu/frame.test ] && runenv frame-cuda GOCU_DEVICE=cuda frame frame '^Test' &
  # cuda's and the root's out-of-memory probes take the whole GPU: alone, last.
  while read -r n d; do [ "$n" = root ] || [ "$n" = cuda ] || run "$n" "$d" & done < .gpu/packages; wait
  for n in cuda root; do grep -q "^$n " .gpu/packages && run "$n" "$(awk -v n=$n '$1 == n {print $2}' .gpu/packages)"; done
  echo "== tests done at ${SECONDS}s"
  cd "$L" && grep -h -B2 -A6 -- '--- FAIL' *.log | head -80
  tar czf "$out/tests.tgz" *.log
fi
exit 0
