// The matmul backward's declaration: its arguments and precision
// configurations (the element types of its inputs, which dout, inp, weight
// and pre_gelu share, and of each gradient; the sums are float in every
// one). The entry (core/op/entry.hpp), the contract tests and llmk-perf
// derive theirs from it; op.hpp adds the implementations, each of which
// states the configurations it runs (ImplDefaults::supports<P>).
#pragma once

#include <array>
#include <core/op/precision.hpp>
#include <core/op/signature.hpp>
#include <llmk/matmul_backward.hpp>
#include <string_view>

namespace llmk::op::matmul_backward {

template <class In, class DInp, class DWeight, class DBias>
struct Precision {
  using in = In;  // dout, inp, weight, pre_gelu
  using dinp = DInp;
  using dweight = DWeight;
  using dbias = DBias;
  static constexpr std::array<core::op::Role, 4> roles() {
    return {{{"inputs", dtype_of<In>()},
             {"dinp", dtype_of<DInp>()},
             {"dweight", dtype_of<DWeight>()},
             {"dbias", dtype_of<DBias>()}}};
  }
};

using Fp32 = core::op::Fp32Of<Precision>;
using Bf16 = core::op::Bf16Of<Precision>;  // llm.c's training
using Bf16Fp32Grad = core::op::Bf16Fp32GradOf<Precision>;

using core::op::for_each_precision;
using core::op::PrecisionTag;
using Precisions = core::op::PrecisionList<Fp32, Bf16, Bf16Fp32Grad>;

inline constexpr const char* kOpName = "llmk::matmul_backward";

struct Spec {
  static constexpr const char* name = kOpName;
  using Options = MatmulBackwardOptions;
  using Precisions = matmul_backward::Precisions;
  static constexpr std::array<core::op::Arg, 7> args{{
      core::op::out("dinp", "dinp", "rows C"), core::op::out("dweight", "dweight", "OC C"),
      core::op::out("dbias", "dbias", "OC").maybe_absent(),  // no bias gradient
      core::op::in("dout", "inputs", "rows OC"), core::op::in("inp", "inputs", "rows C"),
      core::op::in("weight", "inputs", "OC C"),
      core::op::in("pre_gelu", "inputs", "rows C").maybe_absent(),  // no GELU
  }};
  enum Index : std::size_t { dinp, dweight, dbias, dout, inp, weight, pre_gelu };
  // dout gives the rows and OC, weight C; the activations are checked before
  // the gradients (a wrong inp is reported on inp, with dout's B and T).
  static constexpr std::size_t leader = dout;
  static constexpr std::array<std::size_t, 7> binding{dout, weight,  inp,  pre_gelu,
                                                      dinp, dweight, dbias};
};

}  // namespace llmk::op::matmul_backward
