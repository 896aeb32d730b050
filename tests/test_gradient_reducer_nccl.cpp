// GradientReducer over NCCL (llmk/nccl.hpp) on one GPU: a communicator of
// one rank (NCCL allows one rank per GPU), so the reduction is the identity;
// what these tests check is the plumbing every rank count shares: the
// buckets' exchange (ncclAllGather), the reducer's stream ordered after the
// backward's and back, bf16 and float, both collectives, the checks of
// add_bucket. Several ranks: the GPT-2 example with --data-parallel on
// several GPUs (docs/performance.md says where that ran).
#include <llmk/nccl.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

using Exec = Kokkos::Cuda;
using llmk::bf16;

class OneRankNccl : public ::testing::Test {
 protected:
  void SetUp() override {
    int device = 0;
    ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
    ASSERT_EQ(ncclCommInitAll(&comm_, 1, &device), ncclSuccess);
  }
  void TearDown() override {
    if (comm_) ncclCommDestroy(comm_);
  }
  ncclComm_t comm_ = nullptr;
};

// Values the backward would have written: a kernel on `exec` fills x[i] =
// f(i, step), so that the reduction must wait for it.
template <class T>
void fill(const Exec& exec, const Kokkos::View<T*, Kokkos::CudaSpace>& x, int step) {
  Kokkos::parallel_for("test::fill", Kokkos::RangePolicy<Exec>(exec, 0, x.extent(0)),
                       KOKKOS_LAMBDA(const int i) { x(i) = T(float((i * 37 + step * 11) % 101) / 8.0f - 6.0f); });
}

template <class T>
std::vector<float> host(const Kokkos::View<T*, Kokkos::CudaSpace>& x) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  std::vector<float> out(h.extent(0));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = float(h(i));
  return out;
}

template <class T>
std::vector<float> expected(std::size_t n, int step) {
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = float(T(float((int(i) * 37 + step * 11) % 101) / 8.0f - 6.0f));
  return out;
}

template <class T>
void one_rank_case(ncclComm_t comm, llmk::ReducerOptions options) {
  Exec exec;
  Kokkos::View<T*, Kokkos::CudaSpace> a("a", 5000), b("b", 1 << 20), c("c", 3);
  llmk::GradientReducer<Exec> reducer(exec, llmk::nccl_communicator(comm), options);
  EXPECT_EQ(reducer.communicator().engine(), "NCCL");
  EXPECT_EQ(reducer.communicator().size(), 1);
  reducer.add_bucket({llmk::gradient("a", a), llmk::gradient("c", c)});
  reducer.add_bucket({llmk::gradient("b", b)});
  for (int step = 0; step < 3; ++step) {
    fill(exec, a, step), fill(exec, b, step), fill(exec, c, step);
    reducer.ready(1);
    reducer.ready(0);
    reducer.wait();
    EXPECT_EQ(host(a), expected<T>(a.extent(0), step)) << "step " << step;
    EXPECT_EQ(host(b), expected<T>(b.extent(0), step)) << "step " << step;
    EXPECT_EQ(host(c), expected<T>(c.extent(0), step)) << "step " << step;
  }
}

TEST_F(OneRankNccl, SumFloat) { one_rank_case<float>(comm_, {}); }
TEST_F(OneRankNccl, SumBf16) { one_rank_case<bf16>(comm_, {}); }
TEST_F(OneRankNccl, AverageBf16) {
  llmk::ReducerOptions o;
  o.reduction = llmk::Reduction::average;
  one_rank_case<bf16>(comm_, o);
}
TEST_F(OneRankNccl, ReduceScatterFloat) {
  llmk::ReducerOptions o;
  o.collective = llmk::Collective::reduce_scatter;
  one_rank_case<float>(comm_, o);
}

TEST_F(OneRankNccl, HostMemoryIsRefused) {
  std::vector<float> on_host(64);
  llmk::GradientReducer<Exec> reducer(Exec(), llmk::nccl_communicator(comm_));
  try {
    reducer.add_bucket({llmk::gradient("on_host", on_host.data(), on_host.size())});
    ADD_FAILURE() << "a host buffer was accepted for a Cuda reducer";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'on_host'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("host memory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(reducer.buckets(), 0);
}

TEST(NcclCommunicator, NullIsRefused) {
  EXPECT_THROW(llmk::nccl_communicator(nullptr), std::invalid_argument);
}

}  // namespace
