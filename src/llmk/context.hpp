// llmk::Context: what one execution-space instance (a CUDA stream, a host
// space instance) needs across calls: the workspace memory of the kernels'
// temporaries and the vendor library handles (cuBLAS, cuBLASLt). Resources
// belong to an instance, never to a type, so calls on distinct instances never
// share them.
//
//   Kokkos::Cuda stream_exec(stream);
//   llmk::Context<Kokkos::Cuda> ctx(stream_exec);   // once per stream
//   llmk::matmul_backward(ctx, dinp, dweight, dbias, dout, inp, weight);
//
// The overloads taking an execution-space instance instead use an implicit
// context of that instance (one per CUDA stream; on host spaces one per
// instance with Kokkos 4, one per space with Kokkos 3, whose host instances
// share their state), created on first use and released at Kokkos::finalize.
//
// Thread safety: a context may be used from several host threads; calls on
// one context are serialized (they share its workspace), calls on distinct
// contexts run concurrently. Copies of a Context share one state.
// Lifetime: like a Kokkos::View, a Context must be destroyed before
// Kokkos::finalize (it holds device memory and, on Cuda, library handles).
#pragma once

#include <llmk/types.hpp>

#include <cstddef>
#include <memory>

namespace llmk {

namespace detail {
template <class ExecSpace>
class ContextState;
template <class ExecSpace>
struct ContextAccess;
}

template <class ExecSpace>
class Context {
 public:
  explicit Context(const ExecSpace& exec = ExecSpace());

  const ExecSpace& exec() const;

  // Hand the context memory it uses for temporaries instead of allocating:
  // `bytes` bytes that ExecSpace can access, which must stay valid while the
  // context is used. Without it (or after use_workspace(nullptr, 0)), the
  // context allocates on the first call that needs more than it holds and
  // keeps the memory for later calls.
  //  - Memory: ExecSpace's memory space, or (CUDA builds) managed memory
  //    (Kokkos::CudaUVMSpace, cudaMallocManaged) or pinned host memory
  //    (Kokkos::CudaHostPinnedSpace, cudaMallocHost), which both the GPU
  //    (slowly) and the host reach: the rule of the calls' arrays. Memory
  //    ExecSpace cannot access (a host pointer given to
  //    Context<Kokkos::Cuda>, a device pointer to a host space), or a null
  //    `data` with bytes > 0, throws std::invalid_argument naming 'data' and
  //    what was expected; the context then keeps what it had.
  //  - Any address: the calls align each temporary to 256 bytes within the
  //    buffer (cuBLASLt's alignment), and the *_workspace_bytes queries count
  //    the up to 255 bytes that aligning the first one takes, so a buffer of
  //    exactly a query's bytes is enough wherever it starts.
  //  - Size: a call that needs more than `bytes` (see
  //    matmul_backward_workspace_bytes) throws std::invalid_argument before it
  //    touches any output.
  //  - Its own memory: a call with an argument (input or output) that
  //    overlaps any byte of the buffer, whether the call needs workspace or
  //    not, throws std::invalid_argument naming that argument, before it
  //    touches any output.
  void use_workspace(void* data, std::size_t bytes);
  // Bytes of workspace the context holds now (allocated or given).
  std::size_t workspace_bytes() const;

  detail::ContextState<ExecSpace>& state() const { return *state_; }

 private:
  friend struct detail::ContextAccess<ExecSpace>;
  explicit Context(std::shared_ptr<detail::ContextState<ExecSpace>> state);
  std::shared_ptr<detail::ContextState<ExecSpace>> state_;
};

namespace detail {
// The context of an instance, for the entry points that take an
// execution-space instance (each operation's header defines them with it):
// one per instance (compat.hpp's instance_key), made on first use, released
// at Kokkos::finalize. Defined in core/context.cpp.
template <class ExecSpace>
Context<ExecSpace> implicit_context(const ExecSpace& exec);
}  // namespace detail

}  // namespace llmk
