// What matmul_backward's "cublas", "cublas_serial" and "cublaslt" share, for
// their .cpp files only (CUDA builds): the two GEMMs described for the
// wrapper (gemm.hpp), the output side of the dinp GEMM (cublas_dinp_route in
// src/ops/matmul_backward/cublas.hpp), and the side stream of the bias pass.
#pragma once

#include "gemm.hpp"

#include <ops/matmul_backward/cublas.hpp>
#include <kernels/gelu.hpp>
#include <kernels/gemm_output.hpp>

#include <optional>
#include <type_traits>

namespace llmk::op::matmul_backward {

// out ⟵ out ⊙ gelu'(pre_gelu), in place, one rounding of the product.
// Bandwidth-bound: with aligned data a thread moves 16 bytes of each array
// (one element per thread measured 0.6 TB/s on the H200). The elements past
// the last whole pack, or all of them when unaligned, one per thread.
// (A free function: nvcc's extended lambdas fail in static member functions.)
template <class T>
void scale_by_gelu_grad(const Kokkos::Cuda& exec, const Matrix<Kokkos::Cuda, T>& out,
                        const ConstMatrix<Kokkos::Cuda, T>& pre_gelu) {
  using Pack = backends::Pack16<T>;
  // Both are contiguous (validated; row chunks of contiguous matrices are).
  T* const o = out.data();
  const T* const g = pre_gelu.data();
  const index_t n = index_t(out.size());
  const index_t packs = backends::aligned16(o) && backends::aligned16(g) ? n / Pack::size : 0;
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

// The output side of the dinp GEMM of one run(): where the product goes (an
// M×C matrix, leading dimension C), its type and beta, and the pass that
// follows it, by cublas_dinp_route.
template <class P>
class DinpOutput {
 public:
  using Problem = matmul_backward::Problem<Kokkos::Cuda, P>;
  using Route = CublasDinpRoute;

  // Takes cublas_dinp_workspace_floats() from `workspace`.
  DinpOutput(const Problem& p, core::Workspace& workspace)
      : p_(p), route_(cublas_dinp_route<P>(p.overwrite_dinp, p.has_gelu())) {
    if (route_ == Route::staged) staged_.emplace(p.dinp, p.overwrite_dinp, true, workspace);
  }

  void* target() const {
    if (staged_) return staged_->target().data();
    return p_.dinp.data();
  }
  cudaDataType_t type() const {
    return staged_ ? CUDA_R_32F : backends::cuda_type<typename P::dinp>();
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

// Float32 FMAs unless TF32 was asked for (float inputs only).
template <class P>
backends::cublas::Compute compute_for(Math math) {
  return std::is_same_v<typename P::in, float> && math == Math::tf32
             ? backends::cublas::Compute::tf32
             : backends::cublas::Compute::fp32;
}

// dinp (M×C) ⟵ dout (M×OC) · weight (OC×C), into D (M×C, leading dimension
// C) of type d_type: dinp itself, or where a DinpOutput says.
template <class P>
backends::cublas::Gemm dinp_gemm(const Problem<Kokkos::Cuda, P>& p, void* d,
                                 cudaDataType_t d_type, float beta, Math math) {
  const cudaDataType_t in = backends::cuda_type<typename P::in>();
  backends::cublas::Gemm g;
  g.what = "dinp";
  g.m = p.M, g.n = p.C, g.k = p.OC;
  g.a = {p.dout.data(), p.OC, in};
  g.b = {p.weight.data(), p.C, in};
  g.d = {d, p.C, d_type};
  g.beta = beta;
  g.compute = compute_for<P>(math);
  return g;
}

// dweight (OC×C) ⟵ doutᵀ (OC×M) · inp (M×C), straight into dweight (a bf16
// dweight accumulated is rounded twice: cuBLAS rounds the product first).
template <class P>
backends::cublas::Gemm dweight_gemm(const Problem<Kokkos::Cuda, P>& p, Math math) {
  const cudaDataType_t in = backends::cuda_type<typename P::in>();
  backends::cublas::Gemm g;
  g.what = "dweight";
  g.m = p.OC, g.n = p.C, g.k = p.M;
  g.op_a = backends::cublas::Op::T;
  g.a = {p.dout.data(), p.OC, in};
  g.b = {p.inp.data(), p.C, in};
  g.d = {p.dweight.data(), p.C, backends::cuda_type<typename P::dweight>()};
  g.beta = p.overwrite_dweight ? 0.0f : 1.0f;
  g.compute = compute_for<P>(math);
  return g;
}

// The GEMM with cuBLASLt's scratch from the call's workspace.
inline backends::cublas::Gemm with_scratch(backends::cublas::Gemm g, void* scratch) {
  g.workspace = scratch;
  g.workspace_bytes = kCublasLtScratchBytes;
  return g;
}

// dinp = (dout·W) ⊙ gelu'(pre_gelu) by the DGELU epilogue, straight into dinp:
// when dinp is overwritten (DGELU scales beta·C too) and pre_gelu's leading
// dimension (C) is one cuBLASLt accepts.
template <class P>
bool dgelu_fits(const Problem<Kokkos::Cuda, P>& p) {
  return p.has_gelu() && p.overwrite_dinp && p.C % 8 == 0;
}

template <class P>
backends::cublas::Epilogue dgelu_epilogue(const Problem<Kokkos::Cuda, P>& p) {
  backends::cublas::Epilogue e;
  e.kind = backends::cublas::Epilogue::Kind::dgelu;
  e.aux = const_cast<void*>(static_cast<const void*>(p.pre_gelu.data()));  // (DGELU reads it)
  e.aux_ld = p.C;
  return e;
}

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
