// What "cublas" and "cublaslt" share, for their .cpp files only (CUDA builds):
// element types as CUDA data types, and the output side of the dinp GEMM
// (cublas_dinp_route in src/ops/matmul_backward/cublas.hpp).
//
// cuBLAS is column-major; llmk's row-major matrices are their transposes: a
// row-major R×K matrix is a column-major K×R matrix with leading dimension K.
//   dinp (M×C)     ⟵ dout (M×OC) · weight (OC×C)
//     column-major: dinpᵀ (C×M) ⟵ weightᵀ (C×OC) · doutᵀ (OC×M)
//   dweight (OC×C) ⟵ doutᵀ (OC×M) · inp (M×C)
//     column-major: dweightᵀ (C×OC) ⟵ inpᵀ (C×M) · dout (M×OC)
#pragma once

#include "cublas_handles.hpp"

#include <ops/matmul_backward/cublas.hpp>
#include <kernels/gelu.hpp>
#include <kernels/gemm_output.hpp>

#include <cstdint>
#include <optional>
#include <type_traits>

namespace llmk::backends {

// llmk::bf16 has __nv_bfloat16's layout (bf16.hpp): CUDA_R_16BF.
template <class T>
constexpr cudaDataType_t cuda_type() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, bf16>, "float or llmk::bf16");
  return std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_16BF;
}

// 16 bytes of T: one vector load or store.
template <class T>
struct alignas(16) Pack16 {
  static constexpr int size = int(16 / sizeof(T));
  T v[size];
};

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// out ⟵ out ⊙ gelu'(pre_gelu), in place, one rounding of the product.
// Bandwidth-bound: with aligned data a thread moves 16 bytes of each array
// (one element per thread measured 0.6 TB/s on the H200). The elements past
// the last whole pack, or all of them when unaligned, one per thread.
// (A free function: nvcc's extended lambdas fail in static member functions.)
template <class T>
void scale_by_gelu_grad(const Kokkos::Cuda& exec, const Matrix<Kokkos::Cuda, T>& out,
                        const ConstMatrix<Kokkos::Cuda, T>& pre_gelu) {
  using Pack = Pack16<T>;
  // Both are contiguous (validated; row chunks of contiguous matrices are).
  T* const o = out.data();
  const T* const g = pre_gelu.data();
  const index_t n = index_t(out.size());
  const index_t packs = aligned16(o) && aligned16(g) ? n / Pack::size : 0;
  const index_t tail0 = packs * Pack::size;
  Kokkos::parallel_for(
      "llmk::cublas_dinp_gelu_scale", Range<Kokkos::Cuda>(exec, 0, packs + (n - tail0)),
      KOKKOS_LAMBDA(const index_t i) {
        if (i < packs) {
          Pack x = reinterpret_cast<const Pack*>(o)[i];
          const Pack x_pre = reinterpret_cast<const Pack*>(g)[i];
          for (int j = 0; j < Pack::size; ++j)
            x.v[j] = from_float<T>(to_float(x.v[j]) * kernels::gelu_grad(to_float(x_pre.v[j])));
          reinterpret_cast<Pack*>(o)[i] = x;
        } else {
          const index_t e = tail0 + (i - packs);
          o[e] = from_float<T>(to_float(o[e]) * kernels::gelu_grad(to_float(g[e])));
        }
      });
}

// The output side of the dinp GEMM of one run(): where the product goes (a
// column-major C×M matrix, leading dimension C), its type and beta, and the
// pass that follows it, by cublas_dinp_route.
template <class P>
class DinpOutput {
 public:
  using Problem = op::matmul_backward::Problem<Kokkos::Cuda, P>;
  using Route = op::matmul_backward::CublasDinpRoute;

  // Takes cublas_dinp_workspace_floats() from `workspace`.
  DinpOutput(const Problem& p, core::Workspace& workspace)
      : p_(p), route_(op::matmul_backward::cublas_dinp_route<P>(p.overwrite_dinp, p.has_gelu())) {
    if (route_ == Route::staged) staged_.emplace(p.dinp, p.overwrite_dinp, true, workspace);
  }

  void* target() const {
    if (staged_) return staged_->target().data();
    return p_.dinp.data();
  }
  cudaDataType_t type() const {
    return staged_ ? CUDA_R_32F : cuda_type<typename P::dinp>();
  }
  float beta() const { return route_ == Route::direct && !p_.overwrite_dinp ? 1.0f : 0.0f; }

  // The GEMM writes dinp itself with the GELU factor (cuBLASLt's DGELU, dinp
  // overwritten): the product goes straight into dinp and finish() has
  // nothing left to do.
  void gelu_fused() {
    route_ = Route::direct;
    staged_.reset();
  }

  // After the GEMM: the GELU factor and the update it did not do.
  void finish(const Kokkos::Cuda& exec) const {
    switch (route_) {
      case Route::direct: return;
      case Route::direct_then_scale:
        return scale_by_gelu_grad(exec, p_.dinp, p_.pre_gelu);
      case Route::staged: return staged_->finish(exec, p_.pre_gelu);
    }
  }

 private:
  const Problem& p_;
  Route route_;
  std::optional<kernels::GemmOutput<Kokkos::Cuda, typename P::dinp>> staged_;
};

}  // namespace llmk::backends

namespace llmk::op::matmul_backward {

// The context's second stream for the bias pass; null when the call runs the
// pass on the caller's stream: when asked to, or when the context has no side
// stream (SideStreamSlot). Nothing is written yet, so doing without it costs
// only the concurrency.
inline backends::SideStream* side_stream(Call<Kokkos::Cuda>& call, BiasStream where,
                                         bool has_bias) {
  if (where != BiasStream::side || !has_bias) return nullptr;
  return call.ctx.template resource<backends::SideStreamSlot>().get();
}

// Forks the side stream from the context's stream for the scope, and joins it
// back at the end, also when a launch in between throws (the next call reuses
// the workspace the side stream's pass is using).
class ForkJoin {
 public:
  explicit ForkJoin(backends::SideStream* side) : side_(side) {
    if (side_) side_->fork();
  }
  ~ForkJoin() {
    if (side_ && !joined_) side_->join_nothrow();
  }
  ForkJoin(const ForkJoin&) = delete;
  ForkJoin& operator=(const ForkJoin&) = delete;
  void join() {
    joined_ = true;
    if (side_) side_->join();
  }

 private:
  backends::SideStream* side_;
  bool joined_ = false;
};

}  // namespace llmk::op::matmul_backward
