// What every operation's public API shares: how a gradient is updated, how
// float32 products are computed, and what an implementation declares about
// itself (each operation's *_impls() lists them).
#pragma once

#include <string>
#include <vector>

namespace llmk {

// How products of float32 inputs are computed: float32 FMAs, or TF32 tensor
// cores (10-bit mantissas: ~5e-4 relative error, outside float32 tolerances).
enum class Math { fp32, tf32 };
// What a gradient receives: += (accumulate) or = (overwrite, without reading it).
enum class Update { accumulate, overwrite };

// What an implementation of an operation declares about itself.
struct ImplInfo {
  std::string name;
  bool compiled;       // part of this build (its library was found)
  bool deterministic;  // bitwise identical results from run to run
  std::vector<std::string> precisions;  // the configurations it runs ("fp32", "bf16", ...)
  bool tf32;                            // runs Math::tf32
  bool rounds_once;  // a bf16 output is always its float sum (+ its old value)
                     // rounded once (false: a library rounds intermediate
                     // results to bf16)
  bool host_blas;    // runs on the process's BLAS on host spaces: "auto" passes
                     // it over there unless llmk::host_blas_runs_auto() allows
                     // (llmk/host_blas.hpp); it can still be named
};

}  // namespace llmk
