#!/usr/bin/env bash
# Local side of the GPU pass of internal/attn (flash attention forward and
# backward): builds .gpu/ with its test binary, the gocu command and the
# generated CUDA for the resource report. Then run on the device, carrying
# [".gpu"]:   bash tools/gpu/attn.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel); cd "$root"
mkdir -p "$(git rev-parse --git-path info)"; touch "$(git rev-parse --git-path info/exclude)"
grep -qx '/.gpu/' "$(git rev-parse --git-path info/exclude)" || echo '/.gpu/' >> "$(git rev-parse --git-path info/exclude)"
rm -rf .gpu && mkdir -p .gpu
export GOOS=linux GOARCH=amd64 CGO_ENABLED=0
go test -c -trimpath -ldflags='-s -w' -o .gpu/internal_attn.test ./internal/attn
go build -trimpath -ldflags='-s -w' -o .gpu/gocu ./cmd/gocu
go run ./cmd/gocu gen --cu ./internal/attn >/dev/null
mv internal/attn/zz_gocu_attn.cu .gpu/attn.cu
gzip -1 .gpu/*.test .gpu/gocu
echo "built .gpu/ ($(du -sm .gpu | cut -f1) MiB): run 'bash tools/gpu/attn.sh' on the device with carry [\".gpu\"]"
