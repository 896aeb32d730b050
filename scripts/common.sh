# Shared by setup.sh, test.sh, perf.sh, gpu-bundle.sh and .ci/run: where
# dependencies are cached, which Kokkos versions exist and what options each
# backend builds them with. Source it; it defines no side effects.

LLMK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LLMK_CACHE=${LLMK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/llmk}
LLMK_KOKKOS_VERSIONS=(3.4.01 4.6.01)  # what `--kokkos` accepts
LLMK_KOKKOS_DEFAULT=3.4.01
LLMK_TRILINOS_VERSION=13.2.0          # 3.4.01 comes from Debian's trilinos source package
LLMK_JOBS=${LLMK_JOBS:-$(nproc)}

llmk_log() { printf '[llmk %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
llmk_die() { printf '[llmk] error: %s\n' "$*" >&2; exit 1; }

llmk_check_kokkos_version() {
  local v
  for v in "${LLMK_KOKKOS_VERSIONS[@]}"; do [ "$1" = "$v" ] && return 0; done
  llmk_die "--kokkos must be one of ${LLMK_KOKKOS_VERSIONS[*]}, got '$1'"
}
llmk_kokkos_major() { echo "${1%%.*}"; }

# --- source archives (Kokkos >= 4) -----------------------------------------------
# Kokkos 4.x is built from source archives the user provides (no registry here
# carries it): LLMK_KOKKOS_ARCHIVE and LLMK_KOKKOSKERNELS_ARCHIVE, each a tar
# archive (or an unpacked source folder), default <repo>/../shared/deps/<pkg>-<ver>.tar.gz.

# The sha256 of the archives known to the project (a `git archive` of the release
# tag; see /work/shared/deps/README.md). Prints nothing for an unknown one.
llmk_known_sha256() {
  case $1 in
    kokkos-4.6.01.tar.gz) echo b9d70e4653b87a06dbb48d63291bf248058c7c7db4bd91979676ad5609bb1a3a ;;
    kokkos-kernels-4.6.01.tar.gz) echo 95b9357f37ab3b9c3913c00741acb2501831c28ea8664de67818ae79c69c5908 ;;
  esac
}

# llmk_archive <kokkos|kokkos-kernels> <version>: the archive's path, or nothing
# (with the reason on stderr) when there is none.
llmk_archive() {
  local pkg=$1 version=$2 var path
  case $pkg in
    kokkos) var=LLMK_KOKKOS_ARCHIVE ;;
    kokkos-kernels) var=LLMK_KOKKOSKERNELS_ARCHIVE ;;
  esac
  if [ -n "${!var:-}" ]; then
    path=${!var}
    [ -e "$path" ] || { echo "$var=$path does not exist" >&2; return 0; }
  else
    path="$(dirname "$LLMK_ROOT")/shared/deps/$pkg-$version.tar.gz"
    [ -e "$path" ] || { echo "no $pkg $version source: set $var (default $path, absent)" >&2; return 0; }
  fi
  (cd "$(dirname "$path")" && echo "$(pwd)/$(basename "$path")")
}

# --- build options -------------------------------------------------------------------
# Kokkos configuration per backend and version (the host backend OpenMP is in every build).
llmk_kokkos_options() {
  local backend=$1 version=${2:-$LLMK_KOKKOS_DEFAULT}
  local common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=OFF
                -DCMAKE_POSITION_INDEPENDENT_CODE=ON
                -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON)
  # Kokkos 4.x: the same options (Kokkos_ARCH_HOPPER90 is Kokkos' own there;
  # Kokkos_ENABLE_CUDA_LAMBDA is deprecated and always on, kept for symmetry;
  # Kokkos_ENABLE_DEPRECATED_CODE_4 keeps its default, ON).
  case $backend in
    openmp) printf '%s\n' "${common[@]}" ;;
    cuda)   printf '%s\n' "${common[@]}" -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON \
              -DKokkos_ARCH_HOPPER90=ON -DKokkos_ENABLE_CUDA_CONSTEXPR=ON ;;
    *) llmk_die "unknown backend '$backend' (expected openmp or cuda)" ;;
  esac
}

# Where Debian's OpenMP build of OpenBLAS (libopenblas-openmp-dev) lives.
llmk_openblas_openmp_dir() {
  echo "/usr/lib/$(gcc -print-multiarch 2> /dev/null || echo x86_64-linux-gnu)/openblas-openmp"
}

# KokkosKernels: the BLAS component only, float only, the backend's BLAS TPL.
llmk_kokkoskernels_options() {
  local backend=$1 version=${2:-$LLMK_KOKKOS_DEFAULT}
  local components=(-DKokkosKernels_ENABLED_COMPONENTS=BLAS)
  if [ "$(llmk_kokkos_major "$version")" -ge 4 ]; then
    # 4.x spelling; it accepts the 3.x one silently and then builds all components.
    components=(-DKokkosKernels_ENABLE_ALL_COMPONENTS=OFF -DKokkosKernels_ENABLE_COMPONENT_BLAS=ON)
  fi
  local common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=OFF
                "${components[@]}"
                -DKokkosKernels_INST_FLOAT=ON -DKokkosKernels_INST_DOUBLE=OFF
                -DKokkosKernels_INST_COMPLEX_FLOAT=OFF -DKokkosKernels_INST_COMPLEX_DOUBLE=OFF
                -DKokkosKernels_INST_LAYOUTLEFT=OFF -DKokkosKernels_INST_LAYOUTRIGHT=ON
                -DKokkosKernels_INST_ORDINAL_INT=ON -DKokkosKernels_INST_OFFSET_INT=ON
                -DKokkosKernels_INST_OFFSET_SIZE_T=OFF
                -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF
                -DKokkosKernels_ENABLE_TPL_LAPACK=OFF)
  local cuda_tpls=()
  if [ "$(llmk_kokkos_major "$version")" -ge 4 ]; then
    # 4.x turns cuSPARSE and cuSOLVER on by default in a CUDA build; BLAS needs neither.
    cuda_tpls=(-DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF -DKokkosKernels_ENABLE_TPL_CUSOLVER=OFF)
  fi
  case $backend in
    # OpenBLAS as the host BLAS TPL: Debian's OpenMP build of it, by its own
    # folder (not the libopenblas.so that update-alternatives picks, pthreads by
    # default), so that its threads are the OpenMP runtime's that Kokkos uses:
    # one pool (docs/cpu.md; llmk/host_blas.hpp reports which one a process
    # runs). The Fortran name mangling is given, so that configuring needs no
    # Fortran compiler (OpenBLAS exports sgemm_).
    openmp) printf '%s\n' "${common[@]}" -DKokkosKernels_ENABLE_TPL_BLAS=ON -DBLAS_LIBRARIES=openblas \
              "-DBLAS_LIBRARY_DIRS=$(llmk_openblas_openmp_dir)" \
              "-DF77_BLAS_MANGLE=(name,NAME) name ## _" \
              -DKokkosKernels_INST_EXECSPACE_SERIAL=OFF -DKokkosKernels_INST_EXECSPACE_OPENMP=ON ;;
    cuda)   printf '%s\n' "${common[@]}" -DKokkosKernels_ENABLE_TPL_CUBLAS=ON -DKokkosKernels_ENABLE_TPL_BLAS=OFF \
              "${cuda_tpls[@]}" \
              -DKokkosKernels_INST_EXECSPACE_SERIAL=OFF -DKokkosKernels_INST_EXECSPACE_OPENMP=OFF \
              -DKokkosKernels_INST_EXECSPACE_CUDA=ON -DKokkosKernels_INST_MEMSPACE_CUDASPACE=ON \
              -DKokkosKernels_INST_MEMSPACE_CUDAUVMSPACE=OFF ;;
  esac
}

# The cache prefix for a backend and Kokkos version: its name carries the
# version and a hash of everything else that changes the build (where the
# source comes from, options, the version's patches, compilers), so a change
# rebuilds. For 3.4.01 the hashed text is the same as before versions existed,
# so existing caches stay valid.
llmk_deps_prefix() {
  local backend=$1 version=${2:-$LLMK_KOKKOS_DEFAULT} key
  key=$( {
    if [ "$version" = 3.4.01 ]; then
      echo "trilinos $LLMK_TRILINOS_VERSION"
    else
      echo "kokkos $version source archives"
    fi
    llmk_kokkos_options "$backend" "$version"
    llmk_kokkoskernels_options "$backend" "$version"
    cat "$LLMK_ROOT"/scripts/patches/{kokkos,kokkos-kernels}-"$version"/series 2>/dev/null
    cat "$LLMK_ROOT"/scripts/patches/{kokkos,kokkos-kernels}-"$version"/*.patch 2>/dev/null
    c++ --version | head -n1
    [ "$backend" = cuda ] && llmk_nvcc --version | tail -n1
  } | sha256sum | cut -c1-12)
  echo "$LLMK_CACHE/kokkos-$version-$backend-$key"
}

# nvcc from the PATH, else the toolkit's default location.
llmk_nvcc() {
  if command -v nvcc > /dev/null; then nvcc "$@"; else /usr/local/cuda/bin/nvcc "$@"; fi
}

# The build folder of a backend and Kokkos version: build/<backend> for the
# default Kokkos (as before), build/<backend>-kokkos<version> for another one,
# build/<backend>-kokkos-root for a Kokkos_ROOT given by the user.
llmk_build_dir() {
  local backend=$1 version=${2:-$LLMK_KOKKOS_DEFAULT}
  if [ -n "${Kokkos_ROOT:-}" ]; then
    echo "$LLMK_ROOT/build/$backend-kokkos-root"
  elif [ "$version" = "$LLMK_KOKKOS_DEFAULT" ]; then
    echo "$LLMK_ROOT/build/$backend"
  else
    echo "$LLMK_ROOT/build/$backend-kokkos$version"
  fi
}

# Parse --backend and --kokkos from a script's arguments: sets BACKEND and
# KOKKOS_VERSION and leaves the rest in REST_ARGS.
llmk_parse_backend() {
  BACKEND=openmp
  KOKKOS_VERSION=$LLMK_KOKKOS_DEFAULT
  REST_ARGS=()
  while [ $# -gt 0 ]; do
    case $1 in
      --backend) BACKEND=$2; shift 2 ;;
      --backend=*) BACKEND=${1#*=}; shift ;;
      --kokkos) KOKKOS_VERSION=$2; shift 2 ;;
      --kokkos=*) KOKKOS_VERSION=${1#*=}; shift ;;
      *) REST_ARGS+=("$1"); shift ;;
    esac
  done
  case $BACKEND in openmp|cuda) ;; *) llmk_die "--backend must be openmp or cuda, got '$BACKEND'" ;; esac
  llmk_check_kokkos_version "$KOKKOS_VERSION"
}

# --- running a CUDA build on a machine without a driver ------------------------------
# A CUDA build of Kokkos 4.x calls driver API functions (cuCtxGetDevice, ...), so
# Kokkos' CMake links CUDA::cuda_driver: the binaries then need libcuda.so.1 to
# load at all. At link time the toolkit's stub lib64/stubs/libcuda.so serves
# (FindCUDAToolkit picks it where no driver is installed); at run time, on a
# machine without a driver, the loader finds no libcuda.so.1 and the test
# binaries die before main() instead of exiting 77 ("skipped").
# llmk_cuda_stub_env puts a folder with a libcuda.so.1 -> stub symlink at the end
# of LD_LIBRARY_PATH, only when no real libcuda.so.1 is known to the dynamic
# loader (ldconfig -p) or already on LD_LIBRARY_PATH. The binaries then load,
# cudaGetDeviceCount fails (cudaErrorStubLibrary: the stub's functions all
# fail) and they exit 77. With a real driver nothing changes.
llmk_have_libcuda() {
  local ldconfig d
  ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
  "$ldconfig" -p 2>/dev/null | grep -q '^[[:space:]]*libcuda\.so\.1 ' && return 0
  local IFS=:
  for d in ${LD_LIBRARY_PATH:-}; do
    [ -n "$d" ] && [ -e "$d/libcuda.so.1" ] && return 0
  done
  return 1
}
llmk_cuda_stub_env() {
  llmk_have_libcuda && return 0
  local nvcc_path toolkit stub dir
  nvcc_path=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  toolkit=$(cd "$(dirname "$(readlink -f "$nvcc_path")")/.." && pwd)
  for stub in "$toolkit"/{lib64,lib,"targets/$(uname -m)-linux/lib"}/stubs/libcuda.so ""; do
    [ -f "$stub" ] && break
  done
  if [ -z "$stub" ]; then
    llmk_log "no libcuda.so.1 and no CUDA stub under $toolkit: a CUDA build's tests may fail to load"
    return 0
  fi
  dir="$LLMK_CACHE/cuda-stub"
  mkdir -p "$dir"
  ln -sfn "$stub" "$dir/libcuda.so.1"
  export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$dir"
  llmk_log "no CUDA driver (libcuda.so.1) here: $dir/libcuda.so.1 -> $stub on LD_LIBRARY_PATH, so the CUDA binaries load and skip"
}

# Set up the dependencies, then configure and build llmk for a backend and
# Kokkos version in llmk_build_dir. Extra arguments are build targets (default: all).
# Sets LLMK_BUILD_DIR.
llmk_setup_and_build() {
  local backend=$1 version=$2; shift 2
  local prefix
  prefix=$("$LLMK_ROOT/scripts/setup.sh" --backend "$backend" --kokkos "$version" | tail -n 1)
  [ -n "$prefix" ] || llmk_die "setup.sh printed no dependency prefix"
  # LLMK_BUILD_SUFFIX and LLMK_CMAKE_ARGS (an array): a variant of the build
  # in its own folder (test.sh --sanitize).
  LLMK_BUILD_DIR=$(llmk_build_dir "$backend" "$version")${LLMK_BUILD_SUFFIX:-}
  mkdir -p "$LLMK_BUILD_DIR"
  # Kokkos_DIR and KokkosKernels_DIR are unset so that a changed prefix (a new
  # hash, another Kokkos_ROOT) is found again rather than the cached one reused.
  # The project's own prefix has KokkosKernels (and CUDA builds cuBLAS): ask
  # for them, so that a prefix without them fails here instead of quietly
  # dropping their implementations and tests (CMake's AUTO, kept for a
  # Kokkos_ROOT of the user's). LLMK_CMAKE_ARGS come after: they override.
  local wanted=()
  if [ -z "${Kokkos_ROOT:-}" ]; then
    wanted+=(-DLLMK_ENABLE_KOKKOSKERNELS=ON)
    [ "$backend" != cuda ] || wanted+=(-DLLMK_ENABLE_CUBLAS=ON)
  fi
  # setup.sh installs Open MPI: its reducer engine and 2-rank tests must not
  # vanish quietly. NCCL stays AUTO: not every CUDA toolkit has it.
  wanted+=(-DLLMK_ENABLE_MPI=ON)
  # setup.sh installs oneDNN too (libdnnl-dev): matmul's "onednn" on host
  # spaces. Not in CUDA builds (CMakeLists.txt says why).
  [ "$backend" = cuda ] || wanted+=(-DLLMK_ENABLE_ONEDNN=ON)
  # Every space's test binary and the tuning tests unless LLMK_CMAKE_ARGS says
  # otherwise (test.sh --test-spaces, --no-tuning-tests): a restriction of an
  # earlier run must not stay in the build folder's cache (a GPU bundle built
  # after CI's run would lack suites).
  wanted+=(-DLLMK_TEST_SPACES= -DLLMK_TEST_TUNINGS=ON)
  local args=(-S "$LLMK_ROOT" -B "$LLMK_BUILD_DIR" -G Ninja "-DCMAKE_PREFIX_PATH=$prefix"
              -UKokkos_DIR -UKokkosKernels_DIR ${wanted[@]+"${wanted[@]}"}
              ${LLMK_CMAKE_ARGS[@]+"${LLMK_CMAKE_ARGS[@]}"})
  if [ "$backend" = cuda ]; then
    # nvcc_wrapper lives in the Kokkos prefix (the first entry when Kokkos_ROOT is given).
    args+=("-DCMAKE_CXX_COMPILER=${prefix%%;*}/bin/nvcc_wrapper")
  else
    args+=(-DLLMK_NATIVE=ON)
  fi
  local t0=$SECONDS log="$LLMK_BUILD_DIR/llmk-configure.log"
  local which="Kokkos $version"
  [ -z "${Kokkos_ROOT:-}" ] || which="Kokkos_ROOT=$Kokkos_ROOT"
  llmk_log "configure + build llmk ($backend, $which) in $LLMK_BUILD_DIR ..."
  cmake "${args[@]}" > "$log" 2>&1 ||
    { tail -n 30 "$log" >&2; llmk_die "configuring llmk failed; log: $log"; }
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$LLMK_BUILD_DIR" -j "$LLMK_JOBS" "${targets[@]}" ||
    llmk_die "building llmk failed"
  llmk_log "built in $((SECONDS - t0)) s"
}
