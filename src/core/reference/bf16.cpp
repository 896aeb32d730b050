#include <core/reference/bf16.hpp>

#include <cstring>

namespace llmk::reference {

std::uint16_t float_to_bf16_bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const std::uint32_t sign = u & 0x80000000u, magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return std::uint16_t((sign >> 16) | 0x7fc0u);  // NaN: quiet
  if (magnitude == 0x7f800000u) return std::uint16_t(u >> 16);                // ±Inf
  // Keep the top 16 bits; the 16 dropped ones decide: above half an ulp up,
  // below down, exactly half to the even neighbour. A carry out of the
  // mantissa moves to the next binade (or to Inf), as it should.
  std::uint32_t kept = magnitude >> 16;
  const std::uint32_t dropped = magnitude & 0xffffu;
  if (dropped > 0x8000u || (dropped == 0x8000u && (kept & 1u))) ++kept;
  return std::uint16_t((sign >> 16) | kept);
}

float bf16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t u = std::uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

float round_to_bf16(float x) { return bf16_bits_to_float(float_to_bf16_bits(x)); }

void round_to_bf16(std::vector<float>& values) {
  for (float& x : values) x = round_to_bf16(x);
}

std::vector<float> widen_bf16(const std::uint16_t* bits, std::size_t count) {
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = bf16_bits_to_float(bits[i]);
  return out;
}

std::vector<std::uint16_t> narrow_to_bf16(const std::vector<float>& values) {
  std::vector<std::uint16_t> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = float_to_bf16_bits(values[i]);
  return out;
}

}  // namespace llmk::reference
