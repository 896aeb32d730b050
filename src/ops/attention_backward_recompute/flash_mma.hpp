// Implementation "flash_mma", for Kokkos::Cuda on sm_80 and later, bf16 and
// fp32: "flash"'s algorithm (flash.hpp: D, then the keys' dk and dv, then
// the queries' dq, P and dS recomputed in each, no atomics) on tensor cores.
// Each kernel is a block of 64 positions of one (b, h) in 4 warps of 16 rows;
// every product of a tile (S = q·kᵀ, dP = dout_h·vᵀ, dv += Pᵀ·dout_h,
// dk += dSᵀ·q, dq += dS·k) is warp-level mma.sync with float accumulators,
// the head padded with zeros to 64:
//  - bf16: m16n8k16 on bf16 operands, P and dS rounded to bf16 as operands
//    (as flash-attention's backward does: rounds_once is false);
//  - fp32: m16n8k8 on TF32 operands, each product as three (each float split
//    into two TF32 parts, "3xTF32"), so that the result keeps fp32's
//    tolerance where one TF32 product would not (attention_flash_mma_fp32.cpp).
// Defined in backends/cuda/attention_flash_mma*.cpp, which only CUDA builds
// compile (LLMK_HAVE_CUDA); no CUDA header here.
//
// What it does not run: heads wider than 64 (an explicit request is refused
// before any write; "auto" passes it over), T past 65535·64 (its grid: the
// same), devices before sm_80 (no bf16 or TF32 mma: the same).
//
// NaN: a masked pair (u > t) is a zero in a tile's product, and 0·NaN is
// NaN, so a NaN in q_t or dout_h[t] may reach dk and dv of the keys after t
// in t's block of 64, and a NaN in k_u dq of the queries before u in u's
// block (the recompute adapter's nan_bound, tests/support/).
#pragma once

#include <core/checked.hpp>
#include <llmk/bf16.hpp>
#include <llmk/compat.hpp>
#include <ops/attention_backward_recompute/problem.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace llmk::op::attention_backward_recompute {

// Positions a tile holds, and the widest head it holds (the kernels' tiles;
// also the NaN bound's block).
inline constexpr index_t kFlashMmaBlock = 64;
inline constexpr index_t kFlashMmaMaxHead = 64;

// The work of "flash_mma" (attention_flash_mma.cpp), instantiated there for
// Kokkos::Cuda with Bf16 and Fp32; D is the workspace's B·NH·T floats; ds
// "flash_mma_ds"'s tiles of dS (bf16 only; nullptr: dq recomputes them).
template <class ExecSpace, class P>
void flash_mma_run(const ExecSpace& exec, const Problem<ExecSpace, P>& p, float* D,
                   bf16* ds = nullptr);
// Whether the device Kokkos runs on has bf16 and TF32 mma (compute capability ≥ 8.0).
bool flash_mma_device_has_mma();

struct FlashMma : core::op::OnCuda<ImplDefaults, LLMK_HAVE_CUDA> {
  static constexpr std::string_view name = "flash_mma";
  template <class P>
  static constexpr bool supports = std::is_same_v<P, Bf16> || std::is_same_v<P, Fp32>;
  static constexpr bool rounds_once = false;  // P and dS are bf16 operands

  static bool head_fits(const Sizes& s) { return s.C / s.NH <= kFlashMmaMaxHead; }
  // Its grids: the (b, h) pairs along x (up to 2³¹ − 1), the blocks of 64
  // positions along y (up to 65535: T up to 4 194 240).
  static bool grid_fits(const Sizes& s) {
    return (s.T + kFlashMmaBlock - 1) / kFlashMmaBlock <= 65535 && s.M * s.NH <= core::kInt32Max;
  }

  template <class P>
  static bool auto_skips(const Sizes& s) {
    return !head_fits(s) || !grid_fits(s) || !flash_mma_device_has_mma();
  }

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<float>(std::size_t(s.M * s.NH * s.T));  // D
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    const Sizes s = p.sizes();
    refuse_unless_it_runs(s, name);
    float* const D = call.workspace.template take<float>(std::size_t(s.M * s.NH * s.T));
    flash_mma_run(call.exec, p, D);
  }

  // The sizes and devices these kernels do not run: refused, by the
  // implementation's name, before any write.
  static void refuse_unless_it_runs(const Sizes& s, std::string_view impl) {
    // Built only for a refusal: a call that runs allocates nothing here.
    const auto named = [impl] {
      return std::string(kOpName) + ": implementation '" + std::string(impl) + "'";
    };
    if (!head_fits(s)) {
      throw std::invalid_argument(named() + " holds heads of at most " +
                                  std::to_string(kFlashMmaMaxHead) + " channels, but C/NH = " +
                                  std::to_string(s.C / s.NH) + " (use 'flash' or 'auto')");
    }
    if (!grid_fits(s)) {
      throw std::invalid_argument(named() +
                                  " runs T up to 65535·64 and B·NH up to 2³¹ − 1 (use 'flash' "
                                  "or 'auto')");
    }
    if (!flash_mma_device_has_mma()) {
      throw std::invalid_argument(named() +
                                  " needs bf16 and TF32 tensor cores (compute capability 8.0 "
                                  "or later; use 'flash' or 'auto')");
    }
  }
};

// "flash_mma_ds" (bf16): flash_mma with each tile's dS kept between its two
// kernels. The dk/dv kernel writes the dSᵀ it has rounded to bf16 for
// dk += dSᵀ·q into the workspace, the causal tiles of every head (B·NH·n(n+1)/2
// tiles of 64 × 64, n = ⌈T/64⌉: 107 MB at GPT-2's B 8, NH 12, T 1024), and
// the dq kernel reads them back: one product a tile (dq += dS·k) where
// flash_mma's dq kernel recomputes S, dP, P and dS (three products and the
// exponentials), at the price of the tiles' bytes written and read once.
// dq's sum runs over the same tiles in the same order as flash_mma's; its dS
// comes from Sᵀ = k·qᵀ where flash_mma's dq kernel computes S = q·kᵀ, so the
// two may differ in a product's last bit.
struct FlashMmaDs : FlashMma {
  static constexpr std::string_view name = "flash_mma_ds";
  template <class P>
  static constexpr bool supports = std::is_same_v<P, Bf16>;

  // "auto" passes it over where the tiles would take more than this (B·NH
  // of 24 at T 4096 take 409 MB), for flash_mma, whose recomputation needs
  // no such workspace.
  static constexpr index_t kMostTileBytes = index_t(1) << 30;

  // The tiles' elements; std::invalid_argument (before any write: the
  // workspace is sized first) where the count would pass 2⁶⁰.
  static index_t ds_elements(const Sizes& s) {
    const index_t n = (s.T + kFlashMmaBlock - 1) / kFlashMmaBlock;
    const std::string what = "flash_mma_ds's tiles of dS, B·NH·n(n + 1)/2·64² with n = ⌈T/64⌉";
    const index_t tiles = core::checked_product(n, n + 1, kOpName, what) / 2;
    const index_t per_head =
        core::checked_product(tiles, kFlashMmaBlock * kFlashMmaBlock, kOpName, what);
    return core::checked_product(s.M * s.NH, per_head, kOpName, what);
  }

  template <class P>
  static bool auto_skips(const Sizes& s) {
    if (FlashMma::auto_skips<P>(s)) return true;
    try {
      return ds_elements(s) * index_t(sizeof(bf16)) > kMostTileBytes;
    } catch (const std::invalid_argument&) {
      return true;  // past 2⁶⁰ elements
    }
  }

  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    FlashMma::workspace<ExecSpace, P>(size, s);
    size.add<bf16>(std::size_t(ds_elements(s)));
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    const Sizes s = p.sizes();
    refuse_unless_it_runs(s, name);
    float* const D = call.workspace.template take<float>(std::size_t(s.M * s.NH * s.T));
    bf16* const ds = call.workspace.template take<bf16>(std::size_t(ds_elements(s)));
    flash_mma_run(call.exec, p, D, ds);
  }
};

}  // namespace llmk::op::attention_backward_recompute
