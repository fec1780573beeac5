#!/usr/bin/env bash
# Local side of the GPU pass of package gpt (issue: a GPT trained on the Go
# source tree): builds .gpu/ with the gpt test binary, the gocu command, the
# packed Go corpus (gzip, ~18 MB) and train_gpt.py, the torch peer. Then run
# on the device, carrying [".gpu"]:   bash tools/gpu/gpt.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel); cd "$root"
mkdir -p "$(git rev-parse --git-path info)"; touch "$(git rev-parse --git-path info/exclude)"
grep -qx '/.gpu/' "$(git rev-parse --git-path info/exclude)" || echo '/.gpu/' >> "$(git rev-parse --git-path info/exclude)"
rm -rf .gpu && mkdir -p .gpu
export GOOS=linux GOARCH=amd64 CGO_ENABLED=0
go test -c -trimpath -ldflags='-s -w' -o .gpu/gpt.test ./gpt
go build -trimpath -ldflags='-s -w' -o .gpu/gocu ./cmd/gocu
.gpu/gocu gpt prepare --out .gpu/gosrc.tok.gz
peer=$root/../shared/anchors/train_gpt.py
[ -f "$peer" ] && cp "$peer" .gpu/
gzip -1 .gpu/gpt.test .gpu/gocu
echo "built .gpu/ ($(du -sm .gpu | cut -f1) MiB): run 'bash tools/gpu/gpt.sh' on the device with carry [\".gpu\"] (PARTS=tests, bench, bytes then bytes2, gpt2: one or two per call)"
