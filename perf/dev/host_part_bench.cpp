// Development benchmark of the host's part of a call: the entry's checks
// (core/op/entry.hpp: binding the extents, storage, memory and element
// types), the implementation's choice and the context's lock, on
// Kokkos::Serial with sizes so small that the kernels cost little beside
// them. ns a call, the best of 10 runs of 20 000 calls each. The host part
// on a GPU adds the launches and the CUDA pointer queries (llmk-perf
// --device-time, "host us"). Not part of the build: perf/dev/host_part_bench.sh
// builds it against an installed llmk.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <llmk/attention_backward.hpp>
#include <llmk/gelu_backward.hpp>
#include <llmk/layernorm_backward.hpp>

namespace {

using Space = Kokkos::Serial;
using Matrix = Kokkos::View<float**, Kokkos::LayoutRight, Space>;
using Vector = Kokkos::View<float*, Kokkos::LayoutRight, Space>;

template <class F>
void time_calls(const char* name, F&& call) {
  for (int i = 0; i < 1000; ++i) call();
  constexpr int calls = 20000;
  double best = 1e9;
  for (int run = 0; run < 10; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("%-20s %7.0f ns a call\n", name, 1e9 * best / calls);
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    llmk::Context<Space> ctx{Space()};
    // Two rows of C = 4 (attention: NH = 1, T = 2, C = 2).
    Matrix inp("inp", 2, 4), dout("dout", 2, 4), dinp("dinp", 2, 4);
    time_calls("gelu_backward", [&] { llmk::gelu_backward(ctx, dinp, dout, inp); });
    Vector weight("weight", 4), dweight("dweight", 4), dbias("dbias", 4), mean("mean", 2),
        rstd("rstd", 2);
    time_calls("layernorm_backward", [&] {
      llmk::layernorm_backward(ctx, dinp, dweight, dbias, dout, inp, weight, mean, rstd);
    });
    Matrix dqkv("dqkv", 2, 6), qkv("qkv", 2, 6), dout_att("dout", 2, 2);
    Kokkos::View<float****, Kokkos::LayoutRight, Space> att("att", 1, 1, 2, 2);
    time_calls("attention_backward",
               [&] { llmk::attention_backward(ctx, dqkv, dout_att, qkv, att); });
  }
  Kokkos::finalize();
}
