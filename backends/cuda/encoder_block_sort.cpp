// The encoder backward's "block_sort" (ops/encoder_backward/block_sort.hpp
// says what and why): one block sorts the positions by token and lists the
// runs; a block a run (and a block a row of dwpe) sums them.
#include <ops/encoder_backward/block_sort.hpp>

#include <core/context_state.hpp>

#include <backends/cuda/cuda_checks.hpp>
#include <ops/encoder_backward/kernels.hpp>
#include <kernels/update.hpp>
#include <llmk/bf16.hpp>

#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

#include <cstdint>

namespace llmk::op::encoder_backward {
namespace {

constexpr int kRun = kernels::kEncoderRun;

// The workspace's ints (block_sort_ints(V, M)): the runs first (16-byte
// entries on the workspace's alignment).
struct SortSpace {
  int4* runs;     // M: {first slot, its token's first slot, the token, 0}
  int* sorted;    // M: the positions by token, increasing within a token
  int* end_of;    // M: at a token's first slot, the slot past its last
  int* counters;  // M: at a token's first slot, its runs summed so far
  int* present;   // V: 1 where a token is present (an overwritten dwte's zeros)
  int* found;     // 2: the first bad position (−1: none; checked only), the runs listed
};

SortSpace sort_space(int* ints, index_t V, index_t M) {
  SortSpace w;
  w.runs = reinterpret_cast<int4*>(ints);
  w.sorted = ints + 4 * M;
  w.end_of = w.sorted + M;
  w.counters = w.end_of + M;
  w.present = w.counters + M;
  w.found = w.present + V;
  return w;
}

// --- sums in a fixed order -------------------------------------------------

constexpr int kBatch = kernels::kEncoderBatch;

template <class In, class DWte, class DWpe>
struct SumArgs {
  const In* dout;  // M × C
  DWte* dwte;      // V × C
  DWpe* dwpe;      // T × C
  SortSpace w;
  float* partials;
  int C, T, B;
  bool overwrite_dwte, overwrite_dwpe;
  bool checked;  // the tokens checked: w.found[0] ≥ 0 (a bad one) writes nothing
};

// Whether a launch after the check finds a bad token (it then writes nothing).
template <class A>
__device__ inline bool refused(const A& a) {
  return a.checked && a.w.found[0] >= 0;
}

// sum[k] = Σ_{q < n} value(q, k) added in order of q, a batch of kBatch
// rows' values (every lane's) loaded before they are added.
template <int kLanes, class Value>
__device__ inline void sum_in_order(const int n, const Value& value, float (&sum)[kLanes]) {
#pragma unroll
  for (int k = 0; k < kLanes; ++k) sum[k] = 0;
  int q = 0;
  for (; q + kBatch <= n; q += kBatch) {
    float v[kBatch][kLanes];
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
#pragma unroll
      for (int k = 0; k < kLanes; ++k) v[u][k] = value(q + u, k);
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
#pragma unroll
      for (int k = 0; k < kLanes; ++k) sum[k] += v[u][k];
  }
  for (; q < n; ++q)
#pragma unroll
    for (int k = 0; k < kLanes; ++k) sum[k] += value(q, k);
}

// For each of a block's passes over the C channels (kThreads·kLanes a
// pass: thread x's channels c0 + x + k·kThreads), sum[k] = Σ_{q < n} of
// element(q, c) in order of q, then done(c, sum[k]) for each channel below C.
template <int kThreads, int kLanes, class Element, class Done>
__device__ inline void sum_channels(const int C, const int n, const Element& element,
                                    const Done& done) {
  float sum[kLanes];
  for (int c0 = 0; c0 < C; c0 += kThreads * kLanes) {
    const auto channel = [&](const int k) { return c0 + int(threadIdx.x) + k * kThreads; };
    sum_in_order<kLanes>(
        n, [&](const int q, const int k) { return channel(k) < C ? element(q, channel(k)) : 0.0f; },
        sum);
#pragma unroll
    for (int k = 0; k < kLanes; ++k)
      if (channel(k) < C) done(channel(k), sum[k]);
  }
}

// dwpe's row t: its B rows of dout in order of b.
template <int kThreads, int kLanes, class A>
__device__ inline void dwpe_row(const A& a, const int t) {
  sum_channels<kThreads, kLanes>(
      a.C, a.B,
      [&](const int b, const int c) { return to_float(a.dout[(index_t(b) * a.T + t) * a.C + c]); },
      [&](const int c, const float sum) {
        kernels::update(a.dwpe[index_t(t) * a.C + c], sum, a.overwrite_dwpe);
      });
}

struct SortArgs {
  const int* tokens;
  int M, V;
  int bits;           // bit_width(V): the keys' bits
  bool mark_present;  // dwte overwritten: its absent rows are zeroed after
  int* host_word;     // checked: the context's pinned word for the verdict (else null)
};

struct MaxOf {
  __device__ int operator()(const int a, const int b) const { return a > b ? a : b; }
};

template <int kThreads, int kItems>
struct BlockSorter {
  static constexpr int capacity = kThreads * kItems;
  using Sort = cub::BlockRadixSort<unsigned, kThreads, kItems, int>;
  using Scan = cub::BlockScan<int, kThreads>;
  struct Shared {
    union {
      typename Sort::TempStorage sort;
      typename Scan::TempStorage scan;
    } tmp;
    unsigned first_key[kThreads], last_key[kThreads];  // each thread's, for its neighbours
  };
};

// Whether any of the M tokens is outside [0, V), for every thread of the
// block: each thread's loads all in flight, then one barrier.
template <int kThreads>
__device__ inline bool any_bad_token(const int* tokens, const int M, const int V) {
  constexpr int kLoads = 8;
  bool bad = false;
  for (int i0 = int(threadIdx.x); i0 < M; i0 += kLoads * kThreads) {
    int t[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const int i = i0 + u * kThreads;
      t[u] = i < M ? __ldg(tokens + i) : 0;
    }
#pragma unroll
    for (int u = 0; u < kLoads; ++u) bad |= t[u] < 0 || t[u] >= V;
  }
  return __syncthreads_or(bad) != 0;
}

// The block's first bad position (−1: none), from each thread's, into
// found[0] (read by the later launches) and the pinned host word (read by
// the host once the event after this launch has passed).
__device__ inline void write_verdict(const SortArgs& a, const int mine, int* found) {
  __shared__ int first_bad;
  if (threadIdx.x == 0) first_bad = a.M;
  __syncthreads();
  if (mine < a.M) atomicMin(&first_bad, mine);
  __syncthreads();
  if (threadIdx.x != 0) return;
  const int verdict = first_bad < a.M ? first_bad : -1;
  found[0] = verdict;
  *a.host_word = verdict;
  __threadfence_system();
}

// Block 0: the M positions sorted by token (the key: a token outside
// [0, V) gets the largest key, 2^bits − 1 ≥ V, and sorts last, skipped),
// stable, so within a token in increasing position order; then, over the
// sorted slots, each token's first slot (a max scan of the first slots of
// tokens), the runs' first slots (every kRun-th slot of a token) listed by
// an exclusive sum, and each token's end. Checked, before it sorts, it
// writes the first bad position (−1: none) where the later launches read
// it (found[0]) and into the context's pinned host word. Blocks 1 to T:
// dwpe's rows, which need no sort, on the SMs the sorting block leaves
// idle (H200, GPT-2's shape: the sort alone 14-29 µs, ncu); checked, each
// reads all the tokens first (from L2, while block 0 sorts) and writes
// nothing if one is bad: none of them can wait for block 0's verdict.
template <int kThreads, int kItems, class In, class DWte, class DWpe>
__global__ void __launch_bounds__(kThreads)
    encoder_block_sort(const SortArgs a, const SumArgs<In, DWte, DWpe> rows) {
  if (blockIdx.x > 0) {
    if (rows.checked && any_bad_token<kThreads>(a.tokens, a.M, a.V)) return;
    return dwpe_row<kThreads, (1024 + kThreads - 1) / kThreads>(rows, blockIdx.x - 1);
  }
  using Sorter = BlockSorter<kThreads, kItems>;
  const SortSpace& w = rows.w;
  extern __shared__ __align__(16) unsigned char raw[];
  auto& sh = *reinterpret_cast<typename Sorter::Shared*>(raw);
  const int x = int(threadIdx.x);
  const unsigned invalid = (1u << a.bits) - 1u;
  for (int i = x; i < a.M; i += kThreads) w.counters[i] = 0;
  if (a.mark_present)
    for (int v = x; v < a.V; v += kThreads) w.present[v] = 0;
  __syncthreads();

  unsigned key[kItems];
  int position[kItems];  // thread x holds positions x·kItems + u (blocked, as the sort wants)
  int first_bad = a.M;   // this thread's
#pragma unroll
  for (int u = 0; u < kItems; ++u) {
    const int i = x * kItems + u;
    position[u] = i;
    key[u] = invalid;
    if (i < a.M) {
      const int t = a.tokens[i];
      // A bad token gets no row of dwte: skipped (unchecked), or the
      // verdict's first bad position (checked).
      if (t >= 0 && t < a.V)
        key[u] = unsigned(t);
      else if (first_bad == a.M)
        first_bad = i;
    }
  }
  if (rows.checked) write_verdict(a, first_bad, w.found);
  typename Sorter::Sort(sh.tmp.sort).Sort(key, position, 0, a.bits);
  // Now blocked again: thread x holds slots x·kItems + u, in order.
  sh.first_key[x] = key[0];
  sh.last_key[x] = key[kItems - 1];
  __syncthreads();  // (and the sort's storage free for the scans)

  int start[kItems];  // the first slot of the slot's token
#pragma unroll
  for (int u = 0; u < kItems; ++u) {
    const int slot = x * kItems + u;
    const unsigned previous = u > 0 ? key[u - 1] : x > 0 ? sh.last_key[x - 1] : invalid;
    start[u] = key[u] != invalid && (slot == 0 || previous != key[u]) ? slot : 0;
  }
  typename Sorter::Scan(sh.tmp.scan).InclusiveScan(start, start, MaxOf());
  __syncthreads();
  int first_of_run[kItems], index[kItems], runs = 0;
#pragma unroll
  for (int u = 0; u < kItems; ++u)
    first_of_run[u] = key[u] != invalid && (x * kItems + u - start[u]) % kRun == 0;
  typename Sorter::Scan(sh.tmp.scan).ExclusiveSum(first_of_run, index, runs);

#pragma unroll
  for (int u = 0; u < kItems; ++u) {
    if (key[u] == invalid) continue;
    const int slot = x * kItems + u;
    w.sorted[slot] = position[u];
    const unsigned next = u + 1 < kItems     ? key[u + 1]
                          : x + 1 < kThreads ? sh.first_key[x + 1]
                                             : invalid;
    if (next != key[u]) w.end_of[start[u]] = slot + 1;
    if (first_of_run[u]) w.runs[index[u]] = make_int4(slot, start[u], int(key[u]), 0);
    if (a.mark_present && slot == start[u]) w.present[key[u]] = 1;
  }
  if (x == 0) w.found[1] = runs;
}

static_assert(BlockSorter<1024, 16>::capacity == kBlockSortMaxPositions);

template <int kThreads, int kItems, class In, class DWte, class DWpe>
void launch_sort(const SortArgs& a, const SumArgs<In, DWte, DWpe>& rows, cudaStream_t stream) {
  const auto kernel = encoder_block_sort<kThreads, kItems, In, DWte, DWpe>;
  const int bytes = int(sizeof(typename BlockSorter<kThreads, kItems>::Shared));
  backends::check_cuda(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
      "encoder block_sort: cudaFuncSetAttribute (the sort's shared memory)");
  kernel<<<unsigned(1 + rows.T), kThreads, bytes, stream>>>(a, rows);
  backends::check_cuda(cudaGetLastError(), "encoder block_sort: sort launch");
}

// --- the runs' sums ----------------------------------------------------------

constexpr int kSumThreads = 256;
constexpr int kSumLanes = 4;  // channels a thread a pass: 1024 a pass

// The blocks take the runs r = blockIdx.x + k·gridDim.x below the sort's
// count, a block a run: its positions staged in shared memory, its sum
// added to dwte (a token of one run) or kept in partials; the token's last
// run to finish (its counter) adds the runs' sums in order.
template <class In, class DWte, class DWpe>
__global__ void __launch_bounds__(kSumThreads) encoder_block_runs(const SumArgs<In, DWte, DWpe> a) {
  if (refused(a)) return;
  __shared__ int rows[kRun];
  __shared__ int last;
  const int x = int(threadIdx.x), C = a.C, runs_listed = a.w.found[1];
  for (int r = int(blockIdx.x); r < runs_listed; r += int(gridDim.x)) {
    const int4 run = a.w.runs[r];
    const int first = run.x, start = run.y, token = run.z, end = a.w.end_of[start];
    const int n = end - first < kRun ? end - first : kRun;
    __syncthreads();  // the previous run's rows read
    if (x < n) rows[x] = a.w.sorted[first + x];
    __syncthreads();
    const bool one_run = end - start <= kRun;
    DWte* const out = a.dwte + index_t(token) * C;
    float* const partial = a.partials + kernels::encoder_partial_row(start, first) * C;
    sum_channels<kSumThreads, kSumLanes>(
        C, n, [&](const int q, const int c) { return to_float(a.dout[index_t(rows[q]) * C + c]); },
        [&](const int c, const float sum) {
          if (one_run)
            kernels::update(out[c], sum, a.overwrite_dwte);
          else
            partial[c] = sum;
        });
    if (one_run) continue;
    // The partials visible device-wide before the counter says so.
    __threadfence();
    __syncthreads();
    const int runs = (end - start + kRun - 1) / kRun;
    if (x == 0) last = atomicAdd(&a.w.counters[start], 1) == runs - 1;
    __syncthreads();
    if (!last) continue;
    __threadfence();
    const float* const partials = a.partials + kernels::encoder_partial_row(start, start) * C;
    sum_channels<kSumThreads, kSumLanes>(
        C, runs,
        [&](const int j, const int c) { return __ldcg(&partials[index_t(j) * C + c]); },  // L2
        [&](const int c, const float sum) { kernels::update(out[c], sum, a.overwrite_dwte); });
  }
}

// An overwritten dwte's rows of absent tokens: zeros.
template <class In, class DWte, class DWpe>
__global__ void encoder_zero_absent(const SumArgs<In, DWte, DWpe> a, const index_t elements) {
  if (refused(a)) return;
  DWte* const dwte = a.dwte;
  const int* const present = a.w.present;
  const int C = a.C;
  for (index_t i = index_t(blockIdx.x) * blockDim.x + threadIdx.x; i < elements;
       i += index_t(gridDim.x) * blockDim.x)
    if (present[i / C] == 0) dwte[i] = from_float<DWte>(0.0f);
}

// The context's verdict of the tokens' check: a pinned word the sort's
// block writes (mapped: no copy queued after the sort) and the event after
// the sort's launch, which the host waits on.
class TokenVerdict {
 public:
  explicit TokenVerdict(const Kokkos::Cuda& exec) {
    const backends::DeviceScope device(exec.cuda_device());
    backends::check_cuda(cudaHostAlloc(&host_, sizeof(int), cudaHostAllocMapped),
                         "encoder block_sort: cudaHostAlloc (the tokens' verdict)");
    try {
      backends::check_cuda(cudaHostGetDevicePointer(&device_, host_, 0),
                           "encoder block_sort: cudaHostGetDevicePointer");
      backends::check_cuda(cudaEventCreateWithFlags(&checked_, cudaEventDisableTiming),
                           "encoder block_sort: cudaEventCreate");
    } catch (...) {
      cudaFreeHost(host_);
      throw;
    }
  }
  ~TokenVerdict() {
    cudaEventDestroy(checked_);
    cudaFreeHost(host_);
  }
  TokenVerdict(const TokenVerdict&) = delete;
  TokenVerdict& operator=(const TokenVerdict&) = delete;

  // The word the sort's block writes.
  int* device_word() const { return device_; }
  // After the sort's launch.
  void record(cudaStream_t stream) {
    backends::check_cuda(cudaEventRecord(checked_, stream),
                         "encoder block_sort: cudaEventRecord (after the sort)");
  }
  // The first bad position or −1, once the sort's launch has run.
  index_t wait() const {
    backends::check_cuda(cudaEventSynchronize(checked_),
                         "encoder block_sort: waiting for the tokens' check");
    return index_t(*static_cast<volatile const int*>(host_));
  }

 private:
  int* host_ = nullptr;
  int* device_ = nullptr;
  cudaEvent_t checked_ = nullptr;
};

template <class Args>
auto sum_args(const Args& a, int* ints, float* partials, const bool checked) {
  const index_t V = index_t(a.dwte.extent(0)), M = index_t(a.tokens.extent(0));
  using In = typename decltype(a.dout)::non_const_value_type;
  using DWte = typename decltype(a.dwte)::value_type;
  using DWpe = typename decltype(a.dwpe)::value_type;
  return SumArgs<In, DWte, DWpe>{
      a.dout.data(),    a.dwte.data(),         a.dwpe.data(), sort_space(ints, V, M),
      partials,         int(a.dwte.extent(1)), int(a.T),      int(a.B),
      a.overwrite_dwte, a.overwrite_dwpe,      checked};
}

}  // namespace

template <class ExecSpace, class Args>
index_t block_sort_run(detail::ContextState<ExecSpace>& ctx, const ExecSpace& exec, const Args& a,
                       int* ints, float* partials, const bool check) {
  const index_t V = index_t(a.dwte.extent(0)), M = index_t(a.tokens.extent(0));
  const index_t C = index_t(a.dwte.extent(1));
  const cudaStream_t stream = exec.cuda_stream();
  const auto s = sum_args(a, ints, partials, check);
  TokenVerdict* const verdict = check ? &ctx.template resource<TokenVerdict>() : nullptr;

  SortArgs sort{a.tokens.data(), int(M), int(V), 0, a.overwrite_dwte,
                verdict ? verdict->device_word() : nullptr};
  while (sort.bits < 31 && (index_t(1) << sort.bits) <= V) ++sort.bits;  // 2^bits − 1 ≥ V
  if (M <= BlockSorter<512, 16>::capacity)
    launch_sort<512, 16>(sort, s, stream);
  else
    launch_sort<1024, 16>(sort, s, stream);
  if (verdict) verdict->record(stream);

  // The runs' count stays on the device: at most ⌈M/R⌉ + min(M, V) runs
  // (Σ ⌈n/R⌉ ≤ Σ (n/R + 1)), taken by the blocks that fit the GPU at once,
  // each looping (a block per possible run left ~7400 idle blocks at
  // GPT-2's shape: 35 µs where 1056 runs took 14, ncu on the H200).
  const index_t resident =
      index_t(exec.cuda_device_prop().multiProcessorCount) * (2048 / kSumThreads);
  const index_t bound = (M + kRun - 1) / kRun + (M < V ? M : V);
  encoder_block_runs<<<unsigned(bound < resident ? bound : resident), kSumThreads, 0, stream>>>(s);
  backends::check_cuda(cudaGetLastError(), "encoder block_sort: sums launch");
  if (a.overwrite_dwte) {
    const index_t elements = V * C, zero_blocks = (elements + 255) / 256;
    encoder_zero_absent<<<unsigned(zero_blocks < 4096 ? zero_blocks : 4096), 256, 0, stream>>>(
        s, elements);
    backends::check_cuda(cudaGetLastError(), "encoder block_sort: zeroing absent rows");
  }
  return verdict ? verdict->wait() : -1;
}

#define LLMK_ENCODER_BLOCK_SORT(P)                                                          \
  template index_t block_sort_run(detail::ContextState<Kokkos::Cuda>&, const Kokkos::Cuda&, \
                                  const Problem<Kokkos::Cuda, P>::Args&, int*, float*, bool);
LLMK_ENCODER_BLOCK_SORT(Fp32)
LLMK_ENCODER_BLOCK_SORT(Bf16)
LLMK_ENCODER_BLOCK_SORT(Bf16Fp32Grad)
#undef LLMK_ENCODER_BLOCK_SORT

}  // namespace llmk::op::encoder_backward
