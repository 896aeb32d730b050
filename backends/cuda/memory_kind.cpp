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
    // Page-locked host memory: the device reaches it where it is mapped at
    // the host's own address (cudaMallocHost, cudaHostAlloc: always, with
    // unified addressing; cudaHostRegister'ed memory where the device can use
    // host pointers), which is the address a kernel is given.
    case cudaMemoryTypeHost:
      return attributes.devicePointer != nullptr &&
                     attributes.devicePointer == attributes.hostPointer
                 ? MemoryKind::Mapped
                 : MemoryKind::Host;
    default: return MemoryKind::Host;  // unregistered host memory
  }
}

}  // namespace llmk::detail
