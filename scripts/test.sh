#!/usr/bin/env bash
# Set up everything needed (first run: a few minutes), build llmk and run its
# test suite with CTest.
#
# usage: scripts/test.sh [--backend openmp|cuda] [--kokkos 3.4.01|4.6.01] [--large]
#                        [--test-spaces SPACES] [--no-tuning-tests]
#                        [--sanitize address|thread]
#                        [extra ctest arguments, e.g. -L openmp, -R Bad]
#   --backend openmp (default) or cuda (Kokkos::Cuda for sm_90; see docs/gpu.md)
#   --kokkos  the Kokkos version to build against (default 3.4.01; see setup.sh);
#             build/<backend> for 3.4.01, build/<backend>-kokkos<version> otherwise
#   --large   also run the tests labelled `large` (the seed shape; slow on a CPU)
#   --test-spaces SPACES
#             build the generic suite for these execution spaces only
#             (comma-separated: Cuda, or Serial,OpenMP; default: every space
#             Kokkos has, and then the backends-against-each-other suite too);
#             CI's second and third configurations use one space each
#   --no-tuning-tests
#             leave out the tests that run kernels through tunings other than
#             the shipped ones (CMake LLMK_TEST_TUNINGS=OFF; tests/CMakeLists.txt
#             says why): CI's Cuda configuration, which cannot run them
#   --sanitize address|thread
#             OpenMP only, in build/<...>-asan or -tsan (Kokkos itself is not
#             instrumented): `address` builds llmk and the tests with ASan+UBSan
#             and runs the whole suite (the large tests too with --large;
#             LLMK_SKIP_HUGE=1 leaves out the M >= 2^31 tests, 7 minutes
#             under ASan); `thread` builds with TSan and runs the tests
#             labelled `concurrency` with one OpenMP thread (libgomp is not
#             instrumented: its own threads would be reported as races)
#   -h, --help  this text (nothing installed or built); every script's options:
#             docs/cli.md
# Without a GPU, the Cuda tests of a cuda build report themselves skipped (where
# no CUDA driver is installed, through the toolkit's libcuda stub: common.sh).
set -euo pipefail
for arg in "$@"; do
  case $arg in -h|--help) sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
done
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
llmk_parse_backend "$@"
# Kokkos asks for a binding policy; unit tests run best unbound.
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}

ctest_args=(--output-on-failure -j "$LLMK_JOBS")
large=0 sanitize= test_spaces= tuning_tests=ON
set -- ${REST_ARGS[@]+"${REST_ARGS[@]}"}
while [ $# -gt 0 ]; do
  case $1 in
    --large) large=1; shift ;;
    --sanitize) sanitize=$2; shift 2 ;;
    --sanitize=*) sanitize=${1#*=}; shift ;;
    --test-spaces) test_spaces=$2; shift 2 ;;
    --test-spaces=*) test_spaces=${1#*=}; shift ;;
    --no-tuning-tests) tuning_tests=OFF; shift ;;
    *) ctest_args+=("$1"); shift ;;
  esac
done
excluded=()
[ $large = 1 ] || excluded+=(large)
case $sanitize in
  '') ;;
  address|thread)
    [ "$BACKEND" = openmp ] || llmk_die "--sanitize needs --backend openmp (nvcc builds are not instrumented)"
    LLMK_BUILD_SUFFIX=-${sanitize:0:1}san
    LLMK_CMAKE_ARGS=(-DLLMK_SANITIZE=$sanitize -DLLMK_BUILD_PERF=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo)
    [ -z "${LLMK_SKIP_HUGE:-}" ] || excluded+=(huge)
    if [ "$sanitize" = thread ]; then
      export OMP_NUM_THREADS=1
      ctest_args+=(-L concurrency)
    fi ;;
  *) llmk_die "--sanitize must be address or thread, got '$sanitize'" ;;
esac
if [ ${#excluded[@]} -gt 0 ]; then
  ctest_args+=(-LE "$(IFS='|'; echo "${excluded[*]}")")
fi

[ -z "$test_spaces" ] || LLMK_CMAKE_ARGS+=("-DLLMK_TEST_SPACES=${test_spaces//,/;}")
LLMK_CMAKE_ARGS+=("-DLLMK_TEST_TUNINGS=$tuning_tests")

llmk_setup_and_build "$BACKEND" "$KOKKOS_VERSION"
if [ "$BACKEND" = cuda ]; then llmk_cuda_stub_env; fi
llmk_log "ctest ${ctest_args[*]}"
cd "$LLMK_BUILD_DIR" && ctest "${ctest_args[@]}"
