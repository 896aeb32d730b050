// The output side of a GEMM computed in float by a library or kernel that can
// only do  target = beta·target + product  (cuBLAS, KokkosBlas, the row
// products of "team"), for a gradient of any element type that is overwritten
// or accumulated, optionally times gelu'(pre_gelu) (GELU's backward):
//
//   out ⟵ product ⊙ gelu'(pre_gelu)
//
// When out is float and there is nothing to do after the product (or only
// GELU's factor, with out overwritten), the product goes straight into out
// (beta = 0 or 1). Otherwise it goes into a float workspace (beta = 0) and
// finish() applies the factor and the update in one elementwise pass: a bf16
// output is rounded once, from the whole float sum, and an accumulated output
// gets product ⊙ gelu' added, not (out + product) ⊙ gelu'.
#pragma once

#include <core/workspace.hpp>
#include <kernels/gelu.hpp>
#include <kernels/tuning.hpp>
#include <kernels/update.hpp>
#include <llmk/compat.hpp>

#include <type_traits>

namespace llmk::kernels {

template <class ExecSpace, class T>
class GemmOutput {
 public:
  // Whether the product needs a float workspace of the output's extents.
  static bool needs_workspace(const bool overwrite, const bool gelu) {
    return !(std::is_same_v<T, float> && (overwrite || !gelu));
  }
  // Floats of workspace for a rows × cols output.
  static index_t workspace_floats(const index_t rows, const index_t cols, const bool overwrite,
                                  const bool gelu) {
    return needs_workspace(overwrite, gelu) ? rows * cols : 0;
  }

  // Takes workspace_floats() from `workspace`.
  GemmOutput(const Matrix<ExecSpace, T>& out, const bool overwrite, const bool gelu,
             core::Workspace& workspace)
      : out_(out), overwrite_(overwrite), gelu_(gelu),
        staged_(needs_workspace(overwrite, gelu)) {
    if (staged_) {
      float* const buffer = workspace.take<float>(std::size_t(
          workspace_floats(out.extent(0), out.extent(1), overwrite, gelu)));
      target_ = Matrix<ExecSpace>(Unmanaged(buffer, out.extent(0), out.extent(1)));
    } else if constexpr (std::is_same_v<T, float>) {
      target_ = out;
    }
  }

  // Where the product goes, and the beta it goes there with.
  const Matrix<ExecSpace>& target() const { return target_; }
  float beta() const { return staged_ || overwrite_ ? 0.0f : 1.0f; }

  // For kernels that can only add into target: makes target = 0 when beta is 0.
  void zero_if_overwritten(const ExecSpace& exec) const {
    if (beta() == 0.0f) Kokkos::deep_copy(exec, target_, 0.0f);
  }

  // After the product: the GELU factor and the update, when they were not
  // done by the product itself. pre_gelu: out's extents, or empty.
  template <class TI>
  void finish(const ExecSpace& exec, const ConstMatrix<ExecSpace, TI>& pre_gelu) const {
    if (!staged_ && !gelu_) return;
    const auto out = out_;
    const auto target = target_;
    const auto pre = pre_gelu;
    const bool gelu = gelu_, overwrite = overwrite_;
    const index_t rows = out.extent(0), cols = out.extent(1);
    if constexpr (compat::is_host_space<ExecSpace>) {
      // A row a thread's step, a loop over its columns that the compiler
      // vectorizes (host_blocks.hpp says why it is a function of its own).
      Kokkos::parallel_for(
          "llmk::gemm_output_finish", Range<ExecSpace>(exec, 0, rows), [=](const index_t r) {
            T* const o = &out(r, 0);
            const float* const t = &target(r, 0);
            if (!gelu) {
              finish_cols<false>(o, t, static_cast<const TI*>(nullptr), cols, overwrite);
            } else {
              finish_cols<true>(o, t, &pre(r, 0), cols, overwrite);
            }
          });
    } else {
      Kokkos::parallel_for(
          "llmk::gemm_output_finish", Range<ExecSpace>(exec, 0, rows * cols),
          KOKKOS_LAMBDA(const index_t i) {
            finish_one(out, target, pre, i / cols, i % cols, gelu, overwrite);
          });
    }
  }

 private:
  // Hosts: one row's columns; o may be t (not staged: scaled in place), each
  // element read before it is written.
  template <bool kGelu, class TI>
  static void finish_cols(T* o, const float* t, const TI* pre, const index_t cols,
                          const bool overwrite) {
    if (overwrite) {
      LLMK_SIMD
      for (index_t c = 0; c < cols; ++c)
        o[c] = from_float<T>(t[c] * (kGelu ? gelu_grad(to_float(pre[c])) : 1.0f));
    } else {
      LLMK_SIMD
      for (index_t c = 0; c < cols; ++c)
        o[c] = from_float<T>(to_float(o[c]) + t[c] * (kGelu ? gelu_grad(to_float(pre[c])) : 1.0f));
    }
  }

  // Not staged: out is target (float, overwritten), scaled in place.
  template <class Out, class Target, class Pre>
  KOKKOS_INLINE_FUNCTION static void finish_one(const Out& out, const Target& target,
                                                const Pre& pre, const index_t r, const index_t c,
                                                const bool gelu, const bool overwrite) {
    const float factor = gelu ? gelu_grad(to_float(pre(r, c))) : 1.0f;
    update(out(r, c), target(r, c) * factor, overwrite);
  }

  using Unmanaged = Kokkos::View<float**, Kokkos::LayoutRight, typename ExecSpace::device_type,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Matrix<ExecSpace, T> out_;
  Matrix<ExecSpace> target_;
  bool overwrite_, gelu_, staged_;
};

}  // namespace llmk::kernels
