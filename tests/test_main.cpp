// main() of every llmk test binary: GoogleTest around Kokkos::initialize/finalize.
//
// Listing the tests (--gtest_list_tests, which gtest_discover_tests runs when
// CTest starts) touches no device, so it must work on a machine without a GPU:
// Kokkos is initialized only to run tests. A CUDA build of Kokkos initializes
// the CUDA device in Kokkos::initialize, whatever space a binary tests, and
// aborts without one; so first ask the CUDA runtime, and without a device exit
// with 77, which CTest reports as "skipped" (SKIP_RETURN_CODE 77).
// LLMK_EXPECT_GPU=1 (set on a machine that has the GPU: the H200 run,
// scripts/gpu-run.sh) turns that into a failure (exit 1): an old driver, a
// CUDA_VISIBLE_DEVICES that hides the device, or the libcuda stub first on
// LD_LIBRARY_PATH then show as a failed binary, with cudaGetDeviceCount's
// error, instead of a suite that "passed" by skipping everything.
#include <Kokkos_Core.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace {

bool listing_tests() {
#ifdef GTEST_FLAG_GET  // GoogleTest >= 1.12
  return GTEST_FLAG_GET(list_tests);
#else
  return ::testing::GTEST_FLAG(list_tests);
#endif
}

#ifdef KOKKOS_ENABLE_CUDA
bool have_cuda_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    std::printf("cudaGetDeviceCount: %s (%s)\n", cudaGetErrorString(status),
                cudaGetErrorName(status));
    return false;
  }
  if (count == 0) std::printf("cudaGetDeviceCount: 0 devices\n");
  return count > 0;
}
#endif

// LLMK_EXPECT_GPU set and not "0".
bool gpu_expected() {
  const char* v = std::getenv("LLMK_EXPECT_GPU");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

}  // namespace

int main(int argc, char** argv) {
  // gmock's initializer also parses (and removes) the --gtest_* flags; what
  // remains (--kokkos-* flags) goes to Kokkos.
  ::testing::InitGoogleMock(&argc, argv);
  if (listing_tests()) return RUN_ALL_TESTS();
#ifdef KOKKOS_ENABLE_CUDA
  if (!have_cuda_device()) {
    if (gpu_expected()) {
      std::printf("FAILED: LLMK_EXPECT_GPU is set, and no CUDA device is usable (above)\n");
      return 1;
    }
    std::printf("no CUDA device: skipping the Cuda tests (Kokkos is built with CUDA and cannot "
                "initialize without a device, so every test of this build skips; "
                "LLMK_EXPECT_GPU=1 makes this a failure)\n");
    return 77;
  }
#endif
  Kokkos::ScopeGuard kokkos(argc, argv);
  return RUN_ALL_TESTS();
}
