// Contract (e): concurrent calls on distinct contexts (CTest label
// `concurrency`: the names contain "Concurrency"). Jobs: Op::concurrency_shape(i),
// each with its own seed, a precision the implementation runs (tf32 and bf16
// included where it runs them) and a variant (GELU), each cycling, and every
// other job's outputs all overwritten (from poisoned values), the others
// accumulated; every result against a solo call of the same job (bitwise
// where the info promises repeatable results, else within twice the tolerance).
//  - host spaces where any thread may launch (Serial; OpenMP with Kokkos 4):
//    4 std::threads, each on its own instance (Kokkos 4: partitions of the
//    space; Kokkos 3's host instances share their state and llmk serializes
//    them) with its own llmk::Context, or the instance's implicit context,
//    6 rounds through the three entry points;
//  - OpenMP with Kokkos 3 (launches only from the thread that initialized
//    Kokkos): a call from another thread throws std::runtime_error saying so
//    before any write, through every entry, with its own or the implicit
//    context; then the same call on the initializing thread works;
//  - Cuda: 4 streams (their instances made on the initializing thread, as
//    Kokkos 3.4 requires), calls enqueued by one host thread on all of them,
//    and by one host thread per stream.
#pragma once

#include "contract/device_problem.hpp"

#include <gmock/gmock.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace llmk_test::contract {

inline constexpr int kConcurrencyThreads = 4;
inline constexpr int kConcurrencyRounds = 6;

// Where calls from any host thread run: Serial always; OpenMP with Kokkos 4.
template <class Space>
constexpr bool any_thread_launches() {
#ifdef KOKKOS_ENABLE_OPENMP
  if constexpr (std::is_same_v<Space, Kokkos::OpenMP>) return KOKKOS_VERSION >= 40000;
#endif
  return is_host_space<Space>;
}

// Instances for n threads: Kokkos 4 makes independent ones (partition_space:
// OpenMP pools of at least one thread each, so at most as many as the space
// has threads, shared in turn); Kokkos 3's host spaces have one.
template <class Space>
std::vector<Space> thread_instances(int n) {
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

#ifdef KOKKOS_ENABLE_CUDA
// Instances of 4 CUDA streams, made on the calling thread (the one that
// initialized Kokkos). Never destroyed: a Kokkos::Cuda(stream) destroyed
// after Kokkos::finalize aborts the process, and the streams' implicit
// contexts live until then.
inline const std::vector<Kokkos::Cuda>& cuda_stream_instances() {
  static const std::vector<Kokkos::Cuda>& instances = *new std::vector<Kokkos::Cuda>([] {
    std::vector<Kokkos::Cuda> v;
    for (int i = 0; i < kConcurrencyThreads; ++i) {
      cudaStream_t stream;
      if (cudaStreamCreate(&stream) != cudaSuccess)
        throw std::runtime_error("cudaStreamCreate failed");
      v.emplace_back(stream);
    }
    return v;
  }());
  return instances;
}
#endif

// A problem on the device and the outputs of a solo call on it (the default
// instance, a fresh context, nothing else running).
template <class Op, class Space>
struct Job {
  std::string impl;
  typename Op::Problem p;
  std::unique_ptr<DeviceProblem<Op, Space>> d;
  Outputs solo;
  bool repeatable = true;
  Overwrites overwrites;  // p's overwritten outputs are poisoned

  const std::vector<ArgSpec>& specs() const { return d->specs(); }
  typename Op::Options options() const {
    return Op::options(impl, p.precision, overwrites);
  }
  ::testing::AssertionResult same_as_solo(const Outputs& r) const {
    return repeatable ? bitwise_equal(specs(), r, solo)
                      : close_to<Op>(p, r, solo);
  }
};

template <class Op, class Space>
std::vector<Job<Op, Space>> make_jobs(const std::string& impl, int n) {
  const ImplCatalog cat = Op::template catalog<Space>();
  std::vector<Precision> precisions;
  for (Precision q : Op::precisions())
    if (impl_runs(cat, impl, q)) precisions.push_back(q);
  std::vector<Job<Op, Space>> jobs(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    Job<Op, Space>& job = jobs[std::size_t(i)];
    const Precision precision = precisions[std::size_t(i) % precisions.size()];
    job.impl = impl;
    const std::vector<typename Op::Shape> forms = variant_shapes<Op>(Op::concurrency_shape(i));
    const typename Op::Problem clean =
        Op::make(forms[std::size_t(i) % forms.size()], 300 + std::uint32_t(i), precision);
    job.overwrites =
        Overwrites(output_indices(Op::args(clean.shape, clean.precision)).size(), i % 2 == 1);
    job.p = poisoned<Op>(clean, job.overwrites);
    job.d = std::make_unique<DeviceProblem<Op, Space>>(job.p);
    job.repeatable = promises_bitwise_repeatable(cat, impl, precision);
    llmk::Context<Space> ctx;
    job.d->call(Entry::Rank2Views, job.options(), &ctx);
    EXPECT_TRUE(job.d->download(job.p, job.solo));
    expect_matches_reference<Op>(clean, job.overwrites, job.solo,
                                 Op::reference(clean, job.overwrites),
                                 promises_rounding_once(cat, impl, precision));
  }
  return jobs;
}

inline Entry round_entry(int round) { return Entry(round % 3); }

// `rounds` calls of the job on exec (its own context or the implicit one),
// each against the solo call. Returns "" or what went wrong.
template <class Op, class Space>
std::string run_rounds(Job<Op, Space>& job, const Space& exec, bool own_context, int rounds) {
  try {
    std::optional<llmk::Context<Space>> ctx;
    if (own_context) ctx.emplace(exec);
    for (int round = 0; round < rounds; ++round) {
      job.d->reset_outputs(exec, job.p);
      job.d->call(round_entry(round), job.options(), ctx ? &*ctx : nullptr, exec);
      Outputs r;
      auto ok = job.d->download(job.p, r, exec);
      if (ok) ok = job.same_as_solo(r);
      if (!ok) return "round " + std::to_string(round) + ": " + ok.message();
    }
  } catch (const std::exception& e) {
    return std::string("exception: ") + e.what();
  }
  return "";
}

// A thread's work: its rounds, what went wrong into *failure.
template <class Op, class Space>
void run_rounds_into(std::string* failure, Job<Op, Space>* job, Space exec, bool own_context) {
  *failure = run_rounds<Op, Space>(*job, exec, own_context, kConcurrencyRounds);
}

template <class Op, class Space>
void check_host_threads(const std::string& impl, bool own_context) {
  std::vector<Job<Op, Space>> jobs = make_jobs<Op, Space>(impl, kConcurrencyThreads);
  const std::vector<Space> instances = thread_instances<Space>(kConcurrencyThreads);
  std::vector<std::string> failures(kConcurrencyThreads);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < std::size_t(kConcurrencyThreads); ++t)
    threads.emplace_back(run_rounds_into<Op, Space>, &failures[t], &jobs[t], instances[t],
                         own_context);
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kConcurrencyThreads; ++t)
    EXPECT_EQ(failures[std::size_t(t)], "")
        << "thread " << t << " (" << jobs[std::size_t(t)].p.shape.name << ")";
}

// OpenMP with Kokkos 3: refused from another thread, before any write.
template <class Op, class Space>
void check_other_thread_refused(const std::string& impl) {
  std::vector<Job<Op, Space>> jobs = make_jobs<Op, Space>(impl, 1);
  Job<Op, Space>& job = jobs[0];
  job.d->reset_outputs(Space(), job.p);
  for (const bool own_context : {true, false}) {
    for (int e = 0; e < 3; ++e) {
      SCOPED_TRACE(std::string(own_context ? "own context" : "implicit context") + ", entry " +
                   entry_test_name(Entry(e)));
      std::string what;
      bool threw_runtime_error = false;
      std::thread other([&] {
        try {
          std::optional<llmk::Context<Space>> ctx;
          if (own_context) ctx.emplace(Space());
          job.d->call(Entry(e), job.options(), ctx ? &*ctx : nullptr, Space(), false);
        } catch (const std::runtime_error& err) {
          threw_runtime_error = true;
          what = err.what();
        } catch (const std::exception& err) {
          what = std::string("another exception: ") + err.what();
        }
      });
      other.join();
      EXPECT_TRUE(threw_runtime_error) << what;
      EXPECT_THAT(what, ::testing::HasSubstr("only from the thread that initialized Kokkos"));
      Outputs r;
      ASSERT_TRUE(job.d->download(job.p, r));
      EXPECT_TRUE(bitwise_equal(job.specs(), r, initial_outputs<Op>(job.p)))
          << "an output was written";
    }
  }
  EXPECT_EQ((run_rounds<Op, Space>(job, Space(), true, 1)), "") << "on the initializing thread";
}

#ifdef KOKKOS_ENABLE_CUDA
// One host thread enqueues every job on its stream (two jobs per stream)
// without waiting, then reads them all back.
template <class Op>
void check_cuda_one_thread(const std::string& impl) {
  const auto& streams = cuda_stream_instances();
  const std::size_t n = streams.size();
  std::vector<Job<Op, Kokkos::Cuda>> jobs = make_jobs<Op, Kokkos::Cuda>(impl, int(2 * n));
  for (const bool own_context : {true, false}) {
    SCOPED_TRACE(own_context ? "own contexts" : "implicit contexts");
    std::vector<llmk::Context<Kokkos::Cuda>> contexts;
    for (std::size_t s = 0; s < n; ++s) contexts.emplace_back(streams[s]);
    for (int round = 0; round < kConcurrencyRounds; ++round) {
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        const Kokkos::Cuda& exec = streams[j % n];
        jobs[j].d->reset_outputs(exec, jobs[j].p);
        jobs[j].d->call(round_entry(round), jobs[j].options(),
                        own_context ? &contexts[j % n] : nullptr, exec, false);
      }
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        Outputs r;
        ASSERT_TRUE(jobs[j].d->download(jobs[j].p, r, streams[j % n]));
        EXPECT_TRUE(jobs[j].same_as_solo(r)) << "round " << round << ", job " << j;
      }
    }
  }
}

// One host thread per stream, each with its own context (or the stream's
// implicit one).
template <class Op>
void check_cuda_thread_per_stream(const std::string& impl) {
  const auto& streams = cuda_stream_instances();
  const int n = int(streams.size());
  std::vector<Job<Op, Kokkos::Cuda>> jobs = make_jobs<Op, Kokkos::Cuda>(impl, n);
  for (const bool own_context : {true, false}) {
    SCOPED_TRACE(own_context ? "own contexts" : "implicit contexts");
    std::vector<std::string> failures(static_cast<std::size_t>(n));  // (not size_t(n): a function declaration)
    std::vector<std::thread> threads;
    // (nvcc 13's front end crashed here, "type_pointed_to: not a pointer
    // type", on the declaration above when it read as a function.)
    Job<Op, Kokkos::Cuda>* const job = jobs.data();
    std::string* const failure = failures.data();
    const Kokkos::Cuda* const stream = streams.data();
    for (int t = 0; t < n; ++t)
      threads.emplace_back([job, failure, stream, own_context, t] {
        failure[t] = run_rounds<Op, Kokkos::Cuda>(job[t], stream[t], own_context,
                                                  kConcurrencyRounds);
      });
    for (std::thread& t : threads) t.join();
    for (int t = 0; t < n; ++t) EXPECT_EQ(failures[std::size_t(t)], "") << "stream " << t;
  }
}
#endif

template <class Op, class Space>
void register_concurrency_tests() {
  const std::string op = Op::name();
  for (const std::string& impl : impls_under_test(Op::template catalog<Space>())) {
    const std::string what = "implementation '" + impl + "'";
    if constexpr (any_thread_launches<Space>()) {
      add_test(op, "Concurrency", "HostThreadsOwnContexts_" + impl, what,
               [=] { check_host_threads<Op, Space>(impl, true); });
      add_test(op, "Concurrency", "HostThreadsImplicitContexts_" + impl, what,
               [=] { check_host_threads<Op, Space>(impl, false); });
    } else if constexpr (is_host_space<Space>) {
      add_test(op, "Concurrency", "OtherThreadRefusedBeforeAnyWrite_" + impl, what,
               [=] { check_other_thread_refused<Op, Space>(impl); });
    }
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
      add_test(op, "Concurrency", "CudaStreamsOneHostThread_" + impl, what,
               [=] { check_cuda_one_thread<Op>(impl); });
      add_test(op, "Concurrency", "CudaHostThreadPerStream_" + impl, what,
               [=] { check_cuda_thread_per_stream<Op>(impl); });
    }
#endif
  }
}

}  // namespace llmk_test::contract
