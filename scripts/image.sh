#!/usr/bin/env bash
# Build the kata-deploy container image without a Docker engine, as CI does, for one or more
# platforms, then run kata-install inside each. Debian's buildah builds the Dockerfile (chroot
# isolation, vfs storage: no daemon, no overlay mounts, no user namespaces needed). No image
# registry is reachable here, so the bases are made locally with mmdebstrap:
#   - the build stage's (npm ci, esbuild: its output is the same JavaScript for every platform):
#     Debian bookworm with this machine's Node.js, for this machine's platform only;
#   - the image's own, per target platform: Debian trixie with Debian's nodejs of that
#     architecture — the image's Node never comes from the build machine.
# A foreign platform (linux/arm64 on amd64) runs under Debian's qemu-user-static through binfmt_misc
# (registered here as root when missing), its image checked by running kata-install in it.
#
#   scripts/image.sh [--platform linux/ARCH]... [TAG]     (default: this machine's platform,
#                                                         localhost/kata-install:ci)
# Several platforms: each image is TAG-ARCH, and TAG the index (manifest list) that joins them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/test-deps.sh image # buildah, mmdebstrap, qemu-user-static: installed as root, or the command to run
export STORAGE_DRIVER=vfs
started=$(date +%s)
elapsed() { echo "$(($(date +%s) - started)) s"; }

go_arch() { case "$1" in x86_64) echo amd64 ;; aarch64) echo arm64 ;; *) echo "$1" ;; esac; }
host_arch="$(go_arch "$(uname -m)")"
platforms=()
TAG=localhost/kata-install:ci
while [ $# -gt 0 ]; do
  case "$1" in
  --platform) platforms+=("${2:?--platform needs linux/ARCH}"); shift 2 ;;
  --platform=*) platforms+=("${1#--platform=}"); shift ;;
  -*) echo "usage: $0 [--platform linux/ARCH]... [TAG]" >&2; exit 2 ;;
  *) TAG="$1"; shift ;;
  esac
done
[ ${#platforms[@]} -gt 0 ] || platforms=("linux/$host_arch")
for p in "${platforms[@]}"; do
  case "$p" in linux/amd64 | linux/arm64) ;; *) echo "$p: expected linux/amd64 or linux/arm64" >&2; exit 2 ;; esac
done

# Once more if the mirror hiccups: a flaky download must not fail CI.
debstrap() { "$@" || { echo "mmdebstrap failed; once more"; "$@"; }; }

# The build stage's base: bookworm and this machine's Node.js and npm.
BUILD_BASE=localhost/kata-install-build:bookworm
if ! buildah images --quiet "$BUILD_BASE" >/dev/null 2>&1; then
  node_bin="$(readlink -f "$(command -v node)")"
  npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  echo "== build base $BUILD_BASE: mmdebstrap bookworm + $("$node_bin" --version) ($(elapsed))"
  rm -f "$work/base.tar"
  debstrap mmdebstrap --quiet --variant=minbase --include=ca-certificates,libstdc++6 \
    --customize-hook="copy-in $node_bin /usr/local/bin" \
    --customize-hook="mkdir -p \"\$1/usr/local/lib/node_modules\"" \
    --customize-hook="copy-in $npm_dir /usr/local/lib/node_modules" \
    --customize-hook='ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"' \
    --customize-hook='chroot "$1" useradd --uid 1000 --create-home --shell /bin/sh node' \
    bookworm "$work/base.tar"
  ctr="$(buildah from scratch)"
  buildah add --quiet "$ctr" "$work/base.tar" / >/dev/null
  buildah config --env PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin --cmd node "$ctr"
  buildah commit --quiet "$ctr" "$BUILD_BASE" >/dev/null
  buildah rm "$ctr" >/dev/null
  rm -rf "$work"
fi

# A foreign architecture's binaries run through qemu-user-static: its binfmt_misc entry (with the
# F flag, so that it works inside the build's chroot) registered from the package's own file.
binfmt() {
  local qemu
  case "$1" in arm64) qemu=aarch64 ;; amd64) qemu=x86_64 ;; esac
  [ -e "/proc/sys/fs/binfmt_misc/qemu-$qemu" ] && return 0
  [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  cat "/usr/lib/binfmt.d/qemu-$qemu.conf" >/proc/sys/fs/binfmt_misc/register
  echo "== binfmt_misc: $1 binaries run by qemu-$qemu-static"
}

# The image's base for ARCH: trixie and Debian's nodejs of that architecture.
runtime_base() {
  local arch="$1" base="localhost/kata-install-base:trixie-$1"
  if ! buildah images --quiet "$base" >/dev/null 2>&1; then
    local work
    work="$(mktemp -d)"
    echo "== base $base: mmdebstrap --arch=$arch trixie, Debian's nodejs ($(elapsed))" >&2
    debstrap mmdebstrap --quiet --arch="$arch" --variant=minbase --include=nodejs,ca-certificates \
      trixie "$work/base.tar" http://deb.debian.org/debian >&2
    local ctr
    ctr="$(buildah from scratch)"
    buildah add --quiet "$ctr" "$work/base.tar" / >/dev/null
    buildah config --arch "$arch" $([ "$arch" = arm64 ] && echo --variant v8) --os linux \
      --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd node "$ctr"
    buildah commit --quiet "$ctr" "$base" >/dev/null
    buildah rm "$ctr" >/dev/null
    rm -rf "$work"
  fi
  echo "$base"
}

# Where npm is told to trust a CA of its own (a TLS-inspecting proxy, as on these machines), the
# build's npm is given the same file; the image does not keep it.
build_args=()
cafile="$(npm config get cafile 2>/dev/null || true)"
if [ -n "$cafile" ] && [ "$cafile" != "null" ] && [ -f "$cafile" ]; then
  build_args+=(--volume "$cafile:/run/build-ca.crt:ro" --build-arg npm_config_cafile=/run/build-ca.crt)
elif [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  build_args+=(--volume "$NODE_EXTRA_CA_CERTS:/run/build-ca.crt:ro" --build-arg NODE_EXTRA_CA_CERTS=/run/build-ca.crt)
fi

version="$(node -p 'require("./package.json").version')"
built=()
for platform in "${platforms[@]}"; do
  arch="${platform#linux/}"
  [ "$arch" = "$host_arch" ] || binfmt "$arch"
  base="$(runtime_base "$arch")"
  image="$TAG"
  [ ${#platforms[@]} -eq 1 ] || image="$TAG-$arch"
  echo "== build $image for $platform ($(elapsed))"
  buildah bud --quiet --pull-never --isolation chroot --layers=false --platform "$platform" \
    --build-arg BUILDPLATFORM="linux/$host_arch" --build-arg BUILD_BASE="$BUILD_BASE" --build-arg BASE="$base" \
    "${build_args[@]}" -t "$image" . >/dev/null

  echo "== run kata-install inside $image ($(elapsed))"
  ctr="$(buildah from --pull-never "$image" 2>/dev/null)"
  run() { buildah run --isolation chroot "$ctr" -- "$@"; }
  expect() { # COMMAND… -- TEXT: the command's output contains TEXT
    local args=() text
    while [ "$1" != "--" ]; do args+=("$1"); shift; done
    text="$2"
    local output
    output="$(run "${args[@]}" 2>&1)" || { echo "$output"; echo "failed in the image: ${args[*]}"; exit 1; }
    grep -qF -- "$text" <<<"$output" || { echo "$output"; echo "no \"$text\" from: ${args[*]}"; exit 1; }
    echo "  ok ($arch): ${args[*]}"
  }
  expect uname -m -- "$([ "$arch" = arm64 ] && echo aarch64 || echo x86_64)"
  expect node -p process.arch -- "$([ "$arch" = arm64 ] && echo arm64 || echo x64)"
  expect kata-install --version -- "$version"
  expect kata-install --help -- "Usage: kata-install [options] [command]"
  expect /opt/kata-install/dist/cli.js entrypoint --help -- "Usage: kata-install entrypoint"
  # The templates, rules and catalogue are found beside the bundle: a whole plan runs in the image.
  expect kata-install facts --json --host-root / -- '"schemaVersion": 1'
  expect sh -c 'kata-install facts --json --host-root / > /tmp/node.json &&
    kata-install shims --facts /tmp/node.json' -- "ON THIS NODE"
  root="$(buildah mount "$ctr")"
  test ! -e "$root/opt/kata-install/node_modules" || { echo "node_modules in the image"; exit 1; }
  test -f "$root/opt/kata-install/rules/shims.toml" || { echo "rules missing from the image"; exit 1; }
  # The DaemonSet mounts /usr and /lib but not /lib64: host commands find the loader through this link.
  test "$(readlink "$root/host/lib64")" = usr/lib64 || { echo "no /host/lib64 -> usr/lib64 in the image"; exit 1; }
  buildah umount "$ctr" >/dev/null
  buildah rm "$ctr" >/dev/null
  test "$(buildah inspect --format '{{.OCIv1.Architecture}}' "$image")" = "$arch" ||
    { echo "$image is not an $arch image"; exit 1; }
  echo "== image $image ($arch): $(buildah images --format '{{.Size}}' "$image")"
  built+=("$image")
done

if [ ${#built[@]} -gt 1 ]; then
  # One name for every platform, as a registry serves it: an index of the images.
  buildah manifest rm "$TAG" >/dev/null 2>&1 || buildah rmi "$TAG" >/dev/null 2>&1 || true
  buildah manifest create "$TAG" >/dev/null
  for image in "${built[@]}"; do buildah manifest add "$TAG" "containers-storage:$image" >/dev/null; done
  echo "== index $TAG: $(buildah manifest inspect "$TAG" | node -e '
    const m = JSON.parse(require("fs").readFileSync(0, "utf8"));
    console.log(m.manifests.map((d) => `${d.platform.os}/${d.platform.architecture}`).join(", "))')"
fi
echo "== done in $(elapsed)"
