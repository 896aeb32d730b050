#include "device.hpp"

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

#include <cstdio>

namespace gpt2 {

bool have_gpu() {
#ifdef KOKKOS_ENABLE_CUDA
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    std::printf("no GPU (cudaGetDeviceCount: %s): skipped\n", cudaGetErrorString(status));
    return false;
  }
#endif
  return true;
}

}  // namespace gpt2
