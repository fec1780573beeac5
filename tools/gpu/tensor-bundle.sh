#!/usr/bin/env bash
# Local side of the tensor-core GPU pass (issue 15): builds .gpu/ with the
# test binaries of the packages involved, the gocu command and the peers,
# plus the generated CUDA of examples/kernels for the resource report.
# Then run on the device, carrying [".gpu"]:   bash tools/gpu/tensor.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel); cd "$root"
tools/gpu/bundle.sh examples/kernels gen lowp sim kernel
go run ./cmd/gocu gen --cu ./examples/kernels >/dev/null
mv examples/kernels/zz_gocu_kernels.cu .gpu/kernels.cu
echo "bundle ready: run 'bash tools/gpu/tensor.sh' on the device with carry [\".gpu\"] (NCU=1 adds one profiled launch of each kernel)"
