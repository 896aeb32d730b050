#!/usr/bin/env bash
# Install what llmk needs: Debian packages, then Kokkos and KokkosKernels 3.4.01
# built from Debian's trilinos source package into a cache prefix outside the
# clone (reused when present). Idempotent.
#
# usage: scripts/setup.sh [--backend openmp|cuda]
#   Prints the dependency prefix (for -DCMAKE_PREFIX_PATH) as its last line.
#   A user who already has Kokkos sets Kokkos_ROOT (and KokkosKernels_ROOT);
#   then only the Debian packages are checked and nothing is built.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

backend=openmp
while [ $# -gt 0 ]; do
  case $1 in
    --backend) backend=$2; shift 2 ;;
    --backend=*) backend=${1#*=}; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) llmk_die "setup.sh: unknown argument '$1'" ;;
  esac
done
case $backend in openmp|cuda) ;; *) llmk_die "--backend must be openmp or cuda, got '$backend'" ;; esac

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
packages=(cmake ninja-build g++ libgtest-dev libopenblas-dev libcli11-dev nlohmann-json3-dev)
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
  llmk_log "Kokkos_ROOT=$Kokkos_ROOT given: not building Kokkos"
  echo "$Kokkos_ROOT${KokkosKernels_ROOT:+;$KokkosKernels_ROOT}"
  exit 0
fi

prefix=$(llmk_deps_prefix "$backend")
# One build per backend at a time: a second caller waits, then reuses the result.
mkdir -p "$LLMK_CACHE"
exec 9> "$LLMK_CACHE/setup-$backend.lock"
flock 9
if [ -f "$prefix/.complete" ]; then
  llmk_log "reusing $prefix"
  echo "$prefix"
  exit 0
fi

work="$LLMK_CACHE/work/$(basename "$prefix")"
src="$LLMK_CACHE/src/trilinos-$LLMK_TRILINOS_VERSION"
mkdir -p "$work" "$LLMK_CACHE/src"
t_all=$SECONDS

if [ ! -f "$src/.complete" ]; then
  step "fetch trilinos $LLMK_TRILINOS_VERSION source (apt-get source)" "$work/fetch.log" \
    "$LLMK_ROOT/scripts/fetch-trilinos-source.sh" "$LLMK_CACHE/apt" "$src"
  touch "$src/.complete"
fi

# A pristine copy per build, with the project's patch series applied to it.
apply_patches() {
  local pkg=$1 dir=$2 series="$LLMK_ROOT/scripts/patches/$1/series" p
  [ -f "$series" ] || return 0
  while read -r p; do
    case $p in ''|'#'*) continue ;; esac
    echo "applying $pkg/$p"
    patch -d "$dir" -p1 --forward --batch < "$LLMK_ROOT/scripts/patches/$pkg/$p"
  done < "$series"
}
prepare_source() {
  rm -rf "$work/src" && mkdir -p "$work/src"
  cp -a "$src/packages/kokkos" "$src/packages/kokkos-kernels" "$work/src/"
  apply_patches kokkos "$work/src/kokkos"
  apply_patches kokkos-kernels "$work/src/kokkos-kernels"
}
step "copy and patch sources" "$work/patch.log" prepare_source

mapfile -t kokkos_opts < <(llmk_kokkos_options "$backend")
mapfile -t kk_opts < <(llmk_kokkoskernels_options "$backend")
compiler=()
if [ "$backend" = cuda ]; then
  # Kokkos 3.x compiles CUDA through its nvcc_wrapper, which then acts as the C++ compiler.
  compiler=(-DCMAKE_CXX_COMPILER="$work/src/kokkos/bin/nvcc_wrapper")
fi

step "configure Kokkos" "$work/kokkos-configure.log" \
  cmake -S "$work/src/kokkos" -B "$work/build-kokkos" -G Ninja "${compiler[@]}" \
    -DCMAKE_INSTALL_PREFIX="$prefix" "${kokkos_opts[@]}"
step "build + install Kokkos ($LLMK_JOBS jobs)" "$work/kokkos-build.log" \
  cmake --build "$work/build-kokkos" --target install -j "$LLMK_JOBS"

step "configure KokkosKernels" "$work/kokkoskernels-configure.log" \
  cmake -S "$work/src/kokkos-kernels" -B "$work/build-kokkoskernels" -G Ninja "${compiler[@]}" \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ROOT="$prefix" "${kk_opts[@]}"
step "build + install KokkosKernels ($LLMK_JOBS jobs)" "$work/kokkoskernels-build.log" \
  cmake --build "$work/build-kokkoskernels" --target install -j "$LLMK_JOBS"

# The wrapper is needed by whoever builds against a CUDA Kokkos; keep the patched one.
if [ "$backend" = cuda ]; then
  install -m 755 "$work/src/kokkos/bin/nvcc_wrapper" "$prefix/bin/nvcc_wrapper"
fi
touch "$prefix/.complete"
rm -rf "$work"
llmk_log "dependencies for '$backend' installed in $prefix ($((SECONDS - t_all)) s)"
echo "$prefix"
