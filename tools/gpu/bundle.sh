#!/usr/bin/env bash
# Builds .gpu/ like ../shared/tools/gpu-bundle, but only for the packages named
# (default: all with tests), gzipped so that the bundle fits the transfer limit.
# Usage: [RACE='cuda ...'] tools/gpu/bundle.sh [package dirs...]    e.g. tools/gpu/bundle.sh . cuda array
set -euo pipefail
root=$(git rev-parse --show-toplevel); cd "$root"
mkdir -p "$(git rev-parse --git-path info)"; touch "$(git rev-parse --git-path info/exclude)"
grep -qx '/.gpu/' "$(git rev-parse --git-path info/exclude)" || echo '/.gpu/' >> "$(git rev-parse --git-path info/exclude)"
rm -rf .gpu && mkdir -p .gpu
export GOOS=linux GOARCH=amd64 CGO_ENABLED=0
if [ $# -eq 0 ]; then set -- $(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}}{{end}}' ./... | sed "s|^$root/\{0,1\}||; s|^$|.|"); fi
: > .gpu/packages
for rel in "$@"; do
  name=$(echo "$rel" | tr '/' '_'); [ "$name" = . ] && name=root
  if go test -c -trimpath -ldflags='-s -w' -o ".gpu/$name.test" "./$rel" 2>/tmp/bundle.err; then
    echo "$name $rel" >> .gpu/packages
  else
    echo "bundle: skipping $rel: $(head -3 /tmp/bundle.err)" >&2
  fi
done
for rel in ${RACE:-}; do # race-enabled binaries need cgo, which the GPU machine's newer glibc runs
  CGO_ENABLED=1 go test -c -race -trimpath -ldflags='-s -w' -o ".gpu/race-$(echo "$rel" | tr '/' '_').test" "./$rel"
done
go build -trimpath -ldflags='-s -w' -o .gpu/gocu ./cmd/gocu
cp -r bench/anchors .gpu/anchors
sed -n "/^cat > .gpu\/run.sh <<'RUN'/,/^RUN$/p" ../shared/tools/gpu-bundle | sed '1d;$d' > .gpu/run.sh
chmod +x .gpu/run.sh
gzip -1 .gpu/*.test .gpu/gocu
echo "built .gpu/: $(wc -l < .gpu/packages) test binaries, $(du -sm .gpu | cut -f1) MiB"
