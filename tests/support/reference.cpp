#include "support/reference.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>

namespace llmk_test {
namespace {

using Host = Kokkos::DefaultHostExecutionSpace;
using i64 = std::int64_t;

// Rows of the result that one work item computes together: each weight row
// (resp. inp row) read from memory serves kBlock rows, which keeps the seed
// shape's reference at a few seconds instead of a minute. Pure speed; the
// arithmetic is the seed's, each element summed in order.
constexpr i64 kBlock = 8;

i64 blocks(i64 rows) { return (rows + kBlock - 1) / kBlock; }

// dinp[m, :] = dinp0[m, :] + Σ_o dout[m, o] · weight[o, :]
void reference_dinp(const HostProblem& p, std::vector<double>& dinp) {
  const i64 M = p.shape.M(), C = p.shape.C, OC = p.shape.OC;
  dinp.assign(p.dinp.begin(), p.dinp.end());
  Kokkos::parallel_for(
      "llmk_test::reference_dinp", Kokkos::RangePolicy<Host>(0, blocks(M)), [&](const i64 blk) {
        const i64 m0 = blk * kBlock, m1 = std::min(M, m0 + kBlock);
        for (i64 o = 0; o < OC; ++o) {
          const float* w = &p.weight[o * C];
          for (i64 m = m0; m < m1; ++m) {
            const double d = p.dout[m * OC + o];
            double* out = &dinp[m * C];
            for (i64 c = 0; c < C; ++c) out[c] += d * w[c];
          }
        }
      });
}

// dweight[o, :] = dweight0[o, :] + Σ_m dout[m, o] · inp[m, :]
// dbias[o]      = dbias0[o] + Σ_m dout[m, o]
void reference_dweight_dbias(const HostProblem& p, std::vector<double>& dweight,
                             std::vector<double>& dbias) {
  const i64 M = p.shape.M(), C = p.shape.C, OC = p.shape.OC;
  const bool bias = p.shape.bias;
  dweight.assign(p.dweight.begin(), p.dweight.end());
  dbias.assign(p.dbias.begin(), p.dbias.end());
  Kokkos::parallel_for(
      "llmk_test::reference_dweight", Kokkos::RangePolicy<Host>(0, blocks(OC)), [&](const i64 blk) {
        const i64 o0 = blk * kBlock, o1 = std::min(OC, o0 + kBlock);
        for (i64 m = 0; m < M; ++m) {
          const float* x = &p.inp[m * C];
          for (i64 o = o0; o < o1; ++o) {
            const double d = p.dout[m * OC + o];
            if (bias) dbias[o] += d;
            double* out = &dweight[o * C];
            for (i64 c = 0; c < C; ++c) out[c] += d * x[c];
          }
        }
      });
}

}  // namespace

Gradients64 reference_backward(const HostProblem& p) {
  Gradients64 g;
  reference_dinp(p, g.dinp);
  reference_dweight_dbias(p, g.dweight, g.dbias);
  return g;
}

}  // namespace llmk_test
