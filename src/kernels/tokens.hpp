// Token ids checked against the vocabulary before an operation writes
// anything (the encoder's forward and backward): the first position holding
// a token outside [0, V), and the error that names it.
#pragma once

#include <llmk/types.hpp>

#include <Kokkos_Core.hpp>

#include <stdexcept>
#include <string>

namespace llmk::kernels {

// The first position holding a token outside [0, V), or −1 (a min reduction:
// the same position whatever the order; the host waits for it).
template <class ExecSpace, class Tokens>
index_t first_bad_token(const ExecSpace& exec, const Tokens& tokens, const index_t V) {
  const index_t M = index_t(tokens.extent(0));
  index_t first = M;
  Kokkos::parallel_reduce(
      "llmk::encoder_check_tokens", Range<ExecSpace>(exec, 0, M),
      KOKKOS_LAMBDA(const index_t i, index_t& f) {
        const int t = tokens(i);
        if ((t < 0 || t >= V) && i < f) f = i;
      },
      Kokkos::Min<index_t>(first));
  exec.fence();  // (Kokkos 3 may leave a reduction into a host scalar pending)
  return first < M ? first : -1;
}

// Throws std::invalid_argument for the token at position `bad` of a call of
// sequences of T, naming it, its value and where it lies.
template <class ExecSpace, class Tokens>
[[noreturn]] void refuse_token_at(const ExecSpace& exec, const char* op, const Tokens& tokens,
                                  const index_t bad, const index_t T, const index_t V) {
  int value = 0;
  Kokkos::deep_copy(exec, value, Kokkos::subview(tokens, bad));
  exec.fence();
  throw std::invalid_argument(std::string(op) + ": argument 'tokens' holds " +
                              std::to_string(value) + " at position " + std::to_string(bad) +
                              " (b = " + std::to_string(bad / T) + ", t = " +
                              std::to_string(bad % T) + "), outside [0, V = " +
                              std::to_string(V) + ")");
}

}  // namespace llmk::kernels
