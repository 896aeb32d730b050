#!/usr/bin/env bash
# Install what llmk needs: Debian packages, then Kokkos and KokkosKernels built
# into a cache prefix outside the clone (reused when present). Idempotent.
#
# usage: scripts/setup.sh [--backend openmp|cuda] [--kokkos 3.4.01|4.6.01]
#   Prints the dependency prefix (for -DCMAKE_PREFIX_PATH) as its last line.
#   --kokkos 3.4.01 (default): built from Debian's trilinos 13.2.0 source package.
#   --kokkos 4.6.01: built from the source archives LLMK_KOKKOS_ARCHIVE and
#     LLMK_KOKKOSKERNELS_ARCHIVE (default <repo>/../shared/deps/kokkos-4.6.01.tar.gz
#     and kokkos-kernels-4.6.01.tar.gz); see docs/kokkos-versions.md.
#   A user who already has Kokkos sets Kokkos_ROOT (and KokkosKernels_ROOT);
#   then only the Debian packages are checked and nothing is built.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

backend=openmp
version=$LLMK_KOKKOS_DEFAULT
while [ $# -gt 0 ]; do
  case $1 in
    --backend) backend=$2; shift 2 ;;
    --backend=*) backend=${1#*=}; shift ;;
    --kokkos) version=$2; shift 2 ;;
    --kokkos=*) version=${1#*=}; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) llmk_die "setup.sh: unknown argument '$1'" ;;
  esac
done
case $backend in openmp|cuda) ;; *) llmk_die "--backend must be openmp or cuda, got '$backend'" ;; esac
llmk_check_kokkos_version "$version"

# Run one step, timing it, its output in a log; a failure names the step and the log.
step() {
  local name=$1 log=$2; shift 2
  local t0=$SECONDS
  llmk_log "$name ..."
  if ! "$@" > "$log" 2>&1; then
    tail -n 30 "$log" >&2
    llmk_die "step '$name' failed; full log: $log"
  fi
  llmk_log "$name done in $((SECONDS - t0)) s"
}

# --- 1. Debian packages ------------------------------------------------------
# (python3-matplotlib: perf/plot.py's plots, for Debian's /usr/bin/python3)
# (libdnnl-dev: oneDNN 2.6 on OpenMP, matmul's "onednn" on host spaces)
packages=(cmake ninja-build g++ libgtest-dev libopenblas-openmp-dev libdnnl-dev libcli11-dev
          nlohmann-json3-dev libopenmpi-dev openmpi-bin python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] && sudo= || sudo=sudo
  mkdir -p "$LLMK_CACHE"
  step "apt-get update" "$LLMK_CACHE/apt-update.log" $sudo apt-get update -q
  step "apt-get install ${missing[*]}" "$LLMK_CACHE/apt-install.log" \
    env DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if [ "$backend" = cuda ]; then
  command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
    llmk_die "--backend cuda needs the CUDA toolkit (nvcc not found on PATH or in /usr/local/cuda/bin)"
  export PATH=$PATH:/usr/local/cuda/bin
fi

# --- 2. Kokkos + KokkosKernels -------------------------------------------------
if [ -n "${Kokkos_ROOT:-}" ]; then
  llmk_log "Kokkos_ROOT=$Kokkos_ROOT given: not building Kokkos (--kokkos is not used)"
  echo "$Kokkos_ROOT${KokkosKernels_ROOT:+;$KokkosKernels_ROOT}"
  exit 0
fi

prefix=$(llmk_deps_prefix "$backend" "$version")
# One build per backend and version at a time: a second caller waits, then
# reuses the result. (3.4.01 keeps the lock name it had before versions existed.)
mkdir -p "$LLMK_CACHE"
lock="$LLMK_CACHE/setup-$backend.lock"
[ "$version" = 3.4.01 ] || lock="$LLMK_CACHE/setup-$backend-kokkos$version.lock"
exec 9> "$lock"
flock 9
if [ -f "$prefix/.complete" ]; then
  llmk_log "reusing $prefix"
  echo "$prefix"
  exit 0
fi

work="$LLMK_CACHE/work/$(basename "$prefix")"
mkdir -p "$work" "$LLMK_CACHE/src"
t_all=$SECONDS

# The version a source tree declares in its CMakeLists.txt (set(<Pkg>_VERSION_MAJOR 4) ...).
source_version() {
  local dir=$1 pkg=$2 part out=()
  for part in MAJOR MINOR PATCH; do
    out+=("$(grep -i -m1 -E "^[[:space:]]*set\([[:space:]]*${pkg}_VERSION_${part}[[:space:]]" "$dir/CMakeLists.txt" |
             sed -E 's/.*_VERSION_[A-Z]+[[:space:]]+"?([0-9]+).*/\1/')")
  done
  echo "$((10#${out[0]:-0})).$((10#${out[1]:-0})).$((10#${out[2]:-0}))"
}
numeric_version() { local IFS=.; set -- $1; echo "$((10#$1)).$((10#$2)).$((10#$3))"; }

# Unpack a user-given source archive (or copy a source folder) to <dest>,
# checking its sha256 where the archive is a known one and the version it declares.
# A pinned LLMK_KOKKOS_SHA256 / LLMK_KOKKOSKERNELS_SHA256 must match exactly.
# (These functions run under `step`, i.e. in an `if` where bash ignores set -e:
# every failure returns explicitly.)
unpack_source() {
  local pkg=$1 archive=$2 dest=$3 cmake_pkg=$4 pin_var=$5 sum known found tmp
  rm -rf "$dest"
  if [ -d "$archive" ]; then
    echo "$pkg: copying the source folder $archive"
    cp -a "$archive" "$dest" || return 1
  else
    sum=$(sha256sum "$archive" | cut -d' ' -f1)
    known=$(llmk_known_sha256 "$(basename "$archive")")
    echo "$pkg: $archive sha256 $sum"
    if [ -n "${!pin_var:-}" ]; then
      [ "$sum" = "${!pin_var}" ] || { echo "error: $pin_var=${!pin_var} does not match" >&2; return 1; }
      echo "$pkg: matches $pin_var"
    elif [ -n "$known" ] && [ "$sum" = "$known" ]; then
      echo "$pkg: matches the known $(basename "$archive") (git archive of the release tag)"
    elif [ -n "$known" ]; then
      echo "warning: $pkg: $(basename "$archive") differs from the known archive of that name" \
           "(sha256 $known); using it (set $pin_var to pin a hash)" >&2
    else
      echo "$pkg: not a known archive name; set $pin_var to pin its hash"
    fi
    tmp="$dest.unpack"
    rm -rf "$tmp" && mkdir -p "$tmp" || return 1
    tar -xf "$archive" -C "$tmp" || { echo "error: cannot unpack $archive" >&2; return 1; }
    # One top folder (kokkos-4.6.01/): that is the source; else the archive's root is.
    found=$(find "$tmp" -mindepth 1 -maxdepth 1)
    if [ "$(printf '%s\n' "$found" | wc -l)" = 1 ] && [ -d "$found" ]; then
      mv "$found" "$dest" && rm -rf "$tmp" || return 1
    else
      mv "$tmp" "$dest" || return 1
    fi
  fi
  [ -f "$dest/CMakeLists.txt" ] || { echo "error: $archive holds no CMakeLists.txt at its top" >&2; return 1; }
  found=$(source_version "$dest" "$cmake_pkg")
  echo "$pkg: source declares version $found"
  [ "$found" = "$(numeric_version "$version")" ] ||
    { echo "error: $archive is $pkg $found, not $version" >&2; return 1; }
}

if [ "$version" = 3.4.01 ]; then
  src="$LLMK_CACHE/src/trilinos-$LLMK_TRILINOS_VERSION"
  if [ ! -f "$src/.complete" ]; then
    step "fetch trilinos $LLMK_TRILINOS_VERSION source (apt-get source)" "$work/fetch.log" \
      "$LLMK_ROOT/scripts/fetch-trilinos-source.sh" "$LLMK_CACHE/apt" "$src"
    touch "$src/.complete"
  fi
else
  kokkos_archive=$(llmk_archive kokkos "$version" 2> "$work/archive.err")
  [ -n "$kokkos_archive" ] || llmk_die "$(cat "$work/archive.err")"
  kk_archive=$(llmk_archive kokkos-kernels "$version" 2> "$work/archive.err")
  [ -n "$kk_archive" ] || llmk_die "$(cat "$work/archive.err")"
  llmk_log "Kokkos $version from $kokkos_archive"
  llmk_log "KokkosKernels $version from $kk_archive"
fi

# A pristine copy per build, with the project's patch series for this version applied to it.
apply_patches() {
  local pkg=$1 dir=$2 pdir="$LLMK_ROOT/scripts/patches/$1-$version" p
  [ -f "$pdir/series" ] || return 0
  while read -r p; do
    case $p in ''|'#'*) continue ;; esac
    echo "applying $pkg-$version/$p"
    patch -d "$dir" -p1 --forward --batch < "$pdir/$p" ||
      { echo "error: $pkg-$version/$p does not apply" >&2; return 1; }
  done < "$pdir/series"
}
prepare_source() {
  rm -rf "$work/src" && mkdir -p "$work/src" || return 1
  if [ "$version" = 3.4.01 ]; then
    cp -a "$src/packages/kokkos" "$src/packages/kokkos-kernels" "$work/src/" || return 1
  else
    unpack_source kokkos "$kokkos_archive" "$work/src/kokkos" Kokkos LLMK_KOKKOS_SHA256 || return 1
    unpack_source kokkos-kernels "$kk_archive" "$work/src/kokkos-kernels" KokkosKernels \
      LLMK_KOKKOSKERNELS_SHA256 || return 1
  fi
  apply_patches kokkos "$work/src/kokkos" || return 1
  apply_patches kokkos-kernels "$work/src/kokkos-kernels" || return 1
}
step "unpack, copy and patch sources" "$work/patch.log" prepare_source
grep -E '^(kokkos|kokkos-kernels): |^warning' "$work/patch.log" >&2 || true

mapfile -t kokkos_opts < <(llmk_kokkos_options "$backend" "$version")
mapfile -t kk_opts < <(llmk_kokkoskernels_options "$backend" "$version")
compiler=()
if [ "$backend" = cuda ]; then
  # Kokkos compiles CUDA through its nvcc_wrapper, which then acts as the C++ compiler.
  compiler=(-DCMAKE_CXX_COMPILER="$work/src/kokkos/bin/nvcc_wrapper")
fi

step "configure Kokkos $version" "$work/kokkos-configure.log" \
  cmake -S "$work/src/kokkos" -B "$work/build-kokkos" -G Ninja "${compiler[@]}" \
    -DCMAKE_INSTALL_PREFIX="$prefix" "${kokkos_opts[@]}"
step "build + install Kokkos $version ($LLMK_JOBS jobs)" "$work/kokkos-build.log" \
  cmake --build "$work/build-kokkos" --target install -j "$LLMK_JOBS"

step "configure KokkosKernels $version" "$work/kokkoskernels-configure.log" \
  cmake -S "$work/src/kokkos-kernels" -B "$work/build-kokkoskernels" -G Ninja "${compiler[@]}" \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ROOT="$prefix" "${kk_opts[@]}"
step "build + install KokkosKernels $version ($LLMK_JOBS jobs)" "$work/kokkoskernels-build.log" \
  cmake --build "$work/build-kokkoskernels" --target install -j "$LLMK_JOBS"

# The wrapper is needed by whoever builds against a CUDA Kokkos; keep the patched one.
if [ "$backend" = cuda ]; then
  install -m 755 "$work/src/kokkos/bin/nvcc_wrapper" "$prefix/bin/nvcc_wrapper"
fi
# What went into the prefix, for whoever wonders later.
grep -E '^(kokkos|kokkos-kernels): |^applying' "$work/patch.log" > "$prefix/llmk-build-info.txt" || true
printf 'built %s in %d s with %s jobs\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$((SECONDS - t_all))" "$LLMK_JOBS" \
  >> "$prefix/llmk-build-info.txt"
touch "$prefix/.complete"
rm -rf "$work"
llmk_log "dependencies for '$backend' (Kokkos $version) installed in $prefix ($((SECONDS - t_all)) s)"
echo "$prefix"
