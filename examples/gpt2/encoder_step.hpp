// GLUE, to be replaced by llmk::encoder_backward when it lands (issue 18):
// the embedding's backward, in plain portable Kokkos,
//   dwte[v, c] += Σ_{i : tokens[i] = v} dout[i, c]    (i = b·T + t, in increasing i)
//   dwpe[t, c] += Σ_b dout[b·T + t, c]                 (in increasing b)
// deterministic without float atomics: every sum runs in a fixed order. Each
// position first finds the next position holding its token (an O((B·T)²) scan
// of the tokens: ~67 M integer compares at B·T = 8192, a placeholder's cost);
// the first position of each token then walks its chain.
#pragma once

#include "device.hpp"

namespace gpt2 {

template <class ExecSpace>
struct EncoderScratch {
  Buffer<ExecSpace, int> next;   // (B·T): the next position with the same token, or −1
  Buffer<ExecSpace, int> first;  // (B·T): 1 where no earlier position has the token
  explicit EncoderScratch(llmk::index_t positions = 0)
      : next("gpt2::encoder_next", positions), first("gpt2::encoder_first", positions) {}
};

template <class ExecSpace, class T>
void encoder_step(const ExecSpace& exec, const Buffer<ExecSpace, float>& dwte,
                  const Buffer<ExecSpace, float>& dwpe, const Buffer<ExecSpace, const T>& dout,
                  const Buffer<ExecSpace, const int>& tokens, const EncoderScratch<ExecSpace>& s,
                  llmk::index_t B, llmk::index_t T_, llmk::index_t C) {
  const llmk::index_t N = B * T_;
  const auto next = s.next;
  const auto first = s.first;
  Kokkos::parallel_for(
      "gpt2::encoder_step::links", Range<ExecSpace>(exec, 0, N), KOKKOS_LAMBDA(const llmk::index_t i) {
        const int token = tokens(i);
        int after = -1, earlier = 0;
        for (llmk::index_t j = 0; j < N; ++j) {
          if (tokens(j) != token) continue;
          if (j < i) earlier = 1;
          if (j > i && after < 0) after = int(j);
        }
        next(i) = after;
        first(i) = earlier ? 0 : 1;
      });
  Kokkos::parallel_for(
      "gpt2::encoder_step::dwte", Range<ExecSpace>(exec, 0, N * C),
      KOKKOS_LAMBDA(const llmk::index_t ic) {
        const llmk::index_t i = ic / C, c = ic % C;
        if (!first(i)) return;
        float sum = 0.0f;
        for (llmk::index_t j = i; j >= 0; j = next(j)) sum += llmk::to_float(dout(j * C + c));
        dwte(llmk::index_t(tokens(i)) * C + c) += sum;
      });
  Kokkos::parallel_for(
      "gpt2::encoder_step::dwpe", Range<ExecSpace>(exec, 0, T_ * C),
      KOKKOS_LAMBDA(const llmk::index_t tc) {
        float sum = 0.0f;
        for (llmk::index_t b = 0; b < B; ++b) sum += llmk::to_float(dout(b * T_ * C + tc));
        dwpe(tc) += sum;
      });
}

}  // namespace gpt2
