#!/usr/bin/env bash
# The Debian packages the tests need, in one place. `npm test` runs this first, scripts/image.sh
# runs it with `image`: when a command is missing, root with apt-get (as CI runs) installs its
# package; anyone else is stopped at once, before tsc and vitest, with the command to run.
#
#   scripts/test-deps.sh [tests|image]          check, and install what is missing (default: tests)
#   scripts/test-deps.sh --list [tests|image]   print "command package" for each tool
set -euo pipefail

list=false
if [ "${1:-}" = "--list" ]; then
  list=true
  shift
fi
group="${1:-tests}"
case "$group" in
tests) needs="the tests need" ;;
image) needs="the image build (scripts/image.sh) needs" ;;
*)
  echo "usage: $0 [--list] [tests|image]" >&2
  exit 2
  ;;
esac

missing=() # Debian packages to install
why=()     # one line each: the command, its package and what it is for
tool() {   # GROUP COMMAND PACKAGE WHAT-FOR
  [ "$1" = "$group" ] || return 0
  if $list; then
    echo "$2 $3"
  elif ! command -v "$2" >/dev/null 2>&1; then
    missing+=("$3")
    why+=("  $2 ($3): $4")
  fi
}

# What each tool is for, and the tests that use it (under test/). mknod and chroot come from
# coreutils and gzip is essential: every Debian has them.
tool tests unshare util-linux "runs the real containerd of each version (scripts/test-tools.sh) in a private mount namespace, the test host's directories bound where it reads them"
tool tests dpkg-deb dpkg "unpacks the real runtimes scripts/test-tools.sh fetches from Debian's suites"
tool tests patch patch "applies the plan's diffs as a user would (render/plan)"
tool tests mkfs.erofs erofs-utils "the real mkfs.erofs whose --help says which of kata-deploy's erofs differ options it takes (decide/snapshotter-setup)"
tool tests umoci umoci "builds the OCI layouts that artifacts are installed from (install/, commands/)"
tool tests skopeo skopeo "pushes those layouts to a test registry (install/registry, commands/install)"
tool tests docker-registry docker-registry "serves that registry on loopback (install/registry, commands/install)"
tool tests zstd zstd "compresses test release tarballs (install/split, artifacts/catalogue, commands/release, commands/artifacts)"
tool tests xz xz-utils "compresses a test release tarball (install/split)"
tool tests python3 python3 "binds the Unix sockets of test hosts' runtimes (most tests) and writes hostile tar files (install/oci-layout)"
tool tests ldd libc-bin "lists the libraries a binary needs for the chroot test (host/host)"
tool tests kubectl kubernetes-client "talks to the tests' small Kubernetes API server (kube/node-labels, commands/manifests)"
tool image buildah buildah "builds the image from the Dockerfile without a Docker engine"
tool image mmdebstrap mmdebstrap "makes the base images the Dockerfile is given (no image registry is reachable in CI)"
tool image qemu-aarch64-static qemu-user-static "runs arm64 binaries, to build and check the arm64 image on an amd64 machine"

if $list || [ ${#missing[@]} -eq 0 ]; then exit 0; fi

has_apt=false
command -v apt-get >/dev/null 2>&1 && has_apt=true
if [ "$(id -u)" = 0 ] && $has_apt; then
  echo "Installing the Debian packages $needs:"
  printf '%s\n' "${why[@]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  # A package that installed without the command (a renamed binary) would fail later, less clearly.
  still=()
  for line in "${why[@]}"; do
    read -r command _ <<<"$line"
    command -v "$command" >/dev/null 2>&1 || still+=("$command")
  done
  if [ ${#still[@]} -gt 0 ]; then
    echo "still missing after apt-get install: ${still[*]}" >&2
    exit 1
  fi
  exit 0
fi

{
  echo "Missing commands $needs:"
  printf '%s\n' "${why[@]}"
  if ! $has_apt; then
    echo "There is no apt-get here: install what these Debian packages provide: ${missing[*]}"
  else
    echo "Install them (Debian or Ubuntu), then try again:"
    echo "  sudo apt-get install -y ${missing[*]}"
  fi
} >&2
exit 1
