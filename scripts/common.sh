# Shared by setup.sh, test.sh, perf.sh: where dependencies are cached and what
# options each backend builds Kokkos with. Source it; it defines no side effects.

LLMK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LLMK_CACHE=${LLMK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/llmk}
LLMK_KOKKOS_VERSION=3.4.01
LLMK_TRILINOS_VERSION=13.2.0
LLMK_JOBS=${LLMK_JOBS:-$(nproc)}

llmk_log() { printf '[llmk %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
llmk_die() { printf '[llmk] error: %s\n' "$*" >&2; exit 1; }

# Kokkos configuration per backend (the host backend OpenMP is in every build).
llmk_kokkos_options() {
  local backend=$1
  local common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=OFF
                -DCMAKE_POSITION_INDEPENDENT_CODE=ON
                -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON)
  case $backend in
    openmp) printf '%s\n' "${common[@]}" ;;
    cuda)   printf '%s\n' "${common[@]}" -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON \
              -DKokkos_ARCH_HOPPER90=ON -DKokkos_ENABLE_CUDA_CONSTEXPR=ON ;;
    *) llmk_die "unknown backend '$backend' (expected openmp or cuda)" ;;
  esac
}

# KokkosKernels: the BLAS component only, float only, the backend's BLAS TPL.
llmk_kokkoskernels_options() {
  local backend=$1
  local common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=OFF
                -DKokkosKernels_ENABLED_COMPONENTS=BLAS
                -DKokkosKernels_INST_FLOAT=ON -DKokkosKernels_INST_DOUBLE=OFF
                -DKokkosKernels_INST_COMPLEX_FLOAT=OFF -DKokkosKernels_INST_COMPLEX_DOUBLE=OFF
                -DKokkosKernels_INST_LAYOUTLEFT=OFF -DKokkosKernels_INST_LAYOUTRIGHT=ON
                -DKokkosKernels_INST_ORDINAL_INT=ON -DKokkosKernels_INST_OFFSET_INT=ON
                -DKokkosKernels_INST_OFFSET_SIZE_T=OFF
                -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF
                -DKokkosKernels_ENABLE_TPL_LAPACK=OFF)
  case $backend in
    # OpenBLAS as the host BLAS TPL. The Fortran name mangling is given, so that
    # configuring needs no Fortran compiler (OpenBLAS exports sgemm_).
    openmp) printf '%s\n' "${common[@]}" -DKokkosKernels_ENABLE_TPL_BLAS=ON -DBLAS_LIBRARIES=openblas \
              "-DF77_BLAS_MANGLE=(name,NAME) name ## _" \
              -DKokkosKernels_INST_EXECSPACE_SERIAL=OFF -DKokkosKernels_INST_EXECSPACE_OPENMP=ON ;;
    cuda)   printf '%s\n' "${common[@]}" -DKokkosKernels_ENABLE_TPL_CUBLAS=ON -DKokkosKernels_ENABLE_TPL_BLAS=OFF \
              -DKokkosKernels_INST_EXECSPACE_SERIAL=OFF -DKokkosKernels_INST_EXECSPACE_OPENMP=OFF \
              -DKokkosKernels_INST_EXECSPACE_CUDA=ON -DKokkosKernels_INST_MEMSPACE_CUDASPACE=ON \
              -DKokkosKernels_INST_MEMSPACE_CUDAUVMSPACE=OFF ;;
  esac
}

# The cache prefix for a backend: its name carries a hash of everything that
# changes the build (options, patches, compilers), so a change rebuilds.
llmk_deps_prefix() {
  local backend=$1 key
  key=$( {
    echo "trilinos $LLMK_TRILINOS_VERSION"
    llmk_kokkos_options "$backend"
    llmk_kokkoskernels_options "$backend"
    cat "$LLMK_ROOT"/scripts/patches/*/series 2>/dev/null
    cat "$LLMK_ROOT"/scripts/patches/*/*.patch 2>/dev/null
    c++ --version | head -n1
    [ "$backend" = cuda ] && nvcc --version | tail -n1
  } | sha256sum | cut -c1-12)
  echo "$LLMK_CACHE/kokkos-$LLMK_KOKKOS_VERSION-$backend-$key"
}

# Parse --backend from a script's arguments: sets BACKEND and leaves the rest in REST_ARGS.
llmk_parse_backend() {
  BACKEND=openmp
  REST_ARGS=()
  while [ $# -gt 0 ]; do
    case $1 in
      --backend) BACKEND=$2; shift 2 ;;
      --backend=*) BACKEND=${1#*=}; shift ;;
      *) REST_ARGS+=("$1"); shift ;;
    esac
  done
  case $BACKEND in openmp|cuda) ;; *) llmk_die "--backend must be openmp or cuda, got '$BACKEND'" ;; esac
}

# Set up the dependencies, then configure and build llmk for a backend in
# build/<backend>. Extra arguments are build targets (default: all).
# Sets LLMK_BUILD_DIR.
llmk_setup_and_build() {
  local backend=$1; shift
  local prefix
  prefix=$("$LLMK_ROOT/scripts/setup.sh" --backend "$backend" | tail -n 1)
  LLMK_BUILD_DIR="$LLMK_ROOT/build/$backend"
  local args=(-S "$LLMK_ROOT" -B "$LLMK_BUILD_DIR" -G Ninja "-DCMAKE_PREFIX_PATH=$prefix")
  if [ "$backend" = cuda ]; then
    # nvcc_wrapper lives in the Kokkos prefix (the first entry when Kokkos_ROOT is given).
    args+=("-DCMAKE_CXX_COMPILER=${prefix%%;*}/bin/nvcc_wrapper")
  else
    args+=(-DLLMK_NATIVE=ON)
  fi
  local t0=$SECONDS
  llmk_log "configure + build llmk ($backend) in $LLMK_BUILD_DIR ..."
  cmake "${args[@]}" > "$LLMK_CACHE/configure-$backend.log" 2>&1 ||
    { tail -n 30 "$LLMK_CACHE/configure-$backend.log" >&2; llmk_die "configuring llmk failed; log: $LLMK_CACHE/configure-$backend.log"; }
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$LLMK_BUILD_DIR" -j "$LLMK_JOBS" "${targets[@]}" ||
    llmk_die "building llmk failed"
  llmk_log "built in $((SECONDS - t0)) s"
}
