// run_data_parallel (data_parallel.hpp): the example on MPI_COMM_WORLD's
// ranks. The reducer's engine is the execution space's: MPI for a host
// build, NCCL for a CUDA build (one GPU per rank, its id sent by MPI).
#include "backward.hpp"
#include "compare.hpp"
#include "data_parallel.hpp"
#include "timing.hpp"

#include <llmk/mpi.hpp>
#ifdef KOKKOS_ENABLE_CUDA
#include <llmk/nccl.hpp>
#endif

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace gpt2 {

namespace {

using Exec = Kokkos::DefaultExecutionSpace;

#ifdef KOKKOS_ENABLE_CUDA
// One NCCL communicator over MPI_COMM_WORLD's ranks, each on its GPU.
class NcclWorld {
 public:
  NcclWorld(int rank, int ranks) {
    ncclUniqueId id;
    if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) throw std::runtime_error("ncclGetUniqueId failed");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    const ncclResult_t status = ncclCommInitRank(&comm_, ranks, id, rank);
    if (status != ncclSuccess) {
      throw std::runtime_error(std::string("ncclCommInitRank failed: ") + ncclGetErrorString(status));
    }
  }
  ~NcclWorld() { ncclCommDestroy(comm_); }
  llmk::Communicator<Exec> communicator() const { return llmk::nccl_communicator(comm_); }

 private:
  ncclComm_t comm_ = nullptr;
};
#endif

// FNV-1a of every gradient's values, from every rank: all equal?
bool equal_on_every_rank(const Doubles& grads, int ranks) {
  std::uint64_t h = 1469598103934665603ull;
  for (const auto& [name, values] : grads) {
    if (name == "grad.encoded") continue;  // per rank: its own sequences
    for (double v : values) {
      unsigned char bytes[sizeof v];
      std::memcpy(bytes, &v, sizeof v);
      for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
    }
  }
  std::vector<std::uint64_t> all(static_cast<std::size_t>(ranks));
  MPI_Allgather(&h, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (std::uint64_t x : all) {
    if (x != all[0]) return false;
  }
  return true;
}

template <class T>
double median_step_ms(Gpt2Backward<Exec, T>& backward, int repeats) {
  std::vector<double> ms;
  Kokkos::Timer timer;
  for (int r = 0; r <= repeats; ++r) {
    backward.reset();
    backward.exec().fence();
    MPI_Barrier(MPI_COMM_WORLD);  // every rank starts the step together
    timer.reset();
    backward.run();
    backward.exec().fence();
    if (r > 0) ms.push_back(timer.seconds() * 1e3);  // the first: warm-up
  }
  return median(ms);
}

}  // namespace

template <class T>
int run_data_parallel(const HostInputs& global, const Doubles& want,
                      const std::vector<double>& want_losses, const DataParallelRun& how) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const Config& g = global.cfg;
  const HostInputs local = batch_slice(global, rank, ranks);
  const Config& c = local.cfg;
  if (rank == 0) {
    std::printf("data parallel on %d ranks (%s): B %lld = %d x %lld sequences, the gradients "
                "summed by llmk::GradientReducer\n",
                ranks, Exec::name(), (long long)g.B, ranks, (long long)c.B);
  }
  Exec exec;
#ifdef KOKKOS_ENABLE_CUDA
  const NcclWorld world(rank, ranks);
  const llmk::Communicator<Exec> comm = world.communicator();
#else
  const llmk::Communicator<Exec> comm = llmk::mpi_communicator<Exec>(MPI_COMM_WORLD);
#endif
  Gpt2Backward<Exec, T> backward(exec, c, how.materialized, how.impls);
  backward.set_loss_positions(g.B * g.T);
  backward.load(local);
  int status = 0;
  {
    llmk::GradientReducer<Exec> overlapped(exec, comm);
    backward.reduce_gradients(&overlapped, true);
    backward.reset();
    backward.run();
    const Doubles got = backward.gradients();
    const auto rows = compare_gradients(c, got, reference_slice(want, g, rank, ranks), how.tolerance);
    bool ok = true;
    for (const Comparison& r : rows) ok = ok && r.pass;
    const double loss_error = relative_l2(backward.losses(), losses_slice(want_losses, g, rank, ranks));
    ok = ok && loss_error <= how.tolerance;
    if (rank == 0) {
      std::printf("rank 0's gradients (the parameters' summed over the ranks; grad.encoded its own "
                  "sequences') against the single-process reference of the whole batch:\n");
      print_comparisons(stdout, rows, how.tolerance);
      std::printf("%-16s %12s %12.4e %12s  %s\n", "losses", "", loss_error, "", ok ? "ok" : "FAIL");
    }
    // llmk's own single-process run of the whole batch, beside it.
    double worst = 0;
    {
      Gpt2Backward<Exec, T> whole(exec, g, how.materialized, how.impls);
      whole.load(global);
      whole.reset();
      whole.run();
      const Doubles single = reference_slice(whole.gradients(), g, rank, ranks);
      for (const auto& [name, values] : single) worst = std::max(worst, relative_l2(got.at(name), values));
    }
    ok = ok && worst <= how.tolerance;
    if (rank == 0) {
      std::printf("against llmk's single-process run of the whole batch: largest rel L2 %.4e  %s\n",
                  worst, worst <= how.tolerance ? "ok" : "FAIL");
    }
    const bool same = equal_on_every_rank(got, ranks);
    int mine = ok && same ? 1 : 0, every = 0;
    MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) {
      std::printf("parameter gradients bitwise equal on all %d ranks: %s\n", ranks, same ? "yes" : "NO");
    }
    if (!ok) std::printf("rank %d: a gradient is off\n", rank);
    status = every ? 0 : 1;

    if (how.repeats > 0) {
      const double with_overlap = median_step_ms(backward, how.repeats);
      llmk::GradientReducer<Exec> after(exec, comm);
      backward.reduce_gradients(&after, false);
      const double reduce_after = median_step_ms(backward, how.repeats);
      backward.reduce_gradients(nullptr, false);
      const double alone = median_step_ms(backward, how.repeats);
      if (rank == 0) {
        const double reduction = reduce_after - alone;
        std::printf("\nstep time, median of %d (ms): backward alone %.4f, reduction after it %.4f, "
                    "overlapped %.4f\n",
                    how.repeats, alone, reduce_after, with_overlap);
        std::printf("reduction %.4f ms; hidden behind the backward: %.0f %%\n", reduction,
                    reduction > 0 ? 100.0 * (reduce_after - with_overlap) / reduction : 0.0);
      }
    }
  }
  std::printf("%s", rank == 0 ? (status == 0 ? "every gradient within tolerance\n"
                                             : "FAILED: a gradient is off\n")
                              : "");
  return status;
}

template int run_data_parallel<float>(const HostInputs&, const Doubles&, const std::vector<double>&,
                                      const DataParallelRun&);
template int run_data_parallel<llmk::bf16>(const HostInputs&, const Doubles&,
                                           const std::vector<double>&, const DataParallelRun&);

}  // namespace gpt2
