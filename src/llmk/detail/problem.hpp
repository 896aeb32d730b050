// What every implementation receives: validated rank-2 views and the sizes.
#pragma once

#include <llmk/matmul_backward.hpp>

namespace llmk::detail {

template <class ExecSpace>
struct Problem {
  Matrix<ExecSpace> dinp;       // M × C
  Matrix<ExecSpace> dweight;    // OC × C
  Vector<ExecSpace> dbias;      // OC, or empty: no bias gradient
  ConstMatrix<ExecSpace> dout;  // M × OC
  ConstMatrix<ExecSpace> inp;   // M × C
  ConstMatrix<ExecSpace> weight;  // OC × C
  index_t M = 0, C = 0, OC = 0;

  bool has_bias() const { return dbias.extent(0) != 0; }
};

// One specialization per implementation (and, for the vendor fast paths, per
// execution space), in the manner of KokkosKernels' TPL specializations:
// the primary template is "not available here"; a specialization that runs
// sets available = true and defines run(). M, C and OC are > 0 when run() is
// called.
template <class ExecSpace, Impl I>
struct Implementation {
  static constexpr bool available = false;
  static void run(const ExecSpace&, const Problem<ExecSpace>&, const MatmulBackwardOptions&) {}
};

}  // namespace llmk::detail
