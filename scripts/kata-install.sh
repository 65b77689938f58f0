#!/bin/sh
# kata-install's start (dist/kata-install: the package's bin, the image's entrypoint). Node starts
# from the start-up snapshot dist/kata-install.blob (scripts/build.mjs) when the Node here made it
# (its version, this machine's architecture) and NODE_OPTIONS is unset (V8 options other than the
# build's make Node refuse the blob, exit 14); else from the plain bundle dist/cli.js. Both take
# the same arguments and print the same; exec, so that signals go to Node itself.
self=$0
[ -L "$self" ] && self=$(readlink -f "$self")
dist=${self%/*}
# The machine's architecture read by the shell itself where the kernel says it (Linux 5.x and
# later): one process fewer to start than uname -m.
arch=
[ -r /proc/sys/kernel/arch ] && read -r arch </proc/sys/kernel/arch
[ -n "$arch" ] || arch=$(uname -m)
if [ -z "${NODE_OPTIONS:-}" ] && [ -r "$dist/kata-install.blob" ] && read -r made <"$dist/kata-install.node" &&
  [ "$made" = "$(node --version) $arch" ]; then
  exec node --snapshot-blob "$dist/kata-install.blob" "$dist/cli.js" "$@"
fi
exec node "$dist/cli.js" "$@"
