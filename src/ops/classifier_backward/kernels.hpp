// The classifier backward's kernels (llmk/classifier_backward.hpp has the
// formulas):
//  - classifier_rows_naive: a thread per row, three passes over it (its max,
//    its sum of exponentials, dlogits): the baseline;
//  - ClassifierRows (run_classifier_rows): a team per row, as llm.c's
//    fused_classifier. Each lane takes packs p = lane + k·(team's lanes) of
//    N consecutive elements (16 bytes where Vp is a multiple of the pack and
//    the rows are aligned to it, else N = 1), U of them in flight at once;
//    the rows from the last (as llm.c: the classifier's matmul wrote those
//    last, so they may still be in L2):
//      1. one online pass, from the row's end back, keeps a running (max,
//         sum of exp(x − max)) per lane, the sum rescaled when the max grows
//         (Online);
//      2. the lanes' pairs are merged over the warp (Kokkos' vector
//         reduction) and over the team's warps in order (team scratch, one
//         barrier): the row's max and sum;
//      3. a second pass reads the row again from its start, which the first
//         pass read last (in the cache if any of the row is), and writes dlogits = (exp(x −
//         max)/sum − [c = t])·dloss, columns [V, Vp) zero;
//      4. one lane writes the loss, log(sum) + max − x_t, x_t read by every
//         lane before the barrier (so that dlogits may be the logits' buffer).
//    The probabilities are never stored. Deterministic: every order is
//    fixed by Vp and the tuning.
//  - count_bad_targets / first_bad_target: the targets' check.
// exp(x − max) is exp2((x − max)·log2(e)): CUDA's exp2f is the hardware's
// ex2 where expf adds a range reduction, and the kernel computes two
// exponentials per element of a row read at ~4 TB/s. The loss adds log(sum)
// to max − x_t (exact for close values), not to max first: at logits near
// 1000, max + log(sum) rounds to float's 6e-5 there (6e-4 seen in a loss,
// with the drift above).
#pragma once

#include <kernels/fast_math.hpp>
#include <kernels/pack.hpp>
#include <kernels/static_for.hpp>
#include <kernels/tuning.hpp>
#include <llmk/bf16.hpp>
#include <llmk/compat.hpp>
#include <llmk/types.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace llmk::kernels {

template <class ExecSpace, class T>
struct ClassifierArgs {
  Matrix<ExecSpace, T> dlogits;                  // M × Vp (may be logits' memory), or
                                                 // empty: losses alone (classifier_forward)
  ConstMatrix<ExecSpace, T> logits;              // M × Vp
  Vector<ExecSpace, float> losses;               // M, or empty
  ConstVector<ExecSpace, std::int32_t> targets;  // M
  ConstVector<ExecSpace, float> dloss;           // M, or empty: dloss_value
  float dloss_value = 1.0f;
  int V = 0;  // the real columns [0, V) of a row
};

inline constexpr float kLog2e = 1.4426950408889634f;

KOKKOS_INLINE_FUNCTION float neg_inf() { return -std::numeric_limits<float>::infinity(); }
KOKKOS_INLINE_FUNCTION float quiet_nan() { return std::numeric_limits<float>::quiet_NaN(); }

template <class Args>
KOKKOS_INLINE_FUNCTION float classifier_dloss(const Args& a, const index_t m) {
  return a.dloss.extent(0) != 0 ? a.dloss(m) : a.dloss_value;
}

// --- naive ----------------------------------------------------------------------

template <class ExecSpace, class Args>
void classifier_rows_naive(const ExecSpace& exec, const Args& a) {
  const int V = a.V, Vp = int(a.logits.extent(1));
  Kokkos::parallel_for(
      "llmk::classifier_naive", Range<ExecSpace>(exec, 0, index_t(a.logits.extent(0))),
      KOKKOS_LAMBDA(const index_t m) {
        float max = neg_inf();
        for (int c = 0; c < V; ++c) {
          const float x = to_float(a.logits(m, c));
          max = x > max ? x : max;
        }
        float sum = 0;
        for (int c = 0; c < V; ++c) sum += fast_exp(to_float(a.logits(m, c)) - max);
        const int t = a.targets(m);
        const float x_t = t >= 0 && t < V ? to_float(a.logits(m, t)) : quiet_nan();
        if (a.losses.extent(0) != 0) a.losses(m) = compat::log(sum) + (max - x_t);
        if (a.dlogits.data() == nullptr) return;
        const float scale = classifier_dloss(a, m), inv_sum = 1.0f / sum;
        using T = typename decltype(a.dlogits)::value_type;
        for (int c = 0; c < Vp; ++c) {
          const float p = fast_exp(to_float(a.logits(m, c)) - max) * inv_sum;
          a.dlogits(m, c) = from_float<T>(c < V ? (p - (c == t ? 1.0f : 0.0f)) * scale : 0.0f);
        }
      });
}

// --- fused ----------------------------------------------------------------------

// A running max and sum of exp(x − max) over some of a row's elements;
// merging two rescales the sum of the smaller max. Kokkos' reductions join
// with +=, so += merges. A sum is rescaled only when its max changes: with
// exp(max − m) for an unchanged max computed as exp2 of an FMA's residual,
// a first version multiplied every pack's sum by 1 + ~2e-7 (4e-5 at logits
// near 1000) and drifted by 1e-3 over a row.
struct Online {
  float max = neg_inf(), sum = 0;

  // exp(d) for d = x − max ≤ 0, subtracted first: exact where x is near max,
  // and no rounding of x·log2(e) at large logits (a relative error of 4e-5
  // on every exponential at logits near 1000).
  // d ≤ 0 (or NaN): fast_exp2_nonpositive.
  KOKKOS_INLINE_FUNCTION static float exp_of(const float d) {
    return fast_exp2_nonpositive(d * kLog2e);
  }

  KOKKOS_INLINE_FUNCTION void merge(const float o_max, const float o_sum) {
    if (o_max > max) {
      sum = sum * exp_of(max - o_max) + o_sum;  // exp(−inf) = 0 for an empty one
      max = o_max;
    } else if (max == neg_inf()) {  // both empty (0), or a NaN that must come through
      sum += o_sum;
    } else {
      sum += o_sum * exp_of(o_max - max);
    }
  }
  KOKKOS_INLINE_FUNCTION Online& operator+=(const Online& o) {
    merge(o.max, o.sum);
    return *this;
  }
  // Kokkos 3.4's reducers join through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile Online& o) volatile {
    Online self;
    self.max = max, self.sum = sum;
    self.merge(o.max, o.sum);
    max = self.max, sum = self.sum;
  }

  // The real elements (columns below V) of N values starting at column c0.
  template <int N>
  KOKKOS_INLINE_FUNCTION void add(const float (&v)[N], const int c0, const int V) {
    if (c0 >= V) return;  // padding only
    float block_max = neg_inf();
    static_for<N>([&](const int u) {
      if (c0 + u < V && v[u] > block_max) block_max = v[u];
    });
    if (block_max > max) {
      sum *= exp_of(max - block_max);
      max = block_max;
    }
    if (max == neg_inf()) {  // −inf so far (0 to the sum) or NaN (which must come through)
      static_for<N>([&](const int u) {
        if (c0 + u < V && v[u] != neg_inf()) sum += v[u];
      });
      return;
    }
    float s = sum;
    static_for<N>([&](const int u) {
      if (c0 + u < V) s += exp_of(v[u] - max);
    });
    sum = s;
  }
};

}  // namespace llmk::kernels

namespace Kokkos {
template <>
struct reduction_identity<llmk::kernels::Online> {
  KOKKOS_FORCEINLINE_FUNCTION static llmk::kernels::Online sum() { return {}; }
};
}  // namespace Kokkos

namespace llmk::kernels {

// N elements of T loaded and stored as one: a 16-byte pack, or one element.
template <class T, int N>
struct ElemsOf {
  PackOfSize<T, N> pack;
  KOKKOS_INLINE_FUNCTION void load(const T* p) { pack = load_pack<PackOfSize<T, N>>(p); }
  KOKKOS_INLINE_FUNCTION void store(T* p) const { store_pack(p, pack); }
  KOKKOS_INLINE_FUNCTION float get(const int u) const { return pack.get(u); }
  KOKKOS_INLINE_FUNCTION void set(const int u, const float f) { pack.set(u, f); }
};
template <class T>
struct ElemsOf<T, 1> {
  T value;
  KOKKOS_INLINE_FUNCTION void load(const T* p) { value = *p; }
  KOKKOS_INLINE_FUNCTION void store(T* p) const { *p = value; }
  KOKKOS_INLINE_FUNCTION float get(const int) const { return to_float(value); }
  KOKKOS_INLINE_FUNCTION void set(const int, const float f) { value = from_float<T>(f); }
};

template <class ExecSpace, class T, int N, class Tuning = ClassifierTuning<ExecSpace>>
class ClassifierRows {
 public:
  using Args = ClassifierArgs<ExecSpace, T>;
  using Policy =
      Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>, typename Tuning::launch_bounds>;
  using Member = typename Policy::member_type;
  static constexpr int W = Tuning::team_size, L = Tuning::vector_length;
  static constexpr int U = Tuning::unroll;  // packs a lane has in flight

  explicit ClassifierRows(const Args& a) : a_(a), V_(a.V), packs_(int(a.logits.extent(1)) / N) {}

  void run(const ExecSpace& exec) const {
    Policy policy(exec, index_t(a_.logits.extent(0)), W, L);
    Kokkos::parallel_for("llmk::classifier_rows",
                         policy.set_scratch_size(0, Kokkos::PerTeam(sizeof(Online) * W)), *this);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    // The last rows first: those the classifier's matmul wrote last, still
    // in L2 when it ran just before (as llm.c).
    const index_t m = index_t(a_.logits.extent(0)) - 1 - team.league_rank();
    const T* const x = &a_.logits(m, 0);
    T* const dx = a_.dlogits.data() ? &a_.dlogits(m, 0) : nullptr;
    const int t = a_.targets(m);
    // Read by every lane now: dlogits may overwrite it after the barrier.
    const float x_t = t >= 0 && t < V_ ? to_float(x[t]) : quiet_nan();
    const int first = team.team_rank() * L, stride = W * L;

    Online mine;
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, L),
        [&](const int lane, Online& part) {
          // From the row's end back (pack packs_ − 1 − p): its start, read
          // last, is what the cache holds surely when the second pass begins.
          for (int p0 = first + lane; p0 < packs_; p0 += stride * U) {
            Elems e[U];
            static_for<U>([&](const int k) {
              const int p = p0 + k * stride;
              if (p < packs_) e[k].load(x + (packs_ - 1 - p) * N);
            });
            static_for<U>([&](const int k) {
              const int p = p0 + k * stride;
              if (p >= packs_) return;
              float v[N];
              static_for<N>([&](const int u) { v[u] = e[k].get(u); });
              part.add(v, (packs_ - 1 - p) * N, V_);
            });
          }
        },
        mine);
    const Online row = team_total(team, mine);

    const float scale = classifier_dloss(a_, m), inv_sum = 1.0f / row.sum;
    // Without dlogits (the loss alone) the row is read once.
    if (dx) Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, L), [&](const int lane) {
      for (int p0 = first + lane; p0 < packs_; p0 += stride * U) {
        Elems e[U];
        static_for<U>([&](const int k) {
          if (p0 + k * stride < packs_) e[k].load(x + (p0 + k * stride) * N);
        });
        static_for<U>([&](const int k) {
          const int p = p0 + k * stride;
          if (p >= packs_) return;
          Elems out;
          static_for<N>([&](const int u) {
            const int c = p * N + u;
            const float prob = Online::exp_of(e[k].get(u) - row.max) * inv_sum;
            out.set(u, c < V_ ? (prob - (c == t ? 1.0f : 0.0f)) * scale : 0.0f);
          });
          out.store(dx + p * N);
        });
      }
    });
    if (a_.losses.extent(0) != 0) {
      Kokkos::single(Kokkos::PerTeam(team),
                     [&] { a_.losses(m) = compat::log(row.sum) + (row.max - x_t); });
    }
  }

 private:
  using Elems = ElemsOf<T, N>;

  // The row's (max, sum): each warp's into its slot, then every warp merges
  // the slots in order (the same result in all).
  KOKKOS_INLINE_FUNCTION static Online team_total(const Member& team, const Online& mine) {
    Online* const slots = static_cast<Online*>(team.team_shmem().get_shmem(sizeof(Online) * W));
    Kokkos::single(Kokkos::PerThread(team), [&] { slots[team.team_rank()] = mine; });
    team.team_barrier();
    Online total;
    for (int w = 0; w < W; ++w) total += slots[w];
    return total;
  }

  Args a_;
  int V_, packs_;
};

// Hosts: a thread per row, three passes over it that the compiler vectorizes
// (host_blocks.hpp says why they are a function of their own): its max, its
// sum of exponentials, then dlogits. The row (200 KB at GPT-2's Vp in fp32)
// comes from memory once; the second and third passes find it in L2. The
// exponentials and the loss as ClassifierRows' (Online::exp_of; −inf
// elements add 0 to the sum, NaN comes through to every output of the row).
// In fp32 the second pass keeps its exponentials in dx for the third (bf16
// would round them before the subtraction of the target's 1): the
// exponential is most of a pass's work, and one per element instead of two
// took B 8, T 64 from 13.7 to 7.1-8.2 ms on 2 Zen 4 cores; exp_of's
// exponential for a non-positive argument then to 5.2 (bf16: 14.4 -> 9.3).
template <class T>
inline void classifier_row_host(T* dx, const T* x, const int V, const int Vp, const int t,
                                const float scale, float* loss) {
  const float x_t = t >= 0 && t < V ? to_float(x[t]) : quiet_nan();  // before dx overwrites it
  float max = neg_inf();
#if defined(_OPENMP)
#pragma omp simd reduction(max : max)
#endif
  for (int c = 0; c < V; ++c) {
    const float v = to_float(x[c]);
    max = v > max ? v : max;
  }
  constexpr bool keep_exps = std::is_same_v<T, float>;
  const bool store = keep_exps && dx != nullptr;
  float sum = 0.0f;
  if (store) {
#if defined(_OPENMP)
#pragma omp simd reduction(+ : sum)
#endif
    for (int c = 0; c < V; ++c) {
      const float v = to_float(x[c]);
      const float e = v == neg_inf() ? 0.0f : Online::exp_of(v - max);
      dx[c] = from_float<T>(e);
      sum += e;
    }
  } else {
#if defined(_OPENMP)
#pragma omp simd reduction(+ : sum)
#endif
    for (int c = 0; c < V; ++c) {
      const float v = to_float(x[c]);
      sum += v == neg_inf() ? 0.0f : Online::exp_of(v - max);
    }
  }
  if (loss != nullptr) *loss = compat::log(sum) + (max - x_t);
  if (dx == nullptr) return;  // the loss alone
  const float inv_sum = 1.0f / sum;
  if (store) {
    LLMK_SIMD
    for (int c = 0; c < V; ++c)
      dx[c] = from_float<T>((to_float(dx[c]) * inv_sum - (c == t ? 1.0f : 0.0f)) * scale);
  } else {
    LLMK_SIMD
    for (int c = 0; c < V; ++c) {
      const float v = to_float(x[c]);
      const float prob = (v == neg_inf() ? 0.0f : Online::exp_of(v - max)) * inv_sum;
      dx[c] = from_float<T>((prob - (c == t ? 1.0f : 0.0f)) * scale);
    }
  }
  for (int c = V; c < Vp; ++c) dx[c] = from_float<T>(0.0f);
}

template <class ExecSpace, class T>
void classifier_rows_host(const ExecSpace& exec, const ClassifierArgs<ExecSpace, T>& a) {
  const int V = a.V, Vp = int(a.logits.extent(1));
  Kokkos::parallel_for("llmk::classifier_rows_host",
                       Range<ExecSpace>(exec, 0, index_t(a.logits.extent(0))),
                       [=](const index_t m) {
                         classifier_row_host(a.dlogits.data() ? &a.dlogits(m, 0) : nullptr,
                                             &a.logits(m, 0), V, Vp, a.targets(m),
                                             classifier_dloss(a, m),
                                             a.losses.extent(0) != 0 ? &a.losses(m) : nullptr);
                       });
}

// The fused kernel: on a GPU with 16-byte packs where Vp is a multiple of
// the pack and both arrays are aligned to it, else element by element; on a
// host, classifier_rows_host.
template <class ExecSpace, class T>
void run_classifier_rows(const ExecSpace& exec, const ClassifierArgs<ExecSpace, T>& a) {
  if constexpr (compat::is_host_space<ExecSpace>) {
    classifier_rows_host(exec, a);
  } else {
    using Tuning = ClassifierTuning<ExecSpace>;
    constexpr int N = Tuning::pack_bytes / int(sizeof(T));
    const auto aligned = [](const void* p) {
      return reinterpret_cast<std::uintptr_t>(p) % Tuning::pack_bytes == 0;
    };
    if (a.logits.extent(1) % N == 0 && aligned(a.logits.data()) && aligned(a.dlogits.data())) {
      ClassifierRows<ExecSpace, T, N>(a).run(exec);
    } else {
      ClassifierRows<ExecSpace, T, 1>(a).run(exec);
    }
  }
}

// --- the targets' check ---------------------------------------------------------

template <class ExecSpace>
index_t count_bad_targets(const ExecSpace& exec,
                          const ConstVector<ExecSpace, std::int32_t>& targets, const int V) {
  index_t bad = 0;
  Kokkos::parallel_reduce(
      "llmk::classifier_check_targets", Range<ExecSpace>(exec, 0, index_t(targets.extent(0))),
      KOKKOS_LAMBDA(const index_t m, index_t& count) {
        const std::int32_t t = targets(m);
        count += t < 0 || t >= V ? 1 : 0;
      },
      bad);
  return bad;
}

// The first position whose target is outside [0, V) (the targets' count when
// none is).
template <class ExecSpace>
index_t first_bad_target(const ExecSpace& exec, const ConstVector<ExecSpace, std::int32_t>& targets,
                         const int V) {
  const index_t n = index_t(targets.extent(0));
  index_t first = n;
  Kokkos::parallel_reduce(
      "llmk::classifier_first_bad_target", Range<ExecSpace>(exec, 0, n),
      KOKKOS_LAMBDA(const index_t m, index_t& f) {
        const std::int32_t t = targets(m);
        if ((t < 0 || t >= V) && m < f) f = m;
      },
      Kokkos::Min<index_t>(first));
  return first;
}

}  // namespace llmk::kernels
