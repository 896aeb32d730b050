// GradientReducer over MPI (llmk/mpi.hpp), run by CTest as `mpirun -np 2`
// (tests/CMakeLists.txt: mpi.*): every rank runs every test, in the same
// order, and makes the same collective calls. Each rank's gradients are
// random values only it holds, but every rank can make any rank's
// (fill(rank, ...) is seeded by the rank), so each checks its reduced
// buffers against what it computes on its own:
//   - with 2 ranks, bitwise: rank 0's value + rank 1's (one float addition,
//     commutative; bf16: rounded once); with more, within float32's bound;
//   - the same bytes on every rank (MPI_Allgather of a hash of them);
//   - the same bytes step after step.
#include <llmk/mpi.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using Exec = Kokkos::DefaultHostExecutionSpace;
using llmk::bf16;

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// Rank r's gradient values of buffer b: random in [-1, 1).
template <class T>
std::vector<T> fill(int rank, int buffer, std::size_t n) {
  std::mt19937_64 rng(std::uint64_t(rank) * 1000003u + std::uint64_t(buffer));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<T> v(n);
  for (T& x : v) x = T(u(rng));
  return v;
}

// What rank `rank`'s reduced buffer must hold, computed here from every
// rank's values: rank order, float additions (bf16: rounded after each).
template <class T>
std::vector<T> expected_sum(int buffer, std::size_t n, int ranks) {
  std::vector<T> sum = fill<T>(0, buffer, n);
  for (int r = 1; r < ranks; ++r) {
    const std::vector<T> x = fill<T>(r, buffer, n);
    for (std::size_t i = 0; i < n; ++i) sum[i] = T(float(sum[i]) + float(x[i]));
  }
  return sum;
}

// FNV-1a of the bytes, gathered from every rank: equal everywhere?
template <class T>
bool same_bytes_on_every_rank(const std::vector<T>& v) {
  std::uint64_t h = 1469598103934665603ull;
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  for (std::size_t i = 0; i < v.size() * sizeof(T); ++i) h = (h ^ p[i]) * 1099511628211ull;
  std::vector<std::uint64_t> all(static_cast<std::size_t>(world_size()));
  MPI_Allgather(&h, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (std::uint64_t x : all) {
    if (x != all[0]) return false;
  }
  return true;
}

template <class T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

llmk::Communicator<Exec> world() { return llmk::mpi_communicator<Exec>(MPI_COMM_WORLD); }

// Three buckets of float and bf16 buffers, made ready in reverse order (the
// reducer issues them in bucket order), over three steps.
template <class T>
void all_reduce_sum_case() {
  const int rank = world_rank(), ranks = world_size();
  const std::vector<std::size_t> sizes = {1, 1000, 4097, 3, 70000};
  std::vector<std::vector<T>> grads(sizes.size());
  llmk::GradientReducer<Exec> reducer(Exec(), world());
  const int b0 = reducer.add_bucket({llmk::gradient("g0", (grads[0] = fill<T>(rank, 0, sizes[0])).data(), sizes[0]),
                                     llmk::gradient("g1", (grads[1] = fill<T>(rank, 1, sizes[1])).data(), sizes[1])});
  const int b1 = reducer.add_bucket({llmk::gradient("g2", (grads[2] = fill<T>(rank, 2, sizes[2])).data(), sizes[2])});
  const int b2 = reducer.add_bucket({llmk::gradient("g3", (grads[3] = fill<T>(rank, 3, sizes[3])).data(), sizes[3]),
                                     llmk::gradient("g4", (grads[4] = fill<T>(rank, 4, sizes[4])).data(), sizes[4])});
  ASSERT_EQ(reducer.buckets(), 3);
  std::vector<std::vector<T>> first_step;
  for (int step = 0; step < 3; ++step) {
    for (std::size_t b = 0; b < sizes.size(); ++b) {  // in place: the reducer holds their addresses
      const std::vector<T> fresh = fill<T>(rank, int(b), sizes[b]);
      std::copy(fresh.begin(), fresh.end(), grads[b].begin());
    }
    reducer.ready(b2);
    reducer.ready(b1);
    reducer.ready(b0);
    reducer.wait();
    for (std::size_t b = 0; b < sizes.size(); ++b) {
      SCOPED_TRACE("buffer g" + std::to_string(b) + ", step " + std::to_string(step));
      const std::vector<T> want = expected_sum<T>(int(b), sizes[b], ranks);
      if (ranks == 2) {
        EXPECT_TRUE(bitwise_equal(grads[b], want)) << "not rank 0's + rank 1's value";
      } else {
        for (std::size_t i = 0; i < sizes[b]; ++i) {
          ASSERT_NEAR(float(grads[b][i]), float(want[i]), 1e-2f * ranks) << "element " << i;
        }
      }
      EXPECT_TRUE(same_bytes_on_every_rank(grads[b]));
    }
    if (step == 0) first_step = grads;
    for (std::size_t b = 0; b < sizes.size(); ++b) {
      EXPECT_TRUE(bitwise_equal(grads[b], first_step[b])) << "step " << step << " differs from step 0";
    }
  }
}

TEST(GradientReducerMpi, AllReduceSumFloat) { all_reduce_sum_case<float>(); }
TEST(GradientReducerMpi, AllReduceSumBf16) { all_reduce_sum_case<bf16>(); }

TEST(GradientReducerMpi, AverageFloat) {
  const int rank = world_rank(), ranks = world_size();
  const std::size_t n = 5000;
  std::vector<float> g = fill<float>(rank, 7, n);
  llmk::ReducerOptions options;
  options.reduction = llmk::Reduction::average;
  llmk::GradientReducer<Exec> reducer(Exec(), world(), options);
  reducer.add_bucket({llmk::gradient("g", g.data(), n)});
  reducer.ready(0);
  reducer.wait();
  const std::vector<float> sum = expected_sum<float>(7, n, ranks);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(g[i], sum[i] / float(ranks)) << "element " << i;
}

TEST(GradientReducerMpi, ReduceScatterGivesEachRankItsShard) {
  const int rank = world_rank(), ranks = world_size();
  const std::size_t n = 600 * std::size_t(ranks);
  std::vector<float> g = fill<float>(rank, 9, n);
  llmk::ReducerOptions options;
  options.collective = llmk::Collective::reduce_scatter;
  llmk::GradientReducer<Exec> reducer(Exec(), world(), options);
  reducer.add_bucket({llmk::gradient("g", g.data(), n)});
  reducer.ready(0);
  reducer.wait();
  const std::vector<float> sum = expected_sum<float>(9, n, ranks);
  const std::size_t shard = n / std::size_t(ranks), first = shard * std::size_t(rank);
  for (std::size_t i = first; i < first + shard; ++i) {
    if (ranks == 2) {
      ASSERT_EQ(g[i], sum[i]) << "element " << i << " of rank " << rank << "'s shard";
    } else {
      ASSERT_NEAR(g[i], sum[i], 1e-2f * ranks) << "element " << i;
    }
  }
}

TEST(GradientReducerMpi, BucketsThatDifferAcrossRanksAreRefusedEverywhere) {
  const int rank = world_rank();
  std::vector<float> g(101);
  llmk::GradientReducer<Exec> reducer(Exec(), world());
  // Rank 1 registers one element more.
  const std::size_t n = rank == 1 ? 101 : 100;
  try {
    reducer.add_bucket({llmk::gradient("g", g.data(), n)});
    ADD_FAILURE() << "rank " << rank << ": the mismatch was not detected";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("bucket 0"), std::string::npos) << m;
    EXPECT_NE(m.find("differ"), std::string::npos) << m;
    EXPECT_NE(m.find("rank 0 has bucket 0 of 1 buffers, 100 elements"), std::string::npos) << m;
    EXPECT_NE(m.find("rank 1 has bucket 0 of 1 buffers, 101 elements"), std::string::npos) << m;
  }
  EXPECT_EQ(reducer.buckets(), 0);
  // The same bucket everywhere still registers afterwards.
  EXPECT_EQ(reducer.add_bucket({llmk::gradient("g", g.data(), 100)}), 0);
}

TEST(GradientReducerMpi, BadArgumentsAreRefusedBeforeAnythingStarts) {
  const int ranks = world_size();
  const int rank = world_rank();
  std::vector<float> a(64), b = fill<float>(rank, 13, 64);
  llmk::GradientReducer<Exec> reducer(Exec(), world());
  const auto message_of = [&](auto&& call) -> std::string {
    try {
      call();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "(no exception)";
  };
  EXPECT_NE(message_of([&] { reducer.add_bucket({}); }).find("at least one buffer"), std::string::npos);
  EXPECT_NE(message_of([&] {
              reducer.add_bucket({llmk::gradient("a", a.data(), 64), llmk::gradient("a2", a.data() + 32, 16)});
            }).find("overlaps"),
            std::string::npos);
  EXPECT_NE(message_of([&] { reducer.add_bucket({llmk::gradient("null", static_cast<float*>(nullptr), 4)}); })
                .find("'null' is a null pointer"),
            std::string::npos);
  EXPECT_NE(message_of([&] { reducer.ready(0); }).find("bucket 0 does not exist"), std::string::npos);
  reducer.add_bucket({llmk::gradient("a", a.data(), 64)});
  EXPECT_NE(message_of([&] { reducer.add_bucket({llmk::gradient("b", a.data() + 8, 8)}); }).find("overlaps"),
            std::string::npos);
  reducer.add_bucket({llmk::gradient("b", b.data(), 64)});
  reducer.ready(1);
  EXPECT_NE(message_of([&] { reducer.ready(1); }).find("already made ready"), std::string::npos);
  EXPECT_NE(message_of([&] { reducer.add_bucket({llmk::gradient("c", b.data(), 1)}); }).find("step is under way"),
            std::string::npos);
  // wait() with bucket 0 never made ready: nothing was issued (bucket order).
  EXPECT_NE(message_of([&] { reducer.wait(); }).find("bucket 0 not made ready"), std::string::npos);
  EXPECT_TRUE(bitwise_equal(b, fill<float>(rank, 13, 64))) << "bucket 1 was reduced out of order";

  llmk::ReducerOptions scatter;
  scatter.collective = llmk::Collective::reduce_scatter;
  llmk::GradientReducer<Exec> sharded(Exec(), world(), scatter);
  if (ranks > 1) {
    const std::string m = message_of([&] { sharded.add_bucket({llmk::gradient("odd", a.data(), 63)}); });
    EXPECT_NE(m.find("'odd' has 63 elements, not a multiple of the"), std::string::npos) << m;
  }
  llmk::ReducerOptions no_time;
  no_time.timeout_seconds = 0;
  EXPECT_NE(message_of([&] { llmk::GradientReducer<Exec> r(Exec(), world(), no_time); }).find("timeout_seconds"),
            std::string::npos);
}

// Rank 1 is late (it "failed" for 1.5 s): rank 0's wait() gives up after its
// 0.3 s with an error naming the bucket, rather than hanging. Rank 1 then
// arrives, which completes the collective rank 0 left posted, so that both
// processes end cleanly.
TEST(GradientReducerMpi, ALateRankIsAnErrorNotAHang) {
  const int rank = world_rank();
  if (world_size() != 2) GTEST_SKIP() << "written for 2 ranks";
  std::vector<float> g = fill<float>(rank, 11, 1000);
  llmk::ReducerOptions options;
  options.timeout_seconds = rank == 0 ? 0.3 : 30;
  llmk::GradientReducer<Exec> reducer(Exec(), world(), options);
  reducer.add_bucket({llmk::gradient("g", g.data(), g.size())});
  if (rank == 0) {
    reducer.ready(0);
    try {
      reducer.wait();
      ADD_FAILURE() << "rank 0's wait() returned while rank 1 had not started the reduction";
    } catch (const std::runtime_error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("buckets 0-0"), std::string::npos) << m;
      EXPECT_NE(m.find("did not complete within 0.3 s on rank 0 of 2 (MPI)"), std::string::npos) << m;
    }
    try {
      reducer.ready(0);
      ADD_FAILURE() << "a reducer that timed out accepted more work";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
    }
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    reducer.ready(0);
    reducer.wait();  // completes: rank 0's request was posted
  }
  MPI_Barrier(MPI_COMM_WORLD);  // rank 0's posted request progresses here
}

// With LLMK_TEST_EXITING_RANK=1 (CTest mpi.rank_exits), rank 1 exits before
// the reduction, as a crashed rank would: rank 0 must end with an error
// (its timeout, or mpirun's stopping the job), never hang; CTest expects the
// run to fail within its TIMEOUT.
TEST(GradientReducerMpi, ARankThatExits) {
  const char* exiting = std::getenv("LLMK_TEST_EXITING_RANK");
  if (!exiting) GTEST_SKIP() << "only with LLMK_TEST_EXITING_RANK (CTest mpi.rank_exits)";
  const int rank = world_rank();
  std::vector<float> g = fill<float>(rank, 12, 1000);
  llmk::ReducerOptions options;
  options.timeout_seconds = 5;
  llmk::GradientReducer<Exec> reducer(Exec(), world(), options);
  reducer.add_bucket({llmk::gradient("g", g.data(), g.size())});
  if (rank == std::atoi(exiting)) std::_Exit(3);
  reducer.ready(0);
  EXPECT_THROW(reducer.wait(), std::runtime_error);
  MPI_Abort(MPI_COMM_WORLD, 4);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  Kokkos::initialize(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  // Every rank prints: the log shows which rank failed what.
  const int status = RUN_ALL_TESTS();
  Kokkos::finalize();
  MPI_Finalize();
  return status;
}
