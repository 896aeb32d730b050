// Concurrent calls (CTest label `concurrency`, with the backend's label), part
// of the generic per-space binary (LLMK_TEST_SPACE):
//  - Serial: N std::threads, each on its own Kokkos::Serial instance with its
//    own llmk::Context, or the implicit context of its instance, on distinct
//    problems, many rounds: every result bitwise equal to a solo call of the
//    same problem. (Kokkos 3's Serial instances share their state; llmk
//    serializes their calls itself.)
//  - OpenMP: with Kokkos 3 only the thread that initialized Kokkos may launch:
//    a call from another std::thread throws std::runtime_error saying why,
//    before any write. With Kokkos 4 calls from any thread work: the Serial
//    test's threads, on partitions of the OpenMP instance.
//  - Cuda: 4 CUDA streams (Kokkos::Cuda instances made on the main thread),
//    calls enqueued on all of them by one host thread, and by four host
//    threads (one per stream): every result bitwise equal to a solo call.
#include "support/compare.hpp"
#include "support/device.hpp"
#include "support/problem.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <llmk/matmul_backward.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifdef LLMK_TEST_SPACE_IS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace {

using namespace llmk_test;
using Space = Kokkos::LLMK_TEST_SPACE;

constexpr bool kKokkos4 = KOKKOS_VERSION >= 40000;
constexpr int kThreads = 4;
constexpr int kRounds = 6;

// Distinct problems for the threads: different shapes (remainders everywhere)
// and seeds.
Shape job_shape(int i) {
  static const Shape shapes[] = {
      {"c0", 2, 50, 40, 70}, {"c1", 3, 37, 65, 129}, {"c2", 1, 200, 33, 17}, {"c3", 2, 64, 96, 288}};
  return shapes[i % 4];
}

// A problem on the device and the results of a solo call on it (the default
// instance, a fresh context, nothing else running).
struct Job {
  std::string impl;
  HostProblem p;
  std::unique_ptr<DeviceProblem<Space>> d;
  Results solo;
};

std::vector<Job> make_jobs(const std::string& impl, int n) {
  std::vector<Job> jobs(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    Job& job = jobs[std::size_t(i)];
    job.impl = impl;
    job.p = make_problem(job_shape(i), 300 + std::uint32_t(i));
    job.d = std::make_unique<DeviceProblem<Space>>(job.p);
    llmk::Context<Space> ctx;
    run_matmul_backward(*job.d, Entry::Rank2Views, impl, &ctx);
    EXPECT_TRUE(download_results(*job.d, job.p, job.solo));
    if (i < 4) expect_matches_reference(job.solo, reference_backward(job.p), job.p.shape);
  }
  return jobs;
}

Entry entry_of(int round) {
  const Entry entries[] = {Entry::Rank2Views, Entry::Rank3Views, Entry::RawPointers};
  return entries[round % 3];
}

// Whether the results of a call may be held to bitwise equality with another
// call's: what the implementation's info promises (all of them, today).
bool promises_determinism(const std::string& impl) {
  const llmk::MatmulBackwardImplInfo* info = impl_info(impl);
  return info == nullptr /* auto */ ? impl_info(llmk::matmul_backward_auto_impl<Space>())->deterministic
                                    : info->deterministic;
}

// A result against the solo call's: bitwise, or (for an implementation that
// does not promise determinism) within the tolerance of two float32 results.
::testing::AssertionResult same_as_solo(const Results& r, const Job& job) {
  if (promises_determinism(job.impl)) return bitwise_equal(r, job.solo);
  const std::int64_t C = job.p.shape.C;
  for (auto ok : {matches_reference("dinp", r.dinp, job.solo.dinp, C),
                  matches_reference("dweight", r.dweight, job.solo.dweight, C),
                  matches_reference("dbias", r.dbias, job.solo.dbias, 0)})
    if (!ok) return ok;
  return ::testing::AssertionSuccess();
}

// `rounds` calls on `job` through exec (own context or the implicit one), each
// checked against the solo call. Returns "" or what went wrong.
std::string run_rounds(Job& job, const Space& exec, const std::string& impl, bool own_context,
                       int rounds) {
  try {
    std::optional<llmk::Context<Space>> ctx;
    if (own_context) ctx.emplace(exec);
    for (int round = 0; round < rounds; ++round) {
      job.d->reset_gradients(exec, job.p);
      run_matmul_backward(*job.d, entry_of(round), impl, ctx ? &*ctx : nullptr, exec);
      Results r;
      auto ok = download_results(*job.d, job.p, r, exec);
      if (ok) ok = same_as_solo(r, job);
      if (!ok) return "round " + std::to_string(round) + ": " + ok.message();
    }
  } catch (const std::exception& e) {
    return std::string("exception: ") + e.what();
  }
  return "";
}

// Instances for the threads: Kokkos 4 makes independent ones (partition_space:
// Serial(NewInstance), OpenMP pools of at least one thread each, so at most
// as many as the space has threads, shared in turn); Kokkos 3's host spaces
// have one.
std::vector<Space> host_instances(int n) {
#if KOKKOS_VERSION >= 40000
  const int parts = std::max(1, std::min(n, Space().concurrency()));
  const std::vector<Space> partitions =
      Kokkos::Experimental::partition_space(Space(), std::vector<int>(std::size_t(parts), 1));
  std::vector<Space> instances;
  for (int t = 0; t < n; ++t) instances.push_back(partitions[std::size_t(t % parts)]);
  return instances;
#else
  return std::vector<Space>(std::size_t(n), Space());
#endif
}

// --- host threads, each on its own instance ----------------------------------------

// Where calls from any thread run: Serial always; OpenMP with Kokkos 4.
template <class S>
constexpr bool any_thread_launches() {
#ifdef KOKKOS_ENABLE_OPENMP
  if constexpr (std::is_same_v<S, Kokkos::OpenMP>) return kKokkos4;
#endif
  return is_host_space<S>;
}

std::vector<std::string> thread_impls() {
  return any_thread_launches<Space>() ? impls_under_test<Space>() : std::vector<std::string>{};
}

class ConcurrencyHostThreads : public ::testing::TestWithParam<std::string> {
 protected:
  static void run(bool own_context) {
    const std::string impl = GetParam();
    std::vector<Job> jobs = make_jobs(impl, kThreads);
    const std::vector<Space> instances = host_instances(kThreads);
    std::vector<std::string> failures(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        failures[t] = run_rounds(jobs[t], instances[t], impl, own_context, kRounds);
      });
    for (std::thread& t : threads) t.join();
    for (int t = 0; t < kThreads; ++t)
      EXPECT_EQ(failures[t], "") << "thread " << t << " (" << jobs[t].p.shape.name << ")";
  }
};

TEST_P(ConcurrencyHostThreads, OwnContextsBitwiseEqualSoloCalls) { run(true); }
TEST_P(ConcurrencyHostThreads, ImplicitContextsBitwiseEqualSoloCalls) { run(false); }

INSTANTIATE_TEST_SUITE_P(AllImpls, ConcurrencyHostThreads, ::testing::ValuesIn(thread_impls()),
                         impl_test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ConcurrencyHostThreads);

// --- Kokkos 3's OpenMP: calls from another thread are refused -------------------------

std::vector<std::string> refused_thread_impls() {
#ifdef KOKKOS_ENABLE_OPENMP
  if (std::is_same_v<Space, Kokkos::OpenMP> && !kKokkos4) return impls_under_test<Space>();
#endif
  return {};
}

class ConcurrencyOtherThread : public ::testing::TestWithParam<std::string> {};

// The call throws std::runtime_error naming the reason, before it writes
// anything (kokkoskernels used to write dinp and dweight, then throw from
// KokkosBlas' dbias launch); a call on the initializing thread then works.
TEST_P(ConcurrencyOtherThread, ThrowsBeforeAnyWrite) {
  const std::string impl = GetParam();
  std::vector<Job> jobs = make_jobs(impl, 1);
  Job& job = jobs[0];
  job.d->reset_gradients(Space(), job.p);
  for (const bool own_context : {true, false}) {
    for (const Entry entry : {Entry::Rank2Views, Entry::Rank3Views, Entry::RawPointers}) {
      SCOPED_TRACE(std::string(own_context ? "own context" : "implicit context") + ", entry " +
                   std::to_string(int(entry)));
      std::string what;
      bool threw_runtime_error = false;
      std::thread other([&] {
        try {
          std::optional<llmk::Context<Space>> ctx;
          if (own_context) ctx.emplace(Space());
          run_matmul_backward(*job.d, entry, impl, ctx ? &*ctx : nullptr, Space(), false);
        } catch (const std::runtime_error& e) {
          threw_runtime_error = true;
          what = e.what();
        } catch (const std::exception& e) {
          what = std::string("another exception: ") + e.what();
        }
      });
      other.join();
      EXPECT_TRUE(threw_runtime_error) << what;
      EXPECT_THAT(what, ::testing::HasSubstr("OpenMP"));
      EXPECT_THAT(what, ::testing::HasSubstr("only from the thread that initialized Kokkos"));
      Results r;
      ASSERT_TRUE(download_results(*job.d, job.p, r));
      EXPECT_TRUE(bitwise_equal("dinp", r.dinp, job.p.dinp));
      EXPECT_TRUE(bitwise_equal("dweight", r.dweight, job.p.dweight));
      EXPECT_TRUE(bitwise_equal("dbias", r.dbias, job.p.dbias));
    }
  }
  EXPECT_EQ(run_rounds(job, Space(), impl, true, 1), "") << "on the initializing thread";
}

INSTANTIATE_TEST_SUITE_P(AllImpls, ConcurrencyOtherThread,
                         ::testing::ValuesIn(refused_thread_impls()), impl_test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ConcurrencyOtherThread);

// --- Cuda: streams ---------------------------------------------------------------------

#ifdef LLMK_TEST_SPACE_IS_CUDA
constexpr int kStreams = 4;

// The streams' instances, made on the main thread (Kokkos 3.4 refuses to make
// one elsewhere). The streams live until the process ends: the implicit
// contexts of their instances live until Kokkos::finalize. The instances are
// never destroyed: a Kokkos::Cuda(stream) destroyed after Kokkos::finalize
// (as a static would be) aborts the process ("Kokkos allocation
// InternalScratchFlags is being deallocated after Kokkos::finalize").
const std::vector<Kokkos::Cuda>& stream_instances() {
  static const std::vector<Kokkos::Cuda>& instances = *new std::vector<Kokkos::Cuda>([] {
    std::vector<Kokkos::Cuda> v;
    for (int i = 0; i < kStreams; ++i) {
      cudaStream_t stream;
      if (cudaStreamCreate(&stream) != cudaSuccess) throw std::runtime_error("cudaStreamCreate failed");
      v.emplace_back(stream);
    }
    return v;
  }());
  return instances;
}

class ConcurrencyCudaStreams : public ::testing::TestWithParam<std::string> {};

// (a) One host thread enqueues every job's reset and call on its stream (two
// jobs per stream) without waiting, then reads them all back.
TEST_P(ConcurrencyCudaStreams, OneHostThreadBitwiseEqualSoloCalls) {
  const std::string impl = GetParam();
  const auto& streams = stream_instances();
  std::vector<Job> jobs = make_jobs(impl, 2 * kStreams);
  for (const bool own_context : {true, false}) {
    SCOPED_TRACE(own_context ? "own contexts" : "implicit contexts");
    std::vector<llmk::Context<Kokkos::Cuda>> contexts;
    for (int s = 0; s < kStreams; ++s) contexts.emplace_back(streams[s]);
    for (int round = 0; round < kRounds; ++round) {
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        const Kokkos::Cuda& exec = streams[j % kStreams];
        jobs[j].d->reset_gradients(exec, jobs[j].p);
        run_matmul_backward(*jobs[j].d, entry_of(round), impl,
                            own_context ? &contexts[j % kStreams] : nullptr, exec, false);
      }
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        Results r;
        ASSERT_TRUE(download_results(*jobs[j].d, jobs[j].p, r, streams[j % kStreams]));
        EXPECT_TRUE(same_as_solo(r, jobs[j])) << "round " << round << ", job " << j;
      }
    }
  }
}

// (b) Four host threads, one per stream, each with its own context (or its
// stream's implicit one).
TEST_P(ConcurrencyCudaStreams, HostThreadPerStreamBitwiseEqualSoloCalls) {
  const std::string impl = GetParam();
  const auto& streams = stream_instances();
  std::vector<Job> jobs = make_jobs(impl, kStreams);
  for (const bool own_context : {true, false}) {
    SCOPED_TRACE(own_context ? "own contexts" : "implicit contexts");
    std::vector<std::string> failures(kStreams);
    std::vector<std::thread> threads;
    for (int t = 0; t < kStreams; ++t)
      threads.emplace_back([&, t] {
        failures[t] = run_rounds(jobs[t], streams[t], impl, own_context, kRounds);
      });
    for (std::thread& t : threads) t.join();
    for (int t = 0; t < kStreams; ++t) EXPECT_EQ(failures[t], "") << "stream " << t;
  }
}

INSTANTIATE_TEST_SUITE_P(AllImpls, ConcurrencyCudaStreams,
                         ::testing::ValuesIn(impls_under_test<Kokkos::Cuda>()), impl_test_name);
#endif

}  // namespace
