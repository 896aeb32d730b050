// Implementation "warp_rows", for Kokkos::Cuda: a warp a row, the row read
// once into registers. Each lane loads its 16-byte chunks of the row (lane l
// has chunks l, l + 32, ...: every load of the warp 512 contiguous bytes,
// all of them issued before the first sum), the mean and the squared
// deviations come from the registers through the warp's shuffles (a
// butterfly: every lane the same bits), and the outputs leave as 16-byte
// stores beside the weight's and bias' chunks. llm.c's layernorm forward is
// a warp a row too.
// Why: "rows" (kernels.hpp, portable) reads the row three times as 2- or
// 4-byte elements and waits on each pass's loads: 0.037 ms in bf16 (38 % of
// a copy of its bytes) and 0.046 in fp32 at B 8, T 1024, C 768 on an H100,
// against llm.c's algorithm's 0.020 / 0.026 (docs/performance.md).
// Defined in backends/cuda/layernorm_forward_warp_rows.cpp (CUDA builds only).
//
// What it runs: C a multiple of a chunk (8 bf16 or 4 floats), at most
// kWarpRowsMaxChunks chunks a lane (bf16 C ≤ 2048, fp32 C ≤ 1024), rows
// contiguous, out, inp, weight and bias aligned to 16 bytes. Anything else
// runs "rows" (the same results within tolerance, its speed).
#pragma once

#include <llmk/compat.hpp>
#include <ops/layernorm_forward/kernels.hpp>

#include <string_view>

namespace llmk::op::layernorm_forward {

inline constexpr int kWarpRowsMaxChunks = 8;  // a lane's chunks of a row, at most

// Runs the call and returns true, or returns false, having launched nothing,
// where the kernel does not take it (the header says when).
template <class ExecSpace, class A>
bool warp_rows_run(const ExecSpace& exec, const A& a);

}  // namespace llmk::op::layernorm_forward
