// Writing a result into an output of any element type: the one rounding of
// a float sum into its stored type, added to the output's value (accumulate)
// or replacing it without reading it (overwrite: the output may hold NaN).
#pragma once

#include <llmk/types.hpp>

namespace llmk::kernels {

template <class T>
KOKKOS_INLINE_FUNCTION void update(T& out, const float value, const bool overwrite) {
  out = from_float<T>(overwrite ? value : to_float(out) + value);
}

}  // namespace llmk::kernels
