// What a GradientReducer needs of an engine (NCCL, MPI): one reducer's
// connection to the other ranks. Declared here, in core; defined by the
// engines' backends (backends/nccl/, backends/mpi/), which the communicator
// factories of llmk/nccl.hpp and llmk/mpi.hpp create. The reducer's logic
// (bucket order, checks across ranks, timeouts) is written once, over this
// interface (core/dist/gradient_reducer.cpp).
#pragma once

#include <llmk/gradient_reducer.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llmk::detail {

// Bytes of one element of a gradient buffer.
constexpr std::size_t element_bytes(DType t) { return t == DType::f32 ? sizeof(float) : sizeof(bf16); }

template <class ExecSpace>
class Channel {
 public:
  virtual ~Channel() = default;

  // Throws std::invalid_argument if the engine cannot reduce the bucket
  // (add_bucket calls it, before anything is started).
  virtual void check_bucket(const std::string& op, const std::vector<GradientBuffer>& buffers,
                            const ReducerOptions& options) const = 0;
  // Starts reducing `buffers` in place (options' reduction and collective),
  // behind the work enqueued on the reducer's instance so far.
  virtual void start(const std::vector<GradientBuffer>& buffers, const ReducerOptions& options) = 0;
  // Starts gathering every rank's `words` (the same count on every rank) in
  // rank order; gathered() has them once done() says so.
  virtual void start_all_gather(const std::vector<std::uint64_t>& words) = 0;
  virtual std::vector<std::uint64_t> gathered() = 0;

  // Whether everything started so far has completed, without blocking;
  // throws std::runtime_error when the engine reports an error.
  virtual bool done() = 0;
  // After done(): what the engine leaves to do on completion, and the
  // instance's later work ordered after the reductions.
  virtual void join() = 0;
  // Gives up what is in flight (a timeout): unusable afterwards.
  virtual void abort() noexcept = 0;
};

}  // namespace llmk::detail
