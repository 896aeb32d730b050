// The oneDNN resources of one context (ContextState::resource), made on its
// first "onednn" call and destroyed with it: a CPU engine and stream, the
// matmul primitives made so far (one per shape, layout, types and update),
// and the scratchpad they run with. Used only under the context's lock.
//
// Why a cache: making a primitive costs far more than a small product
// (oneDNN picks a kernel and generates its code); GPT-2's backward asks for
// the same dozen products in every layer. Why the context's: llmk keeps no
// global mutable state, and oneDNN's own primitive cache (global, on by
// default) is left as the library configures it; the scratchpad is the
// context's too (scratchpad_mode::user), not oneDNN's per-thread buffer.
//
// Threads: Debian's libdnnl runs on OpenMP's runtime (libgomp; checked when
// configuring, backends/CMakeLists.txt), so its parallel regions open on the
// same pool as Kokkos' OpenMP space. A product runs on as many threads as the
// calling space has (Serial: one), the OpenMP count set around the primitive's
// making and running (it decides its blocking by the count it is made with).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

namespace llmk::backends {

// One product C (m×n) ⟵ A (m×k) · B (k×n) [+ C], each operand given by its
// element type and the strides of its two dimensions (a transpose is strides
// swapped: no copies); C's second stride is 1.
struct OnednnGemm {
  std::int64_t m, n, k;
  std::int64_t a_rows, a_cols, b_rows, b_cols, c_rows;  // strides, in elements
  dnnl::memory::data_type a_type, b_type, c_type;
  bool accumulate;  // C += product (oneDNN's sum post-op) instead of C = product
  int threads;

  auto tie() const {
    return std::tie(m, n, k, a_rows, a_cols, b_rows, b_cols, c_rows, a_type, b_type, c_type,
                    accumulate, threads);
  }
  bool operator<(const OnednnGemm& other) const { return tie() < other.tie(); }
};

class OnednnState {
 public:
  template <class ExecSpace>
  explicit OnednnState(const ExecSpace& exec) : threads_(exec.concurrency()) {}
  OnednnState(const OnednnState&) = delete;
  OnednnState& operator=(const OnednnState&) = delete;

  int threads() const { return threads_; }

  // Runs g on a, b, c (host pointers of g's types); returns when c is
  // written. Throws std::runtime_error (dnnl::error's status and message)
  // where oneDNN has no implementation for g or fails.
  void run(const OnednnGemm& g, const void* a, const void* b, void* c);

 private:
  struct Made {
    dnnl::matmul primitive;
    dnnl::memory::desc a, b, c, scratchpad;
  };
  const Made& made(const OnednnGemm& g);

  int threads_;
  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream_{engine_};
  std::map<OnednnGemm, Made> primitives_;
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<unsigned char, Free> scratchpad_;
  std::size_t scratchpad_bytes_ = 0;
};

}  // namespace llmk::backends
