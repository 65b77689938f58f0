#!/usr/bin/env bash
# Build the kata-deploy container image without a Docker engine, as CI does, then run kata-install
# inside it. Debian's buildah builds the Dockerfile (chroot isolation, vfs storage: no daemon, no
# overlay mounts, no user namespaces needed); the base image the Dockerfile names is made locally
# with mmdebstrap — Debian bookworm, this machine's Node.js in /usr/local as the official node
# image has it, and the unprivileged `node` user — since no image registry is reachable here.
#
#   scripts/image.sh [TAG]      (default localhost/kata-install:ci)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/test-deps.sh image # buildah and mmdebstrap: installed as root with apt-get, or the command to run
TAG="${1:-localhost/kata-install:ci}"
BASE="docker.io/library/node:20-bookworm-slim"
export STORAGE_DRIVER=vfs
started=$(date +%s)
elapsed() { echo "$(($(date +%s) - started)) s"; }

if ! buildah images --quiet "$BASE" >/dev/null 2>&1; then
  node_bin="$(readlink -f "$(command -v node)")"
  npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  echo "== base image $BASE: mmdebstrap bookworm + $("$node_bin" --version) ($(elapsed))"
  # Once more if the mirror hiccups: a flaky download must not fail CI.
  debstrap() { mmdebstrap --quiet --variant=minbase --include=ca-certificates,libstdc++6 \
    --customize-hook="copy-in $node_bin /usr/local/bin" \
    --customize-hook="mkdir -p \"\$1/usr/local/lib/node_modules\"" \
    --customize-hook="copy-in $npm_dir /usr/local/lib/node_modules" \
    --customize-hook='ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"' \
    --customize-hook='chroot "$1" useradd --uid 1000 --create-home --shell /bin/sh node' \
    bookworm "$work/base.tar"; }
  debstrap || { echo "mmdebstrap failed; once more"; rm -f "$work/base.tar"; debstrap; }
  ctr="$(buildah from scratch)"
  buildah add --quiet "$ctr" "$work/base.tar" / >/dev/null
  buildah config --env PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin --cmd node "$ctr"
  buildah commit --quiet "$ctr" "$BASE" >/dev/null
  buildah rm "$ctr" >/dev/null
  rm -rf "$work"
fi

# Where npm is told to trust a CA of its own (a TLS-inspecting proxy, as on these machines), the
# build's npm is given the same file; the image does not keep it.
build_args=()
cafile="$(npm config get cafile 2>/dev/null || true)"
if [ -n "$cafile" ] && [ "$cafile" != "null" ] && [ -f "$cafile" ]; then
  build_args+=(--volume "$cafile:/run/build-ca.crt:ro" --build-arg npm_config_cafile=/run/build-ca.crt)
elif [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  build_args+=(--volume "$NODE_EXTRA_CA_CERTS:/run/build-ca.crt:ro" --build-arg NODE_EXTRA_CA_CERTS=/run/build-ca.crt)
fi

echo "== build $TAG ($(elapsed))"
buildah bud --quiet --isolation chroot --layers=false "${build_args[@]}" -t "$TAG" . >/dev/null

echo "== run kata-install inside $TAG ($(elapsed))"
ctr="$(buildah from "$TAG")"
cleanup() { buildah rm "$ctr" >/dev/null 2>&1 || true; }
trap cleanup EXIT
run() { buildah run --isolation chroot "$ctr" -- "$@"; }
expect() { # COMMAND… -- TEXT: the command's output contains TEXT
  local args=() text
  while [ "$1" != "--" ]; do args+=("$1"); shift; done
  text="$2"
  local output
  output="$(run "${args[@]}" 2>&1)" || { echo "$output"; echo "failed in the image: ${args[*]}"; exit 1; }
  grep -qF -- "$text" <<<"$output" || { echo "$output"; echo "no \"$text\" from: ${args[*]}"; exit 1; }
  echo "  ok: ${args[*]}"
}
expect kata-install --version -- "$(node -p 'require("./package.json").version')"
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
echo "== image: $(buildah images --format '{{.Size}}' "$TAG"), done in $(elapsed)"
