// llmk::host_blas(): asked through dlsym, so llmk itself links no BLAS and
// reports whichever one the process loaded (KokkosKernels' TPL, a user's).
#include <llmk/host_blas.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <string>

namespace llmk {
namespace {

template <class F>
F* find(const char* symbol) {
  return reinterpret_cast<F*>(dlsym(RTLD_DEFAULT, symbol));
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// OpenBLAS's x86 cores without AVX (its generic and SSE-era kernels): on a CPU
// with AVX2 such a choice is a failed detection, 4-8x below the CPU's peak.
bool sse_era_core(const std::string& core) {
  static const char* const kOld[] = {"prescott", "core2",     "penryn",  "dunnington", "nehalem",
                                     "atom",     "katmai",    "coppermine", "northwood",
                                     "banias",   "opteron",   "barcelona", "bobcat", "nano",
                                     "generic"};
  const std::string c = lower(core);
  for (const char* old : kOld) {
    if (c == old || c.rfind(std::string(old) + "_", 0) == 0) return true;
  }
  return false;
}

bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

HostBlas read_host_blas() {
  HostBlas blas;
  using GetInt = int();
  using GetText = char*();
  GetInt* parallel = find<GetInt>("openblas_get_parallel");
  GetText* corename = find<GetText>("openblas_get_corename");
  GetText* config = find<GetText>("openblas_get_config");
  if (parallel && corename) {
    // openblas_get_config() starts "OpenBLAS 0.3.21 ..." from 0.3.10 on.
    const std::string text = config ? config() : "";
    std::string version;
    if (text.rfind("OpenBLAS ", 0) == 0) version = text.substr(9, text.find(' ', 9) - 9);
    blas.library = version.empty() ? "OpenBLAS" : "OpenBLAS " + version;
    switch (parallel()) {  // OpenBLAS: 0 sequential, 1 pthreads, 2 OpenMP
      case 0: blas.threading = "sequential"; break;
      case 1: blas.threading = "pthreads"; break;
      case 2: blas.threading = "openmp"; break;
      default: blas.threading = "unknown";
    }
    blas.core = corename();
    blas.fallback_core = sse_era_core(blas.core) && cpu_has_avx2();
  } else if (find<void>("sgemm_") || find<void>("cblas_sgemm")) {
    blas.library = "unknown";
    blas.threading = "unknown";
    blas.core = "unknown";
  } else {
    blas.library = "none";
    blas.threading = "none";
    blas.core = "none";
  }
  return blas;
}

}  // namespace

HostBlas host_blas() {
  static const HostBlas fixed = read_host_blas();  // immutable after the first call
  HostBlas blas = fixed;
  // OpenBLAS on OpenMP follows omp_get_max_threads() on every call; pthreads
  // keeps the count it started with (or was set to).
  using GetInt = int();
  if (GetInt* threads = find<GetInt>("openblas_get_num_threads")) blas.threads = threads();
  return blas;
}

bool host_blas_runs_auto(const HostBlas& blas, const int concurrency) {
  if (blas.fallback_core) return false;
  return blas.threading == "openmp" || (blas.threading == "sequential" && concurrency == 1);
}

}  // namespace llmk
