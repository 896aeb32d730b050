// llmk::matmul_backward on a problem small enough to check by hand, on the
// default execution space. Exit status: 0 when the results are right, 1 when
// not, 77 (skipped) in a CUDA build on a machine without a GPU.
#include <llmk/matmul_backward.hpp>

#include <cstdio>

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace {

using Space = Kokkos::DefaultExecutionSpace;

// B = 1, T = 2 (M = 2), C = 3, OC = 2; gradients start at 0.5, 0.25 and (10, 20).
//   dinp(1, 0)    = 0.5  + dout(1, 0)·weight(0, 0) + dout(1, 1)·weight(1, 0)
//                 = 0.5  + 3·1 + 4·2 = 11.5
//   dweight(1, 2) = 0.25 + dout(0, 1)·inp(0, 2) + dout(1, 1)·inp(1, 2)
//                 = 0.25 + 2·1 + 4·2 = 10.25
//   dbias(1)      = 20   + dout(0, 1) + dout(1, 1) = 20 + 2 + 4 = 26
int run() {
  const float dout_values[2][2] = {{1, 2}, {3, 4}};
  const float inp_values[2][3] = {{1, 1, 1}, {0, 1, 2}};
  const float weight_values[2][3] = {{1, 0, -1}, {2, 1, 0}};

  llmk::Matrix<Space> dinp("dinp", 2, 3), dweight("dweight", 2, 3), dout("dout", 2, 2),
      inp("inp", 2, 3), weight("weight", 2, 3);
  llmk::Vector<Space> dbias("dbias", 2);
  auto h_dout = Kokkos::create_mirror_view(dout);
  auto h_inp = Kokkos::create_mirror_view(inp);
  auto h_weight = Kokkos::create_mirror_view(weight);
  for (int m = 0; m < 2; ++m)
    for (int o = 0; o < 2; ++o) h_dout(m, o) = dout_values[m][o];
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 3; ++c) {
      h_inp(r, c) = inp_values[r][c];
      h_weight(r, c) = weight_values[r][c];
    }
  }
  Kokkos::deep_copy(dout, h_dout);
  Kokkos::deep_copy(inp, h_inp);
  Kokkos::deep_copy(weight, h_weight);
  Kokkos::deep_copy(dinp, 0.5f);
  Kokkos::deep_copy(dweight, 0.25f);
  auto h_dbias = Kokkos::create_mirror_view(dbias);
  h_dbias(0) = 10;
  h_dbias(1) = 20;
  Kokkos::deep_copy(dbias, h_dbias);

  const Space exec;
  llmk::matmul_backward(exec, dinp, dweight, dbias, dout, inp, weight);
  exec.fence();

  auto h_dinp = Kokkos::create_mirror_view(dinp);
  auto h_dweight = Kokkos::create_mirror_view(dweight);
  Kokkos::deep_copy(h_dinp, dinp);
  Kokkos::deep_copy(h_dweight, dweight);
  Kokkos::deep_copy(h_dbias, dbias);
  // Small integers and halves: every implementation gets them exactly.
  const bool ok = h_dinp(1, 0) == 11.5f && h_dweight(1, 2) == 10.25f && h_dbias(1) == 26.0f;
  std::printf("llmk %s on %s: dinp(1,0) = %g (11.5), dweight(1,2) = %g (10.25), "
              "dbias(1) = %g (26)\n",
              ok ? "correct" : "WRONG", Space::name(), h_dinp(1, 0), h_dweight(1, 2), h_dbias(1));
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef KOKKOS_ENABLE_CUDA
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipping\n");
    return 77;
  }
#endif
  Kokkos::ScopeGuard kokkos(argc, argv);
  return run();
}
