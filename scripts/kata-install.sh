#!/bin/sh
# kata-install's start (dist/kata-install: the package's bin, the image's entrypoint). Node starts
# from the start-up snapshot dist/kata-install.blob (scripts/build.mjs) for the commands that run
# the node-side pipeline, when the Node here made it (the very file the build ran, or else one of
# its version, on this machine's architecture) and NODE_OPTIONS is unset (V8 options other than the
# build's make Node refuse the blob, exit 14); else from the plain bundle dist/cli.js. Both take the
# same arguments and print the same; exec, so that signals go to Node itself.
self=$0
[ -L "$self" ] && self=$(readlink -f "$self")
dist=${self%/*}
# The blob pays for itself only where the pipeline runs: deserialising it costs a start more than
# Node's own snapshot (an empty one alone ~0.5x of `node -e 0`), which plan and install win back
# and --version, --help, facts, report, manifests and artifacts do not (bench/startup-snapshot.ts).
# The command is the first argument but --debug; `kata-install --dry-run …` is an install.
pipeline=false
for arg in "$@"; do
  [ "$arg" = --debug ] && continue
  case $arg in
  preflight | explain | shims | plan | install | uninstall | entrypoint) pipeline=true ;;
  -*)
    for each in "$@"; do [ "$each" = --dry-run ] && pipeline=true; done
    ;;
  esac
  break
done
[ "$pipeline" = true ] || exec node "$dist/cli.js" "$@"
# The machine's architecture read by the shell itself where the kernel says it (Linux 5.x and
# later): one process fewer to start than uname -m.
arch=
[ -r /proc/sys/kernel/arch ] && read -r arch </proc/sys/kernel/arch
[ -n "$arch" ] || arch=$(uname -m)
# The node PATH gives, found by the shell itself; the very file the blob was made by when it is the
# one the build recorded, with the mtime the build copied onto that record: then no process need
# be started to ask its version (a node upgraded in place has another mtime).
node_bin=
saved_ifs=$IFS
IFS=:
set -f # PATH's entries split, never globbed
for dir in $PATH; do
  if [ -f "${dir:-.}/node" ] && [ -x "${dir:-.}/node" ]; then
    node_bin=${dir:-.}/node
    break
  fi
done
set +f
IFS=$saved_ifs
node=${node_bin:-node}
record=$dist/kata-install.node-path
same=false
if [ -n "$node_bin" ] && [ -r "$record" ] && read -r made_by <"$record" && [ "$node_bin" -ef "$made_by" ] &&
  ! [ "$node_bin" -nt "$record" ] && ! [ "$node_bin" -ot "$record" ]; then
  same=true
fi
if [ -z "${NODE_OPTIONS:-}" ] && [ -r "$dist/kata-install.blob" ] && read -r made <"$dist/kata-install.node" &&
  { { [ "$same" = true ] && [ "${made#* }" = "$arch" ]; } || [ "$made" = "$("$node" --version) $arch" ]; }; then
  exec "$node" --snapshot-blob "$dist/kata-install.blob" "$dist/cli.js" "$@"
fi
exec "$node" "$dist/cli.js" "$@"
