// What every operation's public API shares: how a gradient is updated, how
// float32 products are computed, what an implementation declares about
// itself, and the queries every operation answers alike.
#pragma once

#include <string>
#include <string_view>
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
  // The precisions "auto" passes it over for in this build on this CPU,
  // whatever the sizes: a later implementation leads there (matmul's
  // kokkoskernels and onednn in fp32 where tiled has its AVX-512 tile).
  std::vector<std::string> auto_passes_over;
};

// Every operation's queries, by its tag (declared in its header beside its
// options: GeluBackward, LayernormBackward, ..., each with its Options and
// ImplInfo), defined once for all of them (src/core/op/queries.hpp):
//   llmk::impls<Op>()             its implementations, in the order "auto" prefers them
//   llmk::precisions<Op>()        its precision configurations ("fp32", "bf16", ...)
//   llmk::available<Op, Space>(impl)  whether impl is compiled and runs on Space
//                                 ("auto" always; an unknown name throws)
//   llmk::auto_impl<Op, Space>(precision, math)  what "auto" picks there
template <class Op>
struct OpQueries {
  static const std::vector<typename Op::ImplInfo>& impls();
  static const std::vector<std::string>& precisions();
};
template <class Op, class ExecSpace>
struct SpaceQueries {
  static bool available(std::string_view impl);
  static std::string auto_impl(std::string_view precision, Math math);
};

template <class Op>
const std::vector<typename Op::ImplInfo>& impls() {
  return OpQueries<Op>::impls();
}
template <class Op>
const std::vector<std::string>& precisions() {
  return OpQueries<Op>::precisions();
}
template <class Op, class ExecSpace>
bool available(std::string_view impl) {
  return SpaceQueries<Op, ExecSpace>::available(impl);
}
template <class Op, class ExecSpace>
std::string auto_impl(std::string_view precision = "fp32", Math math = Math::fp32) {
  return SpaceQueries<Op, ExecSpace>::auto_impl(precision, math);
}

}  // namespace llmk
