// A hint to the host's caches: fetch lines before they are used.
#pragma once

#include <cstddef>

#if defined(__GNUC__)
#define LLMK_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define LLMK_ALWAYS_INLINE inline
#endif

namespace llmk::kernels {

// Asks the cache for the 64-byte lines of [p, p + bytes) ahead of their use
// (a hint: no fault, no effect on results; nothing where the compiler has no
// prefetch builtin). For rows at scattered addresses (the encoder's dwte rows
// by token), which the hardware prefetcher cannot guess: it starts on a row
// only after the first misses in it.
// Always inlined, and so must be a function around it: GCC 12 finds a
// function that does nothing but prefetch free of side effects and drops
// the calls to it (its pure-const analysis), prefetches and all.
LLMK_ALWAYS_INLINE void prefetch_lines(const void* p, std::size_t bytes, bool for_write) {
#if defined(__GNUC__)
  const char* c = static_cast<const char*>(p);
  for (std::size_t o = 0; o < bytes; o += 64) {
    if (for_write)
      __builtin_prefetch(c + o, 1);  // the builtin's second argument must be a constant
    else
      __builtin_prefetch(c + o, 0);
  }
#else
  (void)p, (void)bytes, (void)for_write;
#endif
}

}  // namespace llmk::kernels
