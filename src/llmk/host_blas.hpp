// llmk::host_blas(): which BLAS this process runs on the host and how it
// threads, as that library reports itself at run time.
//
// Why it matters: on a host space every implementation llmk calls must share
// one pool of threads. A BLAS with its own pthreads keeps them spinning after
// each GEMM while Kokkos' OpenMP threads run the next operation: on a 16-core
// Xeon GPT-2's whole backward took 2.5 s that way against 0.77 s with the same
// OpenBLAS built on OpenMP (docs/cpu.md). So "auto" passes over the BLAS-backed
// implementation (matmul's "kokkoskernels") unless host_blas_runs_auto() says
// it may run there; it can still be named in options.impl.
//
//   const llmk::HostBlas blas = llmk::host_blas();
//   std::printf("%s, %s threads, kernels %s\n", blas.library.c_str(),
//               blas.threading.c_str(), blas.core.c_str());
#pragma once

#include <string>

namespace llmk {

struct HostBlas {
  // "OpenBLAS 0.3.21", or "none" (no BLAS in the process), or "unknown" (a
  // BLAS that does not say what it is: only OpenBLAS's own queries are asked).
  std::string library;
  // "openmp" (OpenMP's runtime: the threads Kokkos' OpenMP space uses),
  // "pthreads" (its own pool), "sequential" (one thread), or "unknown".
  std::string threading;
  // The kernels it chose for this CPU ("SkylakeX", "Haswell", ...): OpenBLAS's
  // run-time choice in DYNAMIC_ARCH builds, OPENBLAS_CORETYPE overriding it.
  std::string core;
  int threads = 0;  // threads it would use for a large call now (0: unknown)
  // The kernels are an SSE-era fallback on a CPU that has AVX2 or AVX-512:
  // OpenBLAS 0.3.21 (Debian 12) does not know Intel's Emerald Rapids and
  // falls back to Prescott (OPENBLAS_CORETYPE=SapphireRapids fixes it).
  bool fallback_core = false;
};

// What the process's BLAS says of itself (read once; it cannot change while
// the process runs, except for the thread count, which is read on each call).
HostBlas host_blas();

// Whether "auto" may choose a BLAS-backed implementation on a host space of
// `concurrency` threads: the BLAS threads on OpenMP's runtime (or is
// sequential and the space has one thread), and its kernels fit the CPU.
bool host_blas_runs_auto(const HostBlas& blas, int concurrency);

}  // namespace llmk
