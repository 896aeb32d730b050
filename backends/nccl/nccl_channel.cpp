// The NCCL engine of GradientReducer (llmk/nccl.hpp): a stream of the
// reducer's own, behind an event of the backward's stream, ordered back into
// it by another at wait().
#include <llmk/nccl.hpp>

#include <backends/cuda/cuda_checks.hpp>
#include <core/dist/channel.hpp>

#include <stdexcept>
#include <string>

namespace llmk {

namespace {

using backends::check_cuda;

void check_nccl(ncclResult_t status, const char* call) {
  if (status != ncclSuccess) {
    throw std::runtime_error(std::string("llmk: ") + call + " failed: " +
                             ncclGetErrorString(status));
  }
}

class NcclChannel final : public detail::Channel<Kokkos::Cuda> {
 public:
  NcclChannel(const Kokkos::Cuda& exec, ncclComm_t comm) : exec_(exec), comm_(comm) {
    check_nccl(ncclCommUserRank(comm_, &rank_), "ncclCommUserRank");
    check_nccl(ncclCommCount(comm_, &size_), "ncclCommCount");
    int comm_device = -1;
    check_nccl(ncclCommCuDevice(comm_, &comm_device), "ncclCommCuDevice");
    if (comm_device != exec.cuda_device()) {
      throw std::invalid_argument("llmk::GradientReducer: the NCCL communicator is on GPU " +
                                  std::to_string(comm_device) + ", the execution space's stream on GPU " +
                                  std::to_string(exec.cuda_device()));
    }
    try {
      const backends::DeviceScope device(exec.cuda_device());
      check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
      check_cuda(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "cudaEventCreate");
      check_cuda(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "cudaEventCreate");
    } catch (...) {
      release();
      throw;
    }
  }

  ~NcclChannel() override { release(); }

  void check_bucket(const std::string&, const std::vector<GradientBuffer>&,
                    const ReducerOptions&) const override {}  // NCCL counts are size_t

  void start(const std::vector<GradientBuffer>& buffers, const ReducerOptions& options) override {
    check_cuda(cudaEventRecord(ready_, exec_.cuda_stream()), "cudaEventRecord (bucket ready)");
    check_cuda(cudaStreamWaitEvent(stream_, ready_, 0), "cudaStreamWaitEvent (bucket ready)");
    const ncclRedOp_t op = options.reduction == Reduction::average ? ncclAvg : ncclSum;
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    ncclResult_t status = ncclSuccess;
    for (const GradientBuffer& b : buffers) {
      if (status != ncclSuccess) break;
      const ncclDataType_t type = b.type == DType::f32 ? ncclFloat32 : ncclBfloat16;
      if (options.collective == Collective::all_reduce) {
        status = ncclAllReduce(b.data, b.data, b.count, type, op, comm_, stream_);
      } else {
        // In place: the rank's shard of the buffer is its output.
        const std::size_t shard = b.count / std::size_t(size_);
        void* const own = static_cast<char*>(b.data) +
                          shard * std::size_t(rank_) * detail::element_bytes(b.type);
        status = ncclReduceScatter(b.data, own, shard, type, op, comm_, stream_);
      }
    }
    const ncclResult_t ended = ncclGroupEnd();
    check_nccl(status != ncclSuccess ? status : ended, "ncclAllReduce / ncclReduceScatter");
    check_cuda(cudaEventRecord(done_, stream_), "cudaEventRecord (reduction issued)");
  }

  void start_all_gather(const std::vector<std::uint64_t>& words) override {
    words_ = words.size();
    gather_ = Kokkos::View<std::uint64_t*, Kokkos::CudaSpace>("llmk::reducer_gather",
                                                              words_ * std::size_t(size_ + 1));
    std::uint64_t* const mine = gather_.data() + words_ * std::size_t(size_);
    check_cuda(cudaMemcpyAsync(mine, words.data(), words_ * sizeof(std::uint64_t),
                               cudaMemcpyHostToDevice, stream_),
               "cudaMemcpyAsync (bucket sizes)");
    check_nccl(ncclAllGather(mine, gather_.data(), words_, ncclUint64, comm_, stream_),
               "ncclAllGather (bucket sizes)");
    check_cuda(cudaEventRecord(done_, stream_), "cudaEventRecord (exchange issued)");
  }

  std::vector<std::uint64_t> gathered() override {
    std::vector<std::uint64_t> all(words_ * std::size_t(size_));
    check_cuda(cudaMemcpy(all.data(), gather_.data(), all.size() * sizeof(std::uint64_t),
                          cudaMemcpyDeviceToHost),
               "cudaMemcpy (bucket sizes)");
    return all;
  }

  bool done() override {
    ncclResult_t async = ncclSuccess;
    check_nccl(ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError");
    if (async != ncclSuccess && async != ncclInProgress) check_nccl(async, "an NCCL collective");
    const cudaError_t status = cudaEventQuery(done_);
    if (status == cudaErrorNotReady) return false;
    check_cuda(status, "cudaEventQuery (reduction)");
    return true;
  }

  void join() override {
    check_cuda(cudaStreamWaitEvent(exec_.cuda_stream(), done_, 0), "cudaStreamWaitEvent (join)");
  }

  void abort() noexcept override { ncclCommAbort(comm_); }

 private:
  void release() noexcept {
    if (done_) cudaEventDestroy(done_);
    if (ready_) cudaEventDestroy(ready_);
    if (stream_) cudaStreamDestroy(stream_);
    done_ = ready_ = nullptr;
    stream_ = nullptr;
  }

  Kokkos::Cuda exec_;
  ncclComm_t comm_;
  int rank_ = 0, size_ = 1;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ready_ = nullptr, done_ = nullptr;
  Kokkos::View<std::uint64_t*, Kokkos::CudaSpace> gather_;
  std::size_t words_ = 0;
};

}  // namespace

Communicator<Kokkos::Cuda> nccl_communicator(ncclComm_t comm) {
  if (comm == nullptr) throw std::invalid_argument("llmk::nccl_communicator: 'comm' is null");
  int rank = 0, size = 0;
  check_nccl(ncclCommUserRank(comm, &rank), "ncclCommUserRank");
  check_nccl(ncclCommCount(comm, &size), "ncclCommCount");
  return Communicator<Kokkos::Cuda>(rank, size, "NCCL", [comm](const Kokkos::Cuda& exec) {
    return std::unique_ptr<detail::Channel<Kokkos::Cuda>>(new NcclChannel(exec, comm));
  });
}

}  // namespace llmk
