#include "onednn_state.hpp"

#include <ops/matmul_backward/onednn.hpp>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <unordered_map>

#ifdef _OPENMP
#include <omp.h>
#endif

// Debian 12's libdnnl2 is built on OpenMP (DNNL_CPU_RUNTIME_OMP, libgomp.so.1
// in its ldd): its threads are Kokkos' OpenMP threads. backends/CMakeLists.txt
// refuses another runtime; this says so again where it matters.
#if DNNL_CPU_RUNTIME != DNNL_RUNTIME_OMP
#error "llmk's onednn backend needs a oneDNN built on OpenMP (DNNL_CPU_RUNTIME_OMP)"
#endif

namespace llmk::backends {
namespace {

// The calling thread's OpenMP thread count set to n while it lives (oneDNN's
// OpenMP runtime opens its regions with omp_get_max_threads() threads), and
// put back after. Without OpenMP (a Serial-only Kokkos) there is nothing to set.
class OmpThreads {
 public:
  explicit OmpThreads(int n) {
#ifdef _OPENMP
    saved_ = omp_get_max_threads();
    if (n > 0 && n != saved_) omp_set_num_threads(n);
#else
    (void)n;
#endif
  }
  ~OmpThreads() {
#ifdef _OPENMP
    if (omp_get_max_threads() != saved_) omp_set_num_threads(saved_);
#endif
  }
  OmpThreads(const OmpThreads&) = delete;
  OmpThreads& operator=(const OmpThreads&) = delete;

 private:
  int saved_ = 0;
};

const char* type_name(const dnnl::memory::data_type t) {
  switch (t) {
    case dnnl::memory::data_type::f32: return "f32";
    case dnnl::memory::data_type::bf16: return "bf16";
    default: return "other";
  }
}

// The product that failed, in the error: which of matmul's two products, its
// types and sizes, so that a refusal (no kernel for bf16 on a CPU without
// AVX-512, say) says what was asked and what to choose instead.
[[noreturn]] void rethrow(const dnnl::error& e, const char* what, const OnednnGemm& g) {
  throw std::runtime_error(
      std::string("llmk: matmul_backward 'onednn': oneDNN's ") + what + " failed for " +
      type_name(g.a_type) + " x " + type_name(g.b_type) + " -> " + type_name(g.c_type) + ", " +
      std::to_string(g.m) + " x " + std::to_string(g.k) + " times " + std::to_string(g.k) +
      " x " + std::to_string(g.n) + (g.accumulate ? ", accumulated" : "") + ": " + e.what() +
      " (status " + std::to_string(int(e.status)) +
      "; oneDNN may have no kernel for these types on this CPU: options.impl 'auto' "
      "passes onednn over where its kernels do not fit the CPU)");
}

}  // namespace

void OnednnState::Free::operator()(void* p) const { std::free(p); }

const OnednnState::Made& OnednnState::made(const OnednnGemm& g) {
  const auto found = primitives_.find(g);
  if (found != primitives_.end()) return found->second;
  using dims = dnnl::memory::dims;
  Made m;
  m.a = dnnl::memory::desc(dims{g.m, g.k}, g.a_type, dims{g.a_rows, g.a_cols});
  m.b = dnnl::memory::desc(dims{g.k, g.n}, g.b_type, dims{g.b_rows, g.b_cols});
  m.c = dnnl::memory::desc(dims{g.m, g.n}, g.c_type, dims{g.c_rows, 1});
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (g.accumulate) {
    // C = product + C, summed in float before C's one rounding.
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attr.set_post_ops(ops);
  }
  try {
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(m.a, m.b, m.c), attr, engine_);
    m.scratchpad = pd.scratchpad_desc();
    m.primitive = dnnl::matmul(pd);
  } catch (const dnnl::error& e) {
    rethrow(e, "matmul primitive creation", g);
  }
  return primitives_.emplace(g, std::move(m)).first->second;
}

void OnednnState::run(const OnednnGemm& g, const void* a, const void* b, void* c) {
  const OmpThreads threads(g.threads);
  const Made& m = made(g);
  const std::size_t bytes = m.scratchpad.get_size();
  if (bytes > scratchpad_bytes_) {
    scratchpad_.reset();
    constexpr std::size_t kAlign = 64;  // a cache line, as oneDNN's own buffers
    void* p = std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
    if (p == nullptr)
      throw std::runtime_error("llmk: allocating oneDNN's scratchpad of " +
                               std::to_string(bytes) + " bytes failed");
    scratchpad_.reset(static_cast<unsigned char*>(p));
    scratchpad_bytes_ = bytes;
  }
  try {
    // Memory objects over the caller's arrays (no copies); oneDNN's API takes
    // non-const handles, and reads a and b only.
    dnnl::memory ma(m.a, engine_, const_cast<void*>(a));
    dnnl::memory mb(m.b, engine_, const_cast<void*>(b));
    dnnl::memory mc(m.c, engine_, c);
    dnnl::memory ms(m.scratchpad, engine_, scratchpad_.get());
    m.primitive.execute(stream_, {{DNNL_ARG_SRC, ma},
                                  {DNNL_ARG_WEIGHTS, mb},
                                  {DNNL_ARG_DST, mc},
                                  {DNNL_ARG_SCRATCHPAD, ms}});
    stream_.wait();
  } catch (const dnnl::error& e) {
    rethrow(e, "matmul", g);
  }
}

}  // namespace llmk::backends

namespace llmk::op::matmul_backward {

bool onednn_fits_cpu(const bool bf16_inputs) {
  // What oneDNN dispatches on is fixed for the process: ask once.
  static const unsigned isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto has = [](unsigned features) { return (isa & features) == features; };
  return bf16_inputs ? has(unsigned(dnnl::cpu_isa::avx512_core_bf16))
                     : has(unsigned(dnnl::cpu_isa::avx512_core));
}

bool onednn_runs_bf16() { return onednn_fits_cpu(true); }

}  // namespace llmk::op::matmul_backward
