// What every CUDA backend (cuBLAS, NCCL) needs of the CUDA runtime: errors
// as exceptions naming the call, and a scope that makes a device current.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace llmk::backends {

inline void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("llmk: ") + call + " failed: " +
                             cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
  }
}

// Makes `device` current for the scope: streams and events must be made on
// the device of the caller's stream, whatever the calling thread has current.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (device != previous_) check_cuda(cudaSetDevice(device), "cudaSetDevice");
  }
  ~DeviceScope() { cudaSetDevice(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace llmk::backends
