// CUDA builds: ask the CUDA runtime where a pointer lives.
#include <cuda_runtime.h>
#include <core/validate.hpp>

namespace llmk::detail {

MemoryKind memory_kind(const void* ptr) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error: no device, or a plain host pointer
    return MemoryKind::Host;
  }
  switch (attributes.type) {
    case cudaMemoryTypeDevice: return MemoryKind::Device;
    case cudaMemoryTypeManaged: return MemoryKind::Managed;
    default: return MemoryKind::Host;  // registered or unregistered host memory
  }
}

}  // namespace llmk::detail
