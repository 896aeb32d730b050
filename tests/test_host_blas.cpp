// The host BLAS and Kokkos' threads (llmk/host_blas.hpp), named
// HostBlas.<case> in each space's binary:
//  - SharesKokkosThreads: the BLAS this process loaded (KokkosKernels' TPL,
//    the reference's OpenBLAS) is OpenBLAS on OpenMP's runtime, so that its
//    threads are the ones Kokkos' OpenMP space runs on. It FAILS where a
//    pthreads or an unknown BLAS was linked (e.g. LD_LIBRARY_PATH pointing at
//    Debian's openblas-pthread: planted once, docs/cpu.md), which is what
//    made GPT-2's backward 3x slower on 16 cores. And on OpenMP, OpenBLAS
//    follows the space's thread count.
//  - AutoRule: host_blas_runs_auto() on made-up reports: OpenMP yes,
//    pthreads no, sequential only with one thread, an SSE-era core no,
//    an unknown BLAS no.
//  - AutoFollowsTheRule: matmul's "auto" on this space, in float32: tiled
//    where the library's infos say "auto" passes kokkoskernels and onednn
//    over (ImplInfo::auto_passes_over: tiled's AVX-512 tile is compiled
//    into the library; these tests are built without -march=native), else
//    kokkoskernels exactly where it is compiled, runs here and the rule
//    allows it, else onednn exactly where it is compiled and its kernels fit
//    the CPU (Onednn::auto_skips); in bf16 (where kokkoskernels never runs)
//    onednn exactly where it is compiled and fits.
//  - OnednnBf16WhereTheCpuRunsIt: onednn's info lists bf16 exactly where
//    its kernels run it natively (onednn_runs_bf16); elsewhere a bf16 call
//    of "onednn" is refused before it writes (run here under
//    ONEDNN_MAX_CPU_ISA=AVX512_CORE or AVX2 to see that side).
#include "support/test_space.hpp"

#include <gtest/gtest.h>
#include <llmk/host_blas.hpp>
#include <llmk/matmul_backward.hpp>
#include <ops/matmul_backward/onednn.hpp>  // Onednn::auto_skips: the rule "auto" follows

#include <Kokkos_Core.hpp>

#include <string>

namespace {

using Space = llmk_test::TestSpace;
constexpr bool kHostSpace = Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible;

TEST(HostBlas, SharesKokkosThreads) {
  const llmk::HostBlas blas = llmk::host_blas();
  if (blas.library == "none") GTEST_SKIP() << "no BLAS in this process";
  EXPECT_EQ(blas.library.rfind("OpenBLAS", 0), 0u)
      << "the process runs a BLAS that does not report its threading ('" << blas.library
      << "'): \"auto\" will not use it";
  EXPECT_EQ(blas.threading, "openmp")
      << blas.library << " threads with '" << blas.threading
      << "': its threads are not Kokkos' OpenMP threads (link Debian's libopenblas-openmp-dev; "
         "docs/cpu.md)";
#ifdef KOKKOS_ENABLE_OPENMP
  if (blas.threading == "openmp") {
    // OpenBLAS on OpenMP sizes itself by omp_get_max_threads() at each call;
    // Kokkos' OpenMP space set that to its pool's size when it started.
    const int pool = Kokkos::OpenMP().concurrency();
    EXPECT_TRUE(blas.threads == pool || blas.threads == 0)
        << "OpenBLAS would use " << blas.threads << " threads, Kokkos' OpenMP pool has " << pool;
  }
#endif
}

TEST(HostBlas, AutoRule) {
  llmk::HostBlas blas;
  blas.library = "OpenBLAS 0.3.21";
  blas.core = "SkylakeX";
  blas.threading = "openmp";
  EXPECT_TRUE(llmk::host_blas_runs_auto(blas, 16));
  EXPECT_TRUE(llmk::host_blas_runs_auto(blas, 1));
  blas.threading = "pthreads";
  EXPECT_FALSE(llmk::host_blas_runs_auto(blas, 16));
  EXPECT_FALSE(llmk::host_blas_runs_auto(blas, 1));
  blas.threading = "sequential";
  EXPECT_TRUE(llmk::host_blas_runs_auto(blas, 1));
  EXPECT_FALSE(llmk::host_blas_runs_auto(blas, 2));
  blas.threading = "openmp";
  blas.core = "Prescott";
  blas.fallback_core = true;
  EXPECT_FALSE(llmk::host_blas_runs_auto(blas, 16));
  llmk::HostBlas unknown;
  unknown.library = unknown.threading = unknown.core = "unknown";
  EXPECT_FALSE(llmk::host_blas_runs_auto(unknown, 16));
}

TEST(HostBlas, AutoFollowsTheRule) {
  if (!kHostSpace) GTEST_SKIP() << "the host BLAS rule is for host spaces";
  const bool blas_compiled = llmk::available<llmk::MatmulBackward, Space>("kokkoskernels");
  const bool may = llmk::host_blas_runs_auto(llmk::host_blas(), Space().concurrency());
  const bool onednn_compiled = llmk::available<llmk::MatmulBackward, Space>("onednn");
  const auto passed_over = [](const std::string& impl, const std::string& precision) {
    for (const llmk::ImplInfo& info : llmk::impls<llmk::MatmulBackward>())
      if (info.name == impl)
        for (const std::string& p : info.auto_passes_over)
          if (p == precision) return true;
    return false;
  };
  for (const bool bf16 : {false, true}) {
    SCOPED_TRACE(bf16 ? "bf16" : "fp32");
    namespace mb = llmk::op::matmul_backward;
    const bool tiled_leads =
        !bf16 && passed_over("kokkoskernels", "fp32") && passed_over("onednn", "fp32");
    const bool blas = !bf16 && !tiled_leads && blas_compiled && may;
    const bool onednn =
        !blas && !tiled_leads && onednn_compiled &&
        (bf16 ? mb::Onednn::runs_here<mb::Bf16>() && !mb::Onednn::auto_skips<mb::Bf16>({})
              : !mb::Onednn::auto_skips<mb::Fp32>({}));
    const std::string chosen = llmk::auto_impl<llmk::MatmulBackward, Space>(bf16 ? "bf16" : "fp32");
    EXPECT_EQ(chosen == "kokkoskernels", blas)
        << "auto chose '" << chosen << "'; kokkoskernels " << (blas_compiled ? "is" : "is not")
        << " compiled; the host BLAS: " << llmk::host_blas().library << ", "
        << llmk::host_blas().threading << " threads, kernels " << llmk::host_blas().core;
    if (tiled_leads) EXPECT_EQ(chosen, "tiled");
    EXPECT_EQ(chosen == "onednn", onednn)
        << "auto chose '" << chosen << "'; onednn " << (onednn_compiled ? "is" : "is not")
        << " compiled" << (blas ? ", and the host BLAS comes first" : "");
  }
}

TEST(HostBlas, OnednnBf16WhereTheCpuRunsIt) {
  if (!llmk::available<llmk::MatmulBackward, Space>("onednn"))
    GTEST_SKIP() << "onednn is not compiled in or not available on " << Space::name();
  bool listed = false;
  for (const llmk::MatmulBackwardImplInfo& info : llmk::impls<llmk::MatmulBackward>())
    if (info.name == "onednn")
      for (const std::string& p : info.precisions) listed = listed || p == "bf16";
  // (Through the trait: onednn_runs_bf16 itself is defined only where
  // oneDNN is compiled in, and this file is built in CUDA builds too.)
  namespace mb = llmk::op::matmul_backward;
  const bool runs = mb::Onednn::runs_here<mb::Bf16>();
  EXPECT_EQ(listed, runs) << "onednn's info and what its kernels run here disagree";
  if (runs) return;
  // 2 × 3 activations, 4 × 3 weight: refused, every output as it was.
  const float poison = 7.0f;
  Kokkos::View<llmk::bf16*, Space> dinp("dinp", 6), dout("dout", 8), inp("inp", 6),
      weight("weight", 12), dweight("dweight", 12);
  Kokkos::deep_copy(dinp, llmk::bf16(poison));
  Kokkos::deep_copy(dweight, llmk::bf16(poison));
  llmk::MatmulBackwardOptions options;
  options.impl = "onednn";
  try {
    llmk::matmul_backward(Space(), dinp.data(), dweight.data(), nullptr, dout.data(), inp.data(),
                          weight.data(), 1, 2, 3, 4, options);
    ADD_FAILURE() << "a bf16 call of onednn ran on a processor its info says it does not";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("does not run precision 'bf16' on this processor"),
              std::string::npos)
        << e.what();
  }
  Space().fence();
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dinp);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(float(h(i)), poison) << "dinp written";
}

}  // namespace
