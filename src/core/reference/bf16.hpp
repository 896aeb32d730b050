// bfloat16 on the host, for the reference libraries (llmk_reference), the
// tests and the perf driver. Independent of llmk's llmk::bf16: a test of the
// one must not rely on the other. Plain C++17 (no llmk, no Kokkos).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace llmk::reference {

// bf16 is the top 16 bits of a float32.
//  - float_to_bf16_bits: round to nearest, ties to even; NaN stays NaN (quiet,
//    sign kept), ±Inf stays ±Inf, finite values that round past bf16's largest
//    finite value (0x7f7f, 3.3895e38) become ±Inf.
//  - bf16_bits_to_float: exact.
//  - round_to_bf16(x) = bf16_bits_to_float(float_to_bf16_bits(x)).
std::uint16_t float_to_bf16_bits(float x);
float bf16_bits_to_float(std::uint16_t bits);
float round_to_bf16(float x);
// Every element of `values` rounded to bf16, in place.
void round_to_bf16(std::vector<float>& values);
// Every element of a bf16 buffer (read as uint16) widened to float; and back.
std::vector<float> widen_bf16(const std::uint16_t* bits, std::size_t count);
std::vector<std::uint16_t> narrow_to_bf16(const std::vector<float>& values);

}  // namespace llmk::reference
