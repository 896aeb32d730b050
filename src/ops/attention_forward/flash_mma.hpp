// Implementation "flash_mma", for Kokkos::Cuda on sm_80 and later, bf16:
// flash-attention 2's forward on tensor cores. A block of 64 queries of one
// (b, h) in 4 warps of 16 rows walks the key blocks of 64 at or before it
// (double buffered by cp.async); per block each warp computes S = q·kᵀ by
// mma.sync m16n8k16 (bf16 operands, float sums), keeps its rows' running
// maximum and sum in registers (the online softmax, exp2 of the scaled
// logits), rounds P to bf16 and adds P·v by mma into its float accumulator;
// then out = acc / l (one rounding to bf16), lse = m + log l. The tile
// helpers are the recompute backward's (backends/cuda/attention_flash_mma*).
// Defined in backends/cuda/attention_forward_flash_mma.cpp, which only CUDA
// builds compile (LLMK_HAVE_CUDA); no CUDA header here.
//
// What it does not run: fp32 ("flash" does), heads wider than 64, T past
// 65535·64, devices before sm_80: an explicit request is refused before any
// write, "auto" passes it over.
//
// NaN: a masked pair is a zero probability, but P·v multiplies whole tiles of
// 64 keys, so a NaN in v_u also reaches the queries before u in u's block
// (0·NaN); q and k reach exactly their causal rows.
#pragma once

#include <core/checked.hpp>
#include <llmk/compat.hpp>
#include <ops/attention_forward/problem.hpp>

#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace llmk::op::attention_forward {

inline constexpr index_t kFlashMmaBlock = 64;    // positions a tile holds
inline constexpr index_t kFlashMmaMaxHead = 64;  // the widest head a tile holds

// The work of "flash_mma" (attention_forward_flash_mma.cpp), for Kokkos::Cuda, bf16.
template <class ExecSpace, class P>
void flash_mma_forward(const ExecSpace& exec, const Problem<ExecSpace, P>& p);
// Whether the device Kokkos runs on has bf16 mma (compute capability ≥ 8.0).
bool flash_mma_forward_device_has_mma();

struct FlashMma : core::op::OnCuda<ImplDefaults, LLMK_HAVE_CUDA> {
  static constexpr std::string_view name = "flash_mma";
  template <class P>
  static constexpr bool supports = std::is_same_v<P, Bf16>;
  static constexpr bool rounds_once = false;  // P is a bf16 operand

  static bool runs(const Sizes& s) {
    return s.C / s.NH <= kFlashMmaMaxHead && (s.T + kFlashMmaBlock - 1) / kFlashMmaBlock <= 65535 &&
           s.M * s.NH <= core::kInt32Max;
  }
  template <class P>
  static bool auto_skips(const Sizes& s) {
    return !runs(s) || !flash_mma_forward_device_has_mma();
  }

  template <class ExecSpace, class P>
  static void run(Call<ExecSpace>& call, const Problem<ExecSpace, P>& p) {
    const Sizes s = p.sizes();
    if (!runs(s) || !flash_mma_forward_device_has_mma())
      throw std::invalid_argument(std::string(kOpName) +
                                  ": implementation 'flash_mma' runs heads of at most 64 "
                                  "channels (C/NH = " + std::to_string(s.C / s.NH) +
                                  "), T up to 65535·64 and B·NH up to 2³¹ − 1 on devices of "
                                  "compute capability 8.0 or later (use 'flash' or 'auto')");
    flash_mma_forward(call.exec, p);
  }
};

}  // namespace llmk::op::attention_forward
