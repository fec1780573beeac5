#!/usr/bin/env bash
# The first GPU pass after the fourth session, which had no device time: the
# GPU code written then (attention on warpgroup MMA, named barriers, mbarrier
# and bulk copies, a GPT step that frees as it goes, BinaryInto) has only
# run on the simulator, the fake driver and clang-16. One device call:
#   tools/gpu/bundle-xz.sh array grad nn gpt internal/gpttrain internal/attn gen frame internal/bench
#   run: bash tools/gpu/pass-d.sh            (carry [".gpu"])
#   or in two calls when one would pass 10 minutes: PART=main, then PART=attn
# It runs pass-c.sh (peers, then gocu bench's gpt suite and the overhead
# workloads, the attention and overhead Go benchmarks, then every bundled
# package's GPU tests), then the attention tests and benchmarks again
# with each GOCU_ATTN_WGMMA setting. Raw logs: $OUT/bench.tgz, tests.tgz, attn.tgz.
set -u
cd "$(dirname "$0")/../.."
R=$PWD; out=${OUT:-/tmp/pass-d}; L=/tmp/pass-logs; mkdir -p "$out" "$L"
for f in .gpu/*.xz; do [ -e "$f" ] && xz -d -T8 -f "$f"; done; chmod +x .gpu/*.test .gpu/gocu 2>/dev/null
[ "${PART:-all}" = attn ] || OUT=$out SUITE=${SUITE:-gpt} ONLY=${ONLY:-launch,array_op_overhead,array_op_overhead_into} \
  NUMPY=${NUMPY:-fft_batched} GO=${GO:-"array:OverheadGPU internal/attn:GPUWG"} \
  BT=${BT:-10x} TO=${TO:-200} bash tools/gpu/pass-c.sh
# The Hopper kernels behind their switches: 1 is fwd128WG with the
# warpgroup backward, 2 the ping-pong fwd128WS, plus the atomic dq.
if [ "${PART:-all}" != main ] && [ -e .gpu/internal_attn.test ]; then
  export GOCU_REQUIRE_GPU=1
  for v in 1 2 1:atomic; do
    e="GOCU_ATTN_WGMMA=${v%%:*}"; [ "$v" = 1:atomic ] && e="$e GOCU_ATTN_WGMMA_ATOMIC=1"
    (cd internal/attn && env $e timeout 150 "$R/.gpu/internal_attn.test" -test.run '^TestGPU' -test.v > "$L/attn-$v.log" 2>&1)
    echo "attn $e rc=$? pass=$(grep -c -- '--- PASS' "$L/attn-$v.log") fail=$(grep -c -- '--- FAIL' "$L/attn-$v.log")"
  done
  (cd internal/attn && GOCU_ATTN_WGMMA=2 timeout 90 "$R/.gpu/internal_attn.test" -test.run '^$' \
    -test.bench 'GPU$/d128/causal/fwd$' > "$L/attn-bench-ws.txt" 2>&1)
  grep -h -B2 -A6 -- '--- FAIL' "$L"/attn-*.log | head -40; grep -h '^Bench' "$L/attn-bench-ws.txt"
  (cd "$L" && tar czf "$out/attn.tgz" attn-*)
fi
exit 0
