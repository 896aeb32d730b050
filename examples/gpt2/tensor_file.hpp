// The file gpt2_torch.py writes and the program reads: named tensors one
// after the other, so that it can be written and read a tensor at a time.
//
//   "LLMKGPT2"  8 bytes
//   version     uint32 (1)
//   records until the end of the file, each:
//     name_len  uint32, then name_len bytes of ASCII (the name)
//     dtype     uint32: 0 float32, 1 int32, 2 bfloat16 (the top 16 bits of a float32)
//     rank      uint32, then rank int64 extents
//     data      the elements, row-major, little-endian
//
// Names: "config" (int32: L, C, NH, V, Vp, B, T); "tokens", "targets" (int32,
// (B, T)); the parameters and activations of model.hpp; "grad.<name>" for
// autograd's gradients (gradient_specs); "losses" (B, T); "time_ms.<what>"
// (float32, one element: PyTorch's backward times, median ms).
#pragma once

#include "model.hpp"

#include <string>

namespace gpt2 {

struct TensorFile {
  HostInputs inputs;               // cfg, parameters, activations, tokens, targets
  Doubles gradients;               // "grad.*"
  std::vector<double> losses;      // empty when the file has none
  std::map<std::string, double> times_ms;  // "time_ms.<what>" → what
};

// Throws std::runtime_error naming the file and what is wrong with it (not
// such a file, truncated, an unknown dtype, a record without a config).
TensorFile read_tensor_file(const std::string& path);

}  // namespace gpt2
