// llmk::GradientReducer: data-parallel training's sum of gradients across
// ranks (processes, one GPU or one CPU socket each), started bucket by bucket
// while the backward pass is still computing the rest, through an existing
// engine: NCCL on Kokkos::Cuda (llmk/nccl.hpp), MPI on the host spaces
// (llmk/mpi.hpp). llmk itself links neither; the llmk::nccl and llmk::mpi
// libraries do (built with LLMK_ENABLE_NCCL / LLMK_ENABLE_MPI).
//
//   llmk::Communicator<Kokkos::Cuda> comm = llmk::nccl_communicator(nccl_comm);
//   llmk::GradientReducer<Kokkos::Cuda> reducer(exec, comm);   // exec: the backward's stream
//   int last_layer = reducer.add_bucket({llmk::gradient("fcprojw", dfcprojw), ...});
//   ...                                                         // once, in the same order on every rank
//   for (each step) {
//     ... the last layer's backward, enqueued on exec ...
//     reducer.ready(last_layer);     // its reduction starts behind that work, on its own stream
//     ... the other layers' backward, each followed by ready() of its bucket ...
//     reducer.wait();                // every bucket reduced; work on exec after this sees them
//     ... the optimizer ...
//   }
//
// Order: reductions are issued in bucket order (bucket 0 first, as
// registered), whatever order ready() is called in: every rank issues the
// same collectives in the same order, which NCCL and MPI both require. A
// bucket made ready before the ones registered ahead of it waits for them.
// So register buckets in the order the backward pass finishes them (the last
// layer first).
//
// Collectives (ReducerOptions):
//   all_reduce      every rank ends with the sum (or average) of all ranks'
//                   buffers, in place.
//   reduce_scatter  rank r ends with elements [r·n/R, (r+1)·n/R) of each
//                   buffer of n elements reduced, in place (for a sharded
//                   optimizer, ZeRO-1); the rest of the buffer is left
//                   unspecified. n must be a multiple of the R ranks.
//
// Determinism: with all_reduce, every rank ends with bitwise-identical
// gradients. NCCL's ring and tree algorithms reduce each element along one
// path and broadcast the result; Open MPI's allreduce algorithms (recursive
// doubling, ring, Rabenseifner) either do the same or combine the same two
// partial sums in both orders, which IEEE addition makes equal. The MPI
// standard only recommends it: tests/test_gradient_reducer_mpi.cpp checks it.
// Run to run, both give the same bytes for the same inputs, sizes and rank
// count (their algorithm choice depends on nothing else); with 2 ranks the
// result equals one process adding rank 0's buffer and rank 1's (one
// addition, commutative). bf16 buffers are summed in float and rounded to
// bf16 once per addition.
//
// Failure: a collective that does not complete within
// ReducerOptions::timeout_seconds (a rank died, or never reached it) makes
// wait() (or add_bucket()) throw std::runtime_error on the ranks that wait,
// naming the bucket, instead of hanging; the communicator is unusable
// afterwards (NCCL's is aborted; with MPI, call MPI_Abort). Buckets whose
// buffers differ across ranks (counts, types) are refused by add_bucket() on
// every rank with std::invalid_argument naming the bucket and each rank's
// sizes.
//
// Thread safety: one reducer, one host thread (with MPI: the thread MPI was
// initialized for). Several reducers may share a communicator only if they
// never have reductions in flight at the same time.
#pragma once

#include <llmk/types.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace llmk {

enum class Reduction { sum, average };
enum class Collective { all_reduce, reduce_scatter };

struct ReducerOptions {
  Reduction reduction = Reduction::sum;
  Collective collective = Collective::all_reduce;
  // How long wait() and add_bucket() wait for the other ranks before giving up.
  double timeout_seconds = 300;
};

// One gradient buffer of a bucket: `count` elements of `type` at `data`, in
// memory the reducer's execution space can access; reduced in place.
struct GradientBuffer {
  std::string name;  // for messages
  void* data = nullptr;
  std::size_t count = 0;
  DType type = DType::f32;
};

// A GradientBuffer of a contiguous View (any rank), or of raw memory.
template <class View>
GradientBuffer gradient(std::string name, const View& v) {
  static_assert(!std::is_const_v<typename View::value_type>, "gradients are reduced in place");
  if (!v.span_is_contiguous()) {
    throw std::invalid_argument("llmk::gradient: '" + name + "' is not contiguous");
  }
  return {std::move(name), v.data(), v.span(), dtype_of<typename View::value_type>()};
}
template <class T>
GradientBuffer gradient(std::string name, T* data, std::size_t count) {
  return {std::move(name), data, count, dtype_of<T>()};
}

namespace detail {
template <class ExecSpace>
class Channel;
}

// The ranks that share gradients, as one engine connects them (made by
// nccl_communicator or mpi_communicator). Copies share the connection.
template <class ExecSpace>
class Communicator {
 public:
  using ChannelFactory = std::function<std::unique_ptr<detail::Channel<ExecSpace>>(const ExecSpace&)>;
  Communicator(int rank, int size, std::string engine, ChannelFactory open)
      : rank_(rank), size_(size), engine_(std::move(engine)), open_(std::move(open)) {}

  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& engine() const { return engine_; }  // "NCCL" or "MPI"
  // The reducer's own connection: its stream, events, datatypes.
  std::unique_ptr<detail::Channel<ExecSpace>> open(const ExecSpace& exec) const { return open_(exec); }

 private:
  int rank_, size_;
  std::string engine_;
  ChannelFactory open_;
};

template <class ExecSpace>
class GradientReducer {
 public:
  GradientReducer(const ExecSpace& exec, Communicator<ExecSpace> comm, ReducerOptions options = {});
  // Waits for what is still in flight (errors are swallowed: call wait()).
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Registers a bucket; collective: every rank calls it, in the same order,
  // with buffers of the same counts and types (checked across ranks). Its
  // buffers must not overlap each other or another bucket's. Returns the
  // bucket's index (0, 1, ...). Not while a step is under way.
  int add_bucket(std::vector<GradientBuffer> buffers);

  // Every write of this step to the bucket's buffers has been enqueued on the
  // reducer's execution-space instance (or, on host spaces, done): its
  // reduction may start. Once per bucket per step.
  void ready(int bucket);

  // Ends the step: issues what ready() left waiting, waits until every
  // bucket's reduction has completed (the host blocks, at most
  // timeout_seconds), and orders the instance's later work after them.
  // Throws std::logic_error if a bucket was not made ready this step (after
  // waiting for the others), std::runtime_error on a timeout or an engine error.
  void wait();

  int buckets() const;
  const Communicator<ExecSpace>& communicator() const { return comm_; }

 private:
  struct Impl;
  Communicator<ExecSpace> comm_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmk
