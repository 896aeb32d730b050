// The MPI engine of GradientReducer (llmk/mpi.hpp): host-space gradients,
// non-blocking collectives on the reducer's own duplicate of the caller's
// communicator.
#include <llmk/mpi.hpp>

#include <core/dist/channel.hpp>
#include <core/spaces.hpp>

#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <string>

namespace llmk {

namespace {

void check_mpi(int status, const char* call) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw std::runtime_error(std::string("llmk: ") + call + " failed: " + std::string(text, length));
}

// MPI has no bf16: inout ⟵ in + inout, summed in float, rounded once.
void bf16_sum(void* in, void* inout, int* length, MPI_Datatype*) {
  const bf16* a = static_cast<const bf16*>(in);
  bf16* b = static_cast<bf16*>(inout);
  for (int i = 0; i < *length; ++i) b[i] = bf16(float(a[i]) + float(b[i]));
}

// MPI counts are int: an all-reduce goes in pieces of at most 2³⁰ elements.
constexpr std::size_t kPiece = std::size_t(1) << 30;

template <class ExecSpace>
class MpiChannel final : public detail::Channel<ExecSpace> {
 public:
  MpiChannel(const ExecSpace& exec, MPI_Comm comm) : exec_(exec) {
    check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    check_mpi(MPI_Type_contiguous(2, MPI_BYTE, &bf16_type_), "MPI_Type_contiguous");
    check_mpi(MPI_Type_commit(&bf16_type_), "MPI_Type_commit");
    check_mpi(MPI_Op_create(&bf16_sum, /*commute=*/1, &bf16_sum_), "MPI_Op_create");
  }

  ~MpiChannel() override {
    if (aborted_) return;  // requests still pending: MPI cannot free what they use
    MPI_Op_free(&bf16_sum_);
    MPI_Type_free(&bf16_type_);
    MPI_Comm_free(&comm_);
  }

  void check_bucket(const std::string& op, const std::vector<GradientBuffer>& buffers,
                    const ReducerOptions& options) const override {
    if (options.collective != Collective::reduce_scatter) return;
    for (const GradientBuffer& b : buffers) {
      if (b.count / std::size_t(size_) > std::size_t(INT_MAX)) {
        throw std::invalid_argument(op + ": buffer '" + b.name + "' has " +
                                    std::to_string(b.count) + " elements: a shard over 2³¹ − 1 "
                                    "elements is more than MPI_Ireduce_scatter_block takes");
      }
    }
  }

  void start(const std::vector<GradientBuffer>& buffers, const ReducerOptions& options) override {
    exec_.fence();  // the backward's writes to the buffers are done
    for (const GradientBuffer& b : buffers) {
      const bool f32 = b.type == DType::f32;
      const MPI_Datatype type = f32 ? MPI_FLOAT : bf16_type_;
      const MPI_Op sum = f32 ? MPI_SUM : bf16_sum_;
      char* const data = static_cast<char*>(b.data);
      if (options.collective == Collective::all_reduce) {
        for (std::size_t first = 0; first < b.count; first += kPiece) {
          const int n = int(std::min(kPiece, b.count - first));
          requests_.emplace_back();
          check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data + first * detail::element_bytes(b.type), n, type,
                                   sum, comm_, &requests_.back()),
                    "MPI_Iallreduce");
        }
      } else {
        // In place, the reduced shard lands at the buffer's start; join()
        // moves it to the rank's own place.
        requests_.emplace_back();
        check_mpi(MPI_Ireduce_scatter_block(MPI_IN_PLACE, data, int(b.count / std::size_t(size_)),
                                            type, sum, comm_, &requests_.back()),
                  "MPI_Ireduce_scatter_block");
      }
      if (options.reduction == Reduction::average ||
          options.collective == Collective::reduce_scatter) {
        finish_.push_back({b, options});
      }
    }
    done();  // a first push: MPI progresses only inside its calls
  }

  void start_all_gather(const std::vector<std::uint64_t>& words) override {
    send_ = words;
    all_.assign(words.size() * std::size_t(size_), 0);
    requests_.emplace_back();
    check_mpi(MPI_Iallgather(send_.data(), int(send_.size()), MPI_UINT64_T, all_.data(),
                             int(send_.size()), MPI_UINT64_T, comm_, &requests_.back()),
              "MPI_Iallgather");
  }

  std::vector<std::uint64_t> gathered() override { return all_; }

  bool done() override {
    if (requests_.empty()) return true;
    int flag = 0;
    check_mpi(MPI_Testall(int(requests_.size()), requests_.data(), &flag, MPI_STATUSES_IGNORE),
              "MPI_Testall");
    if (flag) requests_.clear();
    return flag != 0;
  }

  void join() override {
    for (const Finish& f : finish_) finish(f);
    finish_.clear();
  }

  void abort() noexcept override { aborted_ = true; }

 private:
  struct Finish {
    GradientBuffer buffer;
    ReducerOptions options;
  };

  // The shard moved to its place (reduce_scatter), the average taken.
  void finish(const Finish& f) const {
    const GradientBuffer& b = f.buffer;
    const std::size_t bytes = detail::element_bytes(b.type);
    std::size_t first = 0, count = b.count;
    if (f.options.collective == Collective::reduce_scatter) {
      count = b.count / std::size_t(size_);
      first = count * std::size_t(rank_);
      char* const data = static_cast<char*>(b.data);
      std::memmove(data + first * bytes, data, count * bytes);
    }
    if (f.options.reduction != Reduction::average) return;
    const float ranks = float(size_);
    const index_t begin = index_t(first), end = index_t(first + count);
    if (b.type == DType::f32) {
      float* const x = static_cast<float*>(b.data);
      Kokkos::parallel_for("llmk::mpi_average", Range<ExecSpace>(exec_, begin, end),
                           [=](index_t i) { x[i] = x[i] / ranks; });
    } else {
      bf16* const x = static_cast<bf16*>(b.data);
      Kokkos::parallel_for("llmk::mpi_average", Range<ExecSpace>(exec_, begin, end),
                           [=](index_t i) { x[i] = bf16(float(x[i]) / ranks); });
    }
    exec_.fence();
  }

  ExecSpace exec_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  MPI_Datatype bf16_type_ = MPI_DATATYPE_NULL;
  MPI_Op bf16_sum_ = MPI_OP_NULL;
  std::vector<MPI_Request> requests_;
  std::vector<Finish> finish_;
  std::vector<std::uint64_t> send_, all_;
  bool aborted_ = false;
};

}  // namespace

template <class ExecSpace>
Communicator<ExecSpace> mpi_communicator(MPI_Comm comm) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    throw std::invalid_argument("llmk::mpi_communicator: MPI is not initialized (MPI_Init first, "
                                "MPI_Finalize after the reducers are gone)");
  }
  if (comm == MPI_COMM_NULL) {
    throw std::invalid_argument("llmk::mpi_communicator: 'comm' is MPI_COMM_NULL");
  }
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  return Communicator<ExecSpace>(rank, size, "MPI", [comm](const ExecSpace& exec) {
    return std::unique_ptr<detail::Channel<ExecSpace>>(new MpiChannel<ExecSpace>(exec, comm));
  });
}

#define LLMK_INSTANTIATE_MPI(Space) template Communicator<Space> mpi_communicator<Space>(MPI_Comm);
LLMK_FOR_EACH_HOST_SPACE(LLMK_INSTANTIATE_MPI)
#undef LLMK_INSTANTIATE_MPI

}  // namespace llmk
