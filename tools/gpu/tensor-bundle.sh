#!/usr/bin/env bash
# Local side of the tensor-core GPU pass (issue 15): builds .gpu/ with the
# test binaries of the packages involved, the gocu command, the peers
# (../shared/anchors, or $SHARED/anchors) and the generated CUDA of
# internal/lecture for the resource report. Then run on the device,
# carrying [".gpu"]:   bash tools/gpu/tensor.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel); cd "$root"
shared=${SHARED:-$root/../shared}
[ -d "$shared/anchors" ] || shared=/work/shared
mkdir -p "$(git rev-parse --git-path info)"; touch "$(git rev-parse --git-path info/exclude)"
grep -qx '/.gpu/' "$(git rev-parse --git-path info/exclude)" || echo '/.gpu/' >> "$(git rev-parse --git-path info/exclude)"
rm -rf .gpu && mkdir -p .gpu
export GOOS=linux GOARCH=amd64 CGO_ENABLED=0
for rel in internal/lecture gen lowp; do
  go test -c -trimpath -ldflags='-s -w' -o ".gpu/$(echo "$rel" | tr '/' '_').test" "./$rel"
done
go build -trimpath -ldflags='-s -w' -o .gpu/gocu ./cmd/gocu
cp -r "$shared/anchors" .gpu/anchors
go run ./cmd/gocu gen --cu ./internal/lecture >/dev/null
mv internal/lecture/zz_gocu_lecture.cu .gpu/kernels.cu
gzip -1 .gpu/*.test .gpu/gocu
echo "built .gpu/ ($(du -sm .gpu | cut -f1) MiB): run 'bash tools/gpu/tensor.sh' on the device with carry [\".gpu\"] (NCU=1 adds one profiled launch of each kernel)"
