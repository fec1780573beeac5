#!/usr/bin/env bash
# A GPU test pass over whatever .gpu holds: each NAME.test runs in the
# package directory that its name gives (array_sortscan runs in array).
set -u
cd "$(dirname "$0")/../.."
R=$PWD; out=${OUT:-/tmp/midpass}; logs=/tmp/mid-logs; mkdir -p "$out" "$logs"
for f in .gpu/*.xz; do [ -e "$f" ] && xz -d -T8 -f "$f"; done; chmod +x .gpu/*.test 2>/dev/null
export GOCU_CACHE_DIR=/tmp/gc GOCU_REQUIRE_GPU=1 PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { # binary dir
  local t0=$SECONDS
  (cd "$R/$2" && timeout ${TO:-300} "$R/.gpu/$1.test" -test.run "${PAT:-^Test}" -test.v -test.timeout 290s > "$logs/$1.log" 2>&1)
  echo "$1 rc=$? $((SECONDS - t0))s pass=$(grep -c -- '--- PASS' "$logs/$1.log") skip=$(grep -c -- '--- SKIP' "$logs/$1.log") fail=$(grep -c -- '--- FAIL' "$logs/$1.log")"
}
dir() { # the package directory: from .gpu/packages, else from the name
  local d; d=$(awk -v n="$1" '$1 == n {print $2}' .gpu/packages 2>/dev/null)
  [ -n "$d" ] && { echo "$d"; return; }
  case $1 in root) echo .;; array_*) echo array;; grad_*) echo grad;; *) echo "$1" | tr _ /;; esac
}
pids=()
for t in .gpu/*.test; do
  n=$(basename "$t" .test)
  [ "$n" = root ] && continue # its out-of-memory probe takes the whole GPU: alone, last
  run "$n" "$(dir "$n")" &
  pids+=($!)
  [ ${#pids[@]} -ge ${PAR:-4} ] && { wait "${pids[0]}"; pids=("${pids[@]:1}"); }
done
wait
[ -e .gpu/root.test ] && run root .
cd "$logs" && grep -h -B1 -A8 -- '--- FAIL' *.log | head -150
tar czf "$out/logs.tgz" *.log
