// The one place where llmk touches Kokkos API that changed between 3.4 and 4.x.
// Everything else in llmk is written to the API that is stable across them.
#pragma once

#include <Kokkos_Core.hpp>

namespace llmk::compat {

// Kokkos 3.4 has exec.fence() only; 4.x adds fence(const std::string& label).
template <class ExecSpace>
void fence(const ExecSpace& exec) {
  exec.fence();
}

}  // namespace llmk::compat
