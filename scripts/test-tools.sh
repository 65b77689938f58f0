#!/usr/bin/env bash
# The real runtimes the tests judge kata-install's files with: containerd of each minor the runtime
# layouts claim that Debian packages (1.6 bookworm, 1.7 trixie, 2.x sid), nydus-snapshotter (sid),
# erofs-utils (bookworm's, older than kata-deploy's options; trixie's and sid's) and CRI's api.proto (sid's golang-k8s-cri-api-dev). Fetched with apt
# through a private sources list and unpacked with dpkg -x into a cache folder the tests find:
# nothing is installed, nothing lands on the system's PATH, the system's own containerd is untouched.
#
#   scripts/test-tools.sh            fetch (or reuse) the cache, print the versions
#   scripts/test-tools.sh --dir      print the cache folder only
#
# The cache: $KATA_INSTALL_TEST_TOOLS, else ~/.cache/kata-install-test-tools (once per machine; a
# folder inside the clone is ignored by git as .test-tools/). It is fetched again when older than a
# week or when KATA_INSTALL_TEST_TOOLS_REFRESH=1; a run without network that has a cache uses it.
# Its index, tools.tsv, has one line per tool: name, minor, suite, package version, path, the
# tool's own version line. test/helpers/real-tools.ts reads it.
set -euo pipefail

cache="${KATA_INSTALL_TEST_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/kata-install-test-tools}"
if [ "${1:-}" = "--dir" ]; then
  echo "$cache"
  exit 0
fi

index="$cache/current/tools.tsv"
# What this script fetches: raised whenever the set of tools changes, so that a cache made by an
# earlier version of it (without bookworm's erofs-utils, say) is fetched again, not trusted.
layout=2
print_index() {
  echo "Real runtimes for the tests ($cache/current):"
  awk -F'\t' '{ printf "  %-18s %-5s %-9s %s\n", $1, $2, $3, $6 }' "$index"
}
fresh_enough() {
  [ -f "$index" ] || return 1
  [ "${KATA_INSTALL_TEST_TOOLS_REFRESH:-0}" = 1 ] && return 1
  [ -z "$(find "$index" -mtime +7)" ] || return 1
  [ "$(cat "$cache/current/layout" 2>/dev/null)" = "$layout" ] || return 1
  # Every path it names is still there.
  while IFS=$'\t' read -r _ _ _ _ path _; do [ -e "$path" ] || return 1; done <"$index"
}
if fresh_enough; then
  print_index
  exit 0
fi

arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || echo "$(uname -m)-linux-gnu")
mkdir -p "$cache"
work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT

# apt with its own sources list, lists and archive folder: the system's apt state is not touched.
apt_for() { # SUITE ARGS...
  local suite=$1
  shift
  apt-get -qq -o Dir::Etc::SourceList="$work/$suite.list" -o Dir::Etc::SourceParts=/dev/null \
    -o Dir::State::Lists="$work/$suite/lists" -o Dir::Cache::Archives="$work/$suite/archives" \
    -o Dir::Cache::pkgcache="" -o Dir::Cache::srcpkgcache="" -o APT::Sandbox::User=root \
    -o Debug::NoLocking=1 "$@"
}
apt_cache_for() { # SUITE ARGS...
  local suite=$1
  shift
  apt-cache -o Dir::Etc::SourceList="$work/$suite.list" -o Dir::Etc::SourceParts=/dev/null \
    -o Dir::State::Lists="$work/$suite/lists" -o Dir::Cache::pkgcache="" -o Dir::Cache::srcpkgcache="" "$@"
}
# Download PACKAGES... of SUITE and unpack them into $work/out/SUITE.
unpack() { # SUITE PACKAGES...
  local suite=$1
  shift
  mkdir -p "$work/$suite/debs" "$work/out/$suite"
  (cd "$work/$suite/debs" && apt_for "$suite" download "$@" >/dev/null)
  for deb in "$work/$suite/debs"/*.deb; do dpkg -x "$deb" "$work/out/$suite"; done
  rm -f "$work/$suite/debs"/*.deb
}
pkg_version() { apt_cache_for "$1" show --no-all-versions "$2" | awk '/^Version:/ { print $2; exit }'; }

fetch() {
  local suite
  for suite in bookworm trixie sid; do
    mkdir -p "$work/$suite/lists/partial" "$work/$suite/archives/partial"
    echo "deb http://deb.debian.org/debian $suite main" >"$work/$suite.list"
    apt_for "$suite" update || return 1
  done

  : >"$work/tools.tsv"
  local out="$cache/current" # where the paths will be once the folder is renamed in
  # containerd: its daemon and ctr, per minor.
  local minor
  for pair in 1.6:bookworm 1.7:trixie 2:sid; do
    minor=${pair%%:*}
    suite=${pair#*:}
    unpack "$suite" containerd || return 1
    mkdir -p "$work/out/containerd-$minor"
    mv "$work/out/$suite/usr/bin/containerd" "$work/out/$suite/usr/bin/ctr" "$work/out/containerd-$minor/"
    printf 'containerd\t%s\t%s\t%s\t%s\t%s\n' "$minor" "$suite" "$(pkg_version "$suite" containerd)" \
      "$out/containerd-$minor/containerd" "$("$work/out/containerd-$minor/containerd" --version)" >>"$work/tools.tsv"
  done
  # nydus-snapshotter: a static Go binary.
  unpack sid nydus-snapshotter || return 1
  mkdir -p "$work/out/nydus"
  mv "$work/out/sid/usr/bin/containerd-nydus-grpc" "$work/out/sid/usr/bin/nydus-overlayfs" "$work/out/nydus/"
  printf 'nydus-snapshotter\t%s\tsid\t%s\t%s\t%s\n' "$(pkg_version sid nydus-snapshotter | cut -d. -f1,2)" \
    "$(pkg_version sid nydus-snapshotter)" "$out/nydus/containerd-nydus-grpc" \
    "containerd-nydus-grpc $(pkg_version sid nydus-snapshotter)" >>"$work/tools.tsv"
  # erofs-utils: linked against its suite's libc, so it runs through that libc's own loader, with
  # every library it needs from the same suite (the whole dependency closure, unpacked beside it).
  for suite in bookworm trixie sid; do
    local closure
    closure=$(apt_cache_for "$suite" depends --recurse --no-recommends --no-suggests --no-conflicts \
      --no-breaks --no-replaces --no-enhances --no-pre-depends erofs-utils | grep '^[a-z0-9]' | sort -u)
    # shellcheck disable=SC2086 # a list of package names
    unpack "$suite" $closure || return 1
    local root="$out/erofs-$suite" lib
    mv "$work/out/$suite" "$work/out/erofs-$suite"
    lib="$root/usr/lib/$multiarch"
    # bookworm's libc6 keeps its loader in /lib, not yet merged into /usr/lib.
    local loader
    loader=$(ls "$work/out/erofs-$suite/usr/lib/$multiarch"/ld-linux*.so.* "$work/out/erofs-$suite/lib/$multiarch"/ld-linux*.so.* 2>/dev/null | head -1)
    loader=${loader#"$work/out/erofs-$suite"}
    cat >"$work/out/erofs-$suite/mkfs.erofs" <<EOF
#!/bin/sh
# mkfs.erofs of Debian $suite, run through its own libc's loader (scripts/test-tools.sh).
exec "$root$loader" --library-path "$lib:$root/lib/$multiarch" "$root/usr/bin/mkfs.erofs" "\$@"
EOF
    chmod +x "$work/out/erofs-$suite/mkfs.erofs"
    local version
    version=$(pkg_version "$suite" erofs-utils)
    printf 'erofs-utils\t%s\t%s\t%s\t%s\t%s\n' "$(echo "${version%%-*}" | cut -d. -f1,2)" "$suite" "$version" \
      "$out/erofs-$suite/mkfs.erofs" "mkfs.erofs (erofs-utils) ${version%%-*}" >>"$work/tools.tsv"
  done
  # CRI's own protocol definition, for the tests' small CRI client.
  unpack sid golang-k8s-cri-api-dev || return 1
  mkdir -p "$work/out/cri-api"
  mv "$work/out/sid/usr/share/gocode/src/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto" "$work/out/cri-api/"
  printf 'cri-api\t%s\tsid\t%s\t%s\t%s\n' "v1" "$(pkg_version sid golang-k8s-cri-api-dev)" \
    "$out/cri-api/api.proto" "k8s.io/cri-api $(pkg_version sid golang-k8s-cri-api-dev)" >>"$work/tools.tsv"
  rm -rf "$work/out/bookworm" "$work/out/trixie" "$work/out/sid"
  mv "$work/tools.tsv" "$work/out/tools.tsv"
  echo "$layout" >"$work/out/layout"
}

if fetch; then
  # The old cache goes only once the new one is whole.
  rm -rf "$cache/previous"
  [ -d "$cache/current" ] && mv "$cache/current" "$cache/previous"
  mv "$work/out" "$cache/current"
  rm -rf "$cache/previous"
  # The erofs wrappers were written for this path: check each tool runs where it now is.
  while IFS=$'\t' read -r name _ _ _ path _; do
    case "$name" in
    containerd | erofs-utils) "$path" --version >/dev/null || { echo "scripts/test-tools.sh: $path does not run" >&2; exit 1; } ;;
    esac
  done <"$index"
  print_index
elif [ -f "$index" ]; then
  echo "scripts/test-tools.sh: could not fetch from Debian's suites; using the cache of $(date -r "$index" +%F)" >&2
  print_index
else
  echo "scripts/test-tools.sh: could not fetch the real runtimes from Debian's suites (deb.debian.org), and there is no cache at $cache" >&2
  exit 1
fi
