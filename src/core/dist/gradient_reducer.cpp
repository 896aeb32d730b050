// GradientReducer's logic, written once over detail::Channel (channel.hpp):
// buckets issued in registration order, each bucket's buffers checked on
// this rank and across ranks, every wait bounded by the timeout.
#include <core/dist/channel.hpp>
#include <core/spaces.hpp>
#include <core/validate.hpp>

#include <chrono>
#include <sstream>
#include <thread>

namespace llmk {

namespace {

constexpr const char* kOp = "llmk::GradientReducer";

detail::ArgInfo buffer_info(const GradientBuffer& b) {
  return {b.name.c_str(), b.data, b.count * detail::element_bytes(b.type), 1,
          {index_t(b.count), 0, 0, 0}, true, true};
}

// What every rank must agree on about a bucket: its index, buffer count,
// element count, and a hash of each buffer's count and type (FNV-1a).
std::vector<std::uint64_t> signature(int bucket, const std::vector<GradientBuffer>& buffers) {
  std::uint64_t elements = 0, hash = 1469598103934665603ull;
  const auto mix = [&hash](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) hash = (hash ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
  };
  for (const GradientBuffer& b : buffers) {
    elements += b.count;
    mix(b.count);
    mix(std::uint64_t(b.type));
  }
  return {std::uint64_t(bucket), buffers.size(), elements, hash};
}

}  // namespace

template <class ExecSpace>
struct GradientReducer<ExecSpace>::Impl {
  struct Bucket {
    std::vector<GradientBuffer> buffers;
    std::size_t bytes = 0;
    bool ready = false;
  };

  ReducerOptions options;
  int rank, size;
  std::string engine;  // for messages
  std::unique_ptr<detail::Channel<ExecSpace>> channel;
  std::vector<Bucket> buckets;
  int issued = 0;        // this step's buckets [0, issued) have been started
  bool any_ready = false;
  bool broken = false;   // a timeout aborted the channel

  std::string where() const {
    return "rank " + std::to_string(rank) + " of " + std::to_string(size);
  }

  void check_usable(const char* call) const {
    if (broken) {
      throw std::runtime_error(std::string(kOp) + "::" + call + ": an earlier reduction timed " +
                               "out and the communicator was given up (" + where() + ")");
    }
  }

  // Blocks until the channel has completed what was started, at most the
  // timeout; on a timeout the channel is aborted and `what` named.
  void await(const std::string& what) {
    using Clock = std::chrono::steady_clock;
    const auto deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(options.timeout_seconds));
    // Spin briefly (NCCL's reductions of a layer take microseconds), then
    // poll at 20 µs: an MPI rank sharing a core with its peer leaves it the core.
    for (long polls = 0; !channel->done(); ++polls) {
      if (polls > 1000) std::this_thread::sleep_for(std::chrono::microseconds(20));
      if (Clock::now() > deadline) {
        channel->abort();
        broken = true;
        std::ostringstream s;
        s << kOp << ": " << what << " did not complete within " << options.timeout_seconds
          << " s on " << where() << " (" << engine << "): a rank has failed or has not "
          << "reached it; the communicator was given up";
        throw std::runtime_error(s.str());
      }
    }
  }

  void issue_ready_prefix() {
    while (issued < int(buckets.size()) && buckets[std::size_t(issued)].ready) {
      channel->start(buckets[std::size_t(issued)].buffers, options);
      ++issued;
    }
  }
};

template <class ExecSpace>
GradientReducer<ExecSpace>::GradientReducer(const ExecSpace& exec, Communicator<ExecSpace> comm,
                                            ReducerOptions options)
    : comm_(std::move(comm)), impl_(std::make_unique<Impl>()) {
  if (!(options.timeout_seconds > 0)) {
    throw std::invalid_argument(std::string(kOp) + ": options.timeout_seconds must be positive, got " +
                                std::to_string(options.timeout_seconds));
  }
  impl_->options = options;
  impl_->rank = comm_.rank();
  impl_->size = comm_.size();
  impl_->engine = comm_.engine();
  impl_->channel = comm_.open(exec);
}

template <class ExecSpace>
GradientReducer<ExecSpace>::~GradientReducer() {
  if (!impl_ || impl_->broken || impl_->issued == 0) return;
  try {
    impl_->await("the reductions left in flight at destruction");
    impl_->channel->join();
  } catch (...) {
  }
}

template <class ExecSpace>
int GradientReducer<ExecSpace>::buckets() const {
  return int(impl_->buckets.size());
}

template <class ExecSpace>
int GradientReducer<ExecSpace>::add_bucket(std::vector<GradientBuffer> buffers) {
  Impl& s = *impl_;
  s.check_usable("add_bucket");
  if (s.any_ready) {
    throw std::logic_error(std::string(kOp) + "::add_bucket: a step is under way (ready() was " +
                           "called since the last wait()); register buckets before the first step");
  }
  const int index = int(s.buckets.size());
  const std::string op = std::string(kOp) + "::add_bucket (bucket " + std::to_string(index) + ")";
  if (buffers.empty()) throw std::invalid_argument(op + ": a bucket needs at least one buffer");
  // This rank's checks first: every rank runs them on the same arguments
  // (if the arguments differ, the exchange below says so).
  std::vector<detail::ArgInfo> all;
  std::size_t bytes = 0;
  for (const typename Impl::Bucket& b : s.buckets) {
    for (const GradientBuffer& g : b.buffers) all.push_back(buffer_info(g));
  }
  for (const GradientBuffer& g : buffers) {
    const detail::ArgInfo info = buffer_info(g);
    detail::check_memory_space<ExecSpace>(op.c_str(), {info});
    if (s.options.collective == Collective::reduce_scatter && g.count % std::size_t(s.size) != 0) {
      throw std::invalid_argument(op + ": buffer '" + g.name + "' has " + std::to_string(g.count) +
                                  " elements, not a multiple of the " + std::to_string(s.size) +
                                  " ranks: reduce_scatter gives each rank an equal shard");
    }
    all.push_back(info);
    bytes += info.bytes;
  }
  detail::check_storage(op.c_str(), all);
  s.channel->check_bucket(op, buffers, s.options);

  // The same bucket on every rank: gathered, compared, refused everywhere.
  const std::vector<std::uint64_t> mine = signature(index, buffers);
  s.channel->start_all_gather(mine);
  s.await("the exchange of bucket " + std::to_string(index) + "'s sizes");
  s.channel->join();
  const std::vector<std::uint64_t> every = s.channel->gathered();
  bool same = true;
  for (std::size_t i = 0; i < every.size(); ++i) same = same && every[i] == mine[i % mine.size()];
  if (!same) {
    std::ostringstream m;
    m << op << ": the ranks' buffers differ:";
    for (int r = 0; r < s.size; ++r) {
      const std::uint64_t* w = &every[std::size_t(r) * mine.size()];
      m << (r ? ";" : "") << " rank " << r << " has bucket " << w[0] << " of " << w[1]
        << " buffers, " << w[2] << " elements (layout hash " << std::hex << w[3] << std::dec << ")";
    }
    throw std::invalid_argument(m.str());
  }
  s.buckets.push_back({std::move(buffers), bytes, false});
  return index;
}

template <class ExecSpace>
void GradientReducer<ExecSpace>::ready(int bucket) {
  Impl& s = *impl_;
  s.check_usable("ready");
  if (bucket < 0 || bucket >= int(s.buckets.size())) {
    throw std::invalid_argument(std::string(kOp) + "::ready: bucket " + std::to_string(bucket) +
                                " does not exist (" + std::to_string(s.buckets.size()) +
                                " registered)");
  }
  typename Impl::Bucket& b = s.buckets[std::size_t(bucket)];
  if (b.ready) {
    throw std::logic_error(std::string(kOp) + "::ready: bucket " + std::to_string(bucket) +
                           " was already made ready this step");
  }
  b.ready = true;
  s.any_ready = true;
  s.issue_ready_prefix();
}

template <class ExecSpace>
void GradientReducer<ExecSpace>::wait() {
  Impl& s = *impl_;
  s.check_usable("wait");
  std::size_t bytes = 0;
  for (int i = 0; i < s.issued; ++i) bytes += s.buckets[std::size_t(i)].bytes;
  if (s.issued > 0) {
    s.await("this step's reduction of buckets 0-" + std::to_string(s.issued - 1) + " (" +
            std::to_string(bytes) + " bytes)");
    s.channel->join();
  }
  const int issued = s.issued;
  std::vector<int> not_ready;
  for (std::size_t i = 0; i < s.buckets.size(); ++i) {
    if (!s.buckets[i].ready) not_ready.push_back(int(i));
    s.buckets[i].ready = false;
  }
  s.issued = 0;
  s.any_ready = false;
  if (!not_ready.empty()) {
    std::ostringstream m;
    m << kOp << "::wait: bucket";
    for (int i : not_ready) m << ' ' << i;
    m << " not made ready this step: buckets " << issued << " to " << s.buckets.size() - 1
      << " were not reduced (reductions are issued in bucket order)";
    throw std::logic_error(m.str());
  }
}

#define LLMK_INSTANTIATE_REDUCER(Space) template class GradientReducer<Space>;
LLMK_FOR_EACH_SPACE(LLMK_INSTANTIATE_REDUCER)
#undef LLMK_INSTANTIATE_REDUCER

}  // namespace llmk
