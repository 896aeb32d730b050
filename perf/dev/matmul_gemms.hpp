// What the tiled GEMM's development benchmarks (tiled_bench.cpp on Cuda,
// tiled_host_bench.cpp on a host) share: matmul's data at one shape (dout,
// weight, inp filled with a fixed pseudo-random pattern; dinp, dweight, dbias
// and the peer's results), the two GEMMs through TiledGemm in a tuning
// (dinp = dout·W, dweight = doutᵀ·inp with the fused dbias), and the largest
// difference between two results relative to the peer's largest element.
#pragma once

#include <kernels/gemm_tiled.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace llmk_dev {

using llmk::index_t;

template <class T, class Space>
using Mat = Kokkos::View<T**, Kokkos::LayoutRight, Space>;

template <class T, class Space>
void fill(const Mat<T, Space>& m, unsigned seed) {
  const index_t n = m.size();
  T* p = m.data();
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Space, Kokkos::IndexType<index_t>>(0, n),
      KOKKOS_LAMBDA(const index_t i) {
        unsigned x = unsigned(i) * 2654435761u + seed;
        x ^= x >> 13;
        x *= 0x5bd1e995u;
        x ^= x >> 15;
        p[i] = T(float(x % 2001) / 1000.0f - 1.0f);
      });
  Space().fence();
}

// max |a − b| / max |b| over two float matrices.
template <class Space>
double rel_diff(const Mat<float, Space>& a, const Mat<float, Space>& b) {
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < ha.size(); ++i) {
    diff = std::max(diff, std::abs(double(ha.data()[i]) - hb.data()[i]));
    scale = std::max(scale, std::abs(double(hb.data()[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

template <class Space>
struct MatmulData {
  index_t M, C, OC;
  Mat<float, Space> dout, weight, inp, dinp, dweight, dinp_ref, dweight_ref;
  Kokkos::View<float*, Space> dbias;
  MatmulData(index_t M_, index_t C_, index_t OC_)
      : M(M_), C(C_), OC(OC_), dout("dout", M, OC), weight("weight", OC, C), inp("inp", M, C),
        dinp("dinp", M, C), dweight("dweight", OC, C), dinp_ref("dinp_ref", M, C),
        dweight_ref("dweight_ref", OC, C), dbias("dbias", OC) {
    fill(dout, 1);
    fill(weight, 2);
    fill(inp, 3);
  }
  double flops() const { return 2.0 * M * C * OC; }
};

// matmul's two GEMMs in tuning Tuning (= into dinp and dweight; dweight's
// DweightTuning where given), with their split-K workspace.
template <class Space, class Tuning, class DweightTuning = Tuning>
struct TiledMatmul {
  using Dinp = llmk::kernels::TiledGemm<llmk::kernels::GemmForm<false, false>, Space, float, float,
                                        llmk::kernels::GeluGradEpilogue<float>, void, Tuning>;
  using Dweight =
      llmk::kernels::TiledGemm<llmk::kernels::GemmForm<true, false>, Space, float, float,
                               llmk::kernels::PlainEpilogue, float, DweightTuning>;
  llmk::kernels::GemmShape dinp_shape, dweight_shape;
  Kokkos::View<float*, Space> workspace;
  Dinp dinp;
  Dweight dweight;

  explicit TiledMatmul(const MatmulData<Space>& d)
      : dinp_shape{d.M, d.C, d.OC},
        dweight_shape{d.OC, d.C, d.M},
        workspace("workspace", std::max(Dinp::split_k_workspace(dinp_shape, false),
                                        Dweight::split_k_workspace(dweight_shape, true)) +
                                   64),
        dinp(Dinp(dinp_shape, llmk::kernels::gemm_operand(d.dinp),
                  llmk::kernels::gemm_operand(d.dout), llmk::kernels::gemm_operand(d.weight), true)
                 .with_split_k(workspace.data())),
        dweight(Dweight(dweight_shape, llmk::kernels::gemm_operand(d.dweight),
                        llmk::kernels::gemm_operand(d.dout), llmk::kernels::gemm_operand(d.inp),
                        true)
                    .with_bias(d.dbias, true)
                    .with_split_k(workspace.data())) {}
  long long dinp_split() const { return Dinp::split_k_workspace(dinp_shape, false); }
  long long dweight_split() const { return Dweight::split_k_workspace(dweight_shape, true); }
};

}  // namespace llmk_dev
