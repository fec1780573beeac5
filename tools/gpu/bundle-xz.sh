#!/usr/bin/env bash
# Like tools/gpu/bundle.sh, compressed with xz so that more packages fit the
# 64 MiB a device call carries. Usage: tools/gpu/bundle-xz.sh [package dirs...]
# On the device: for f in .gpu/*.xz; do xz -d "$f"; done; chmod +x .gpu/*.test .gpu/gocu
set -euo pipefail
root=$(git rev-parse --show-toplevel); cd "$root"
shared=${SHARED:-$root/../shared}
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
for rel in ${RACE:-}; do
  CGO_ENABLED=1 go test -c -race -trimpath -ldflags='-s -w' -o ".gpu/race-$(echo "$rel" | tr '/' '_').test" "./$rel"
done
go build -trimpath -ldflags='-s -w' -o .gpu/gocu ./cmd/gocu
[ -d "$shared/anchors" ] && cp -r "$shared/anchors" .gpu/anchors
sed -n "/^cat > .gpu\/run.sh <<'RUN'/,/^RUN$/p" "$shared/tools/gpu-bundle" | sed '1d;$d' > .gpu/run.sh
chmod +x .gpu/run.sh
xz -T2 -6 .gpu/*.test .gpu/gocu
echo "built .gpu/: $(wc -l < .gpu/packages) test binaries, $(du -sm .gpu | cut -f1) MiB"
