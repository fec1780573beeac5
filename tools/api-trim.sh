#!/usr/bin/env bash
# Re-applies issue 25's API renames to the whole tree, for code written
# against the old names (such as a branch merged after the trim):
#   array:  (*Array).Unsqueeze -> ExpandDims, (*Array).Permute -> Transpose,
#           the receiver of Maker's methods d -> m
#   grad:   (*Var).Unsqueeze -> ExpandDims, (*Var).Permute -> Transpose
#   cuda:   GetDevice -> DeviceAt
#   nn:     array.QuantizedLinear and array.NewQuantizedLinear -> nn.
# tools/apitrim resolves names with go/types, so another type's method of
# the same name is left alone. Run it, then build and test:
#   bash tools/api-trim.sh && go build ./... && go vet ./...
set -euo pipefail
cd "$(dirname "$0")/.."
# A chained call (x.Unsqueeze(0).Unsqueeze(1)) resolves one link a pass:
# run until nothing changes.
go build -o "${TMPDIR:-/tmp}/gocu-apitrim" ./tools/apitrim
for pass in 1 2 3 4 5; do
  changed=$("${TMPDIR:-/tmp}/gocu-apitrim" ./...)
  [ -n "$changed" ] || break
  echo "pass $pass:"; echo "$changed"
done
rm -f "${TMPDIR:-/tmp}/gocu-apitrim"
# QuantizedLinear moved from array to nn: a file that now lacks the nn
# import fails to build, and goimports (or one import line) mends it.
{ grep -rl --include='*.go' -E 'array\.(New)?QuantizedLinear' . || true; } | while read -r f; do
  sed -i -E 's/array\.(New)?QuantizedLinear/nn.\1QuantizedLinear/g' "$f"; echo "$f"
done
