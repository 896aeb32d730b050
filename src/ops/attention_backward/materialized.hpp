// Implementation "materialized": llm.c's structure, the T × T matrices held
// in a float workspace of T × T per (b, h), four batched products through
// the shared tiled GEMM (kernels/gemm_tiled.hpp) working directly on qkv's
// and dqkv's strided layout (head h of sequence b at b·T·3C + h·HS, leading
// dimension 3C: a batch of B × NH products, two strides), and the softmax
// backward between them (kernels/attention_backward.hpp):
//   1. ws ⟵ att, its masked part zeros (the GEMM reads whole tiles at the
//      diagonal; att's masked part is never read)
//   2. dv ⟵ wsᵀ · dout_h                     (TN, a_upper)
//   3. ws ⟵ datt = dout_h · vᵀ               (NT, d_lower: overwritten)
//   4. ws ⟵ dpreatt = att ⊙ (ws − drow)     in place, a team per row, the
//      causal part computed, zeros over the masked part
//   5. dq ⟵ α · ws · k                       (NN, a_lower, α = 1/√HS as the epilogue)
//   6. dk ⟵ α · wsᵀ · q                      (TN, a_upper)
// dq, dk and dv go into dqkv with = or += (one rounding each). The GEMM's
// two inputs share one element type, so in "bf16" dout and qkv are first
// widened to float copies in the workspace (B·T·4C floats); datt and dpreatt
// are float in both precisions. Each product skips the causal mask's zeros a
// tile at a time (the triangles of kernels/gemm_operand.hpp): dv's and dk's
// tiles of keys sum over the queries from their first key on, dq's tiles of
// queries over the keys up to their last query, datt computes the tiles at
// or below the diagonal only; so steps 1 and 4 write each row only up to the
// end of its block of `block` rows (the tiles' rows), the zeros those tiles
// read, and nothing beyond it. A NaN in q, k, v or dout may still reach,
// through 0 · NaN within a diagonal tile, elements that the causal sums
// keep finite (at most reference.hpp's Dense). Workspace: B·NH·T·T floats
// (+ the copies, + the GEMMs' split-K partials, one region they take in
// turn). Deterministic for a given plan (the host's split-K follows its
// thread count).
#pragma once

#include <kernels/gemm_tiled.hpp>
#include <ops/attention_backward/problem.hpp>

#include <kernels/attention_tuning.hpp>

#include <algorithm>
#include <numeric>
#include <type_traits>

namespace llmk::op::attention_backward {

struct Materialized : ImplDefaults {
  static constexpr std::string_view name = "materialized";

  // The products, float inputs (bf16 ones widened first), D of dqkv's type
  // or the float workspace: TN (dv, dk), NT (datt), NN (dq); the T × HS
  // ones in tiles as wide as a head (AttentionTiledTuning).
  template <class ExecSpace>
  using HeadTuning = kernels::AttentionTiledTuning<ExecSpace>;
  template <class ExecSpace, class TD>
  using TnGemm = kernels::TiledGemm<kernels::GemmForm<true, false, true>, ExecSpace, float, TD,
                                    kernels::ScaleEpilogue, void, HeadTuning<ExecSpace>>;
  template <class ExecSpace>
  using NtGemm = kernels::TiledGemm<kernels::GemmForm<false, true, true>, ExecSpace, float, float,
                                    kernels::PlainEpilogue>;
  template <class ExecSpace, class TD>
  using NnGemm = kernels::TiledGemm<kernels::GemmForm<false, false, true>, ExecSpace, float, TD,
                                    kernels::ScaleEpilogue, void, HeadTuning<ExecSpace>>;

  // Per (b, h): dv, dq, dk are T × HS products over T; datt T × T over HS.
  static kernels::GemmShape by_keys(const Sizes& s, const kernels::Triangle triangle) {
    return {s.T, s.C / s.NH, s.T, s.M, s.NH, triangle};
  }
  static kernels::GemmShape by_channels(const Sizes& s) {
    return {s.T, s.T, s.C / s.NH, s.M, s.NH, kernels::Triangle::d_lower};
  }
  // The rows of ws's blocks (steps 1 and 4 write a row up to its block's
  // end): every tile of rows of dv, dq and dk ends at a block's end.
  template <class ExecSpace, class TD>
  static constexpr index_t block_rows() {
    return std::lcm(index_t(TnGemm<ExecSpace, TD>::Config::BM),
                    index_t(NnGemm<ExecSpace, TD>::Config::BM));
  }

  static std::size_t ws_floats(const Sizes& s) { return std::size_t(s.M * s.NH * s.T * s.T); }
  template <class P>
  static std::size_t copy_floats(const Sizes& s) {
    return std::is_same_v<typename P::in, float> ? 0 : std::size_t(s.M * s.T * 4 * s.C);
  }
  // The largest of the four products' split-K partials: they run one after
  // the other and take the same region.
  template <class ExecSpace, class P>
  static std::size_t split_floats(const Sizes& s) {
    using TD = typename P::dqkv;
    const kernels::GemmShape keys = by_keys(s, kernels::Triangle::none);  // (the same plan)
    return std::max({TnGemm<ExecSpace, TD>::split_k_workspace(keys, false),
                     NtGemm<ExecSpace>::split_k_workspace(by_channels(s), false),
                     NnGemm<ExecSpace, TD>::split_k_workspace(keys, false)});
  }

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<float>(ws_floats(s));
    size.add<float>(copy_floats<P>(s));
    size.add<float>(split_floats<ExecSpace, P>(s));
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    using TD = typename P::dqkv;
    using kernels::GemmOperand;
    const Sizes s = p.sizes();
    const auto& a = p.args;
    const index_t T = s.T, C = s.C, HS = C / s.NH, TT = T * T;
    float* const ws = call.workspace.template take<float>(ws_floats(s));
    float* const copies = call.workspace.template take<float>(copy_floats<P>(s));
    float* const split = call.workspace.template take<float>(split_floats<ExecSpace, P>(s));
    // The GEMMs' float inputs: the arguments, or their float copies.
    const float* qkv = nullptr;
    const float* dout = nullptr;
    if constexpr (std::is_same_v<typename P::in, float>) {
      qkv = a.qkv, dout = a.dout;
    } else {
      qkv = copies, dout = copies + s.M * T * 3 * C;
    }
    // Head h of sequence b: at b·T·ld + h·HS of a (B·T) × ld array; (b, h)'s
    // T × T matrix at (b·NH + h)·T·T of ws.
    const auto head = [&](auto* data, const index_t ld) {
      return GemmOperand<std::remove_pointer_t<decltype(data)>>{data, ld, T * ld, HS};
    };
    const GemmOperand<float> w{ws, T, s.NH * TT, TT};
    const GemmOperand<TD> dq = head(a.dqkv, 3 * C), dk = head(a.dqkv + C, 3 * C),
                          dv = head(a.dqkv + 2 * C, 3 * C);
    const GemmOperand<const float> q = head(qkv, 3 * C), k = head(qkv + C, 3 * C),
                                   v = head(qkv + 2 * C, 3 * C), g = head(dout, C);
    // Every product is made (and checked) before the first launch.
    const bool overwrite = a.overwrite;
    using kernels::Triangle;
    TnGemm<ExecSpace, TD> dv_gemm(by_keys(s, Triangle::a_upper), dv, w, g, overwrite, {1.0f});
    NtGemm<ExecSpace> datt_gemm(by_channels(s), w, g, v, true);
    NnGemm<ExecSpace, TD> dq_gemm(by_keys(s, Triangle::a_lower), dq, w, k, overwrite, {a.alpha});
    TnGemm<ExecSpace, TD> dk_gemm(by_keys(s, Triangle::a_upper), dk, w, q, overwrite, {a.alpha});
    dv_gemm.with_split_k(split);
    datt_gemm.with_split_k(split);
    dq_gemm.with_split_k(split);
    dk_gemm.with_split_k(split);

    const index_t rows = s.M * s.NH * T;
    if constexpr (!std::is_same_v<typename P::in, float>) {
      kernels::attention_widen(call.exec, a.qkv, copies, s.M * T * 3 * C);
      kernels::attention_widen(call.exec, a.dout, copies + s.M * T * 3 * C, s.M * T * C);
    }
    constexpr index_t block = block_rows<ExecSpace, TD>();
    kernels::attention_masked_copy(call.exec, a.att, ws, rows, T, block);
    dv_gemm.run(call.exec, "llmk::attention_dv_tiled");
    datt_gemm.run(call.exec, "llmk::attention_datt_tiled");
    kernels::attention_softmax_backward(call.exec, a.att, ws, ws, rows, T,
                                        static_cast<float*>(nullptr), block);
    dq_gemm.run(call.exec, "llmk::attention_dq_tiled");
    dk_gemm.run(call.exec, "llmk::attention_dk_tiled");
  }
};

}  // namespace llmk::op::attention_backward
