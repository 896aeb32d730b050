// The attention backward's peers (peers.hpp). On the host, peer:openblas:
// llm.c's structure with OpenBLAS: per (b, h), four cblas_sgemm calls on
// qkv's and dqkv's strided layout (leading dimension 3C, the head at h·HS)
// around the softmax backward (OpenMP over the rows, only the causal part
// computed), the T × T matrix in one scratch buffer as llmk's
// "materialized" holds it (att with its masked part zeroed, then datt, then
// dpreatt in place). fp32 only. OpenBLAS threads each GEMM itself.
#include "peers.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace llmk::perf::attention_backward {
namespace {

void openblas(const PeerArgs& a) {
  const index_t B = a.B, T = a.T, C = a.C, NH = a.NH, HS = C / NH;
  if (B * T * C == 0) return;
  openblas_set_num_threads(a.threads);
  float* const dqkv = static_cast<float*>(a.dqkv);
  const float* const dout = static_cast<const float*>(a.dout);
  const float* const qkv = static_cast<const float*>(a.qkv);
  const float* const att_all = static_cast<const float*>(a.att);
  static std::vector<float> buffer;
  if (buffer.size() < std::size_t(T * T)) buffer.resize(std::size_t(T * T));
  float* const ws = buffer.data();
  const float alpha = float(1.0 / std::sqrt(double(HS)));
  const float beta = a.accumulate ? 1.0f : 0.0f;
  const int t = int(T), hs = int(HS), ld = int(3 * C), c = int(C);
  for (index_t b = 0; b < B; ++b)
    for (index_t h = 0; h < NH; ++h) {
      const float* const att = att_all + (b * NH + h) * T * T;
      const float* const g = dout + b * T * C + h * HS;
      const float* const q = qkv + b * T * 3 * C + h * HS;
      float* const dq = dqkv + b * T * 3 * C + h * HS;
#pragma omp parallel for num_threads(a.threads)
      for (index_t r = 0; r < T; ++r)
        for (index_t u = 0; u < T; ++u) ws[r * T + u] = u <= r ? att[r * T + u] : 0.0f;
      // dv (T × HS) ⟵ wsᵀ · dout_h
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, t, hs, t, 1.0f, ws, t, g, c, beta,
                  dq + 2 * C, ld);
      // ws ⟵ datt = dout_h · vᵀ
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t, t, hs, 1.0f, g, c, q + 2 * C, ld,
                  0.0f, ws, t);
#pragma omp parallel for num_threads(a.threads)
      for (index_t r = 0; r < T; ++r) {
        const float* const p = att + r * T;
        float* const w = ws + r * T;
        float drow = 0.0f;
        for (index_t u = 0; u <= r; ++u) drow += p[u] * w[u];
        for (index_t u = 0; u <= r; ++u) w[u] = p[u] * (w[u] - drow);
        std::fill(w + r + 1, w + T, 0.0f);
      }
      // dq ⟵ α·dpreatt·k, dk ⟵ α·dpreattᵀ·q
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, t, hs, t, alpha, ws, t, q + C, ld,
                  beta, dq, ld);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, t, hs, t, alpha, ws, t, q, ld, beta,
                  dq + C, ld);
    }
}

std::vector<Peer> host_peers() {
  Peer p;
  p.name = "openblas";
  p.backends = {"Serial", "OpenMP"};
  p.precisions = {"fp32"};
  p.run = openblas;
  p.comparison = true;
  p.description =
      "per (b, h) 4 × OpenBLAS sgemm on qkv's strided layout + an OpenMP softmax backward "
      "(causal part only) in a T × T scratch (llm.c's structure)";
  return {p};
}

}  // namespace

std::vector<Peer> peers_for(const std::string& backend) {
  return peers_on(host_peers(), backend);
}

}  // namespace llmk::perf::attention_backward
