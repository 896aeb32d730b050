// The squared norm as the shared framework sees it (core/op/): its
// declaration (spec.hpp), its typed problem and its one implementation,
// "chunked": the input in fixed chunks of kChunk values, each chunk's sum of
// squares in float into the workspace (a team per chunk on a GPU, a
// vectorized loop per chunk on a host), then one team adds the chunks' sums
// in double, in an order fixed by N: deterministic on every thread count.
#pragma once

#include <core/op/call.hpp>
#include <core/op/entry.hpp>
#include <core/op/impl_traits.hpp>
#include <core/registry.hpp>
#include <kernels/tuning.hpp>
#include <kernels/update.hpp>
#include <llmk/compat.hpp>
#include <ops/squared_norm/spec.hpp>

#include <utility>

namespace llmk::op::squared_norm {

// Values a chunk: 32 KiB of floats (the GPU's team of 256 threads reads 32
// each; a host thread's loop stays in L1), and few enough chunks for GPT-2
// 124M's 124 M gradients (7,600) that one team adds them in microseconds.
inline constexpr index_t kChunk = 8192;

struct Sizes {
  index_t M = 0;  // values
};

template <class ExecSpace, class P>
struct Problem {
  using precision = P;
  template <class U>
  using Vector = Kokkos::View<U*, Kokkos::LayoutRight, typename ExecSpace::device_type,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Vector<float> out;
  Vector<const typename P::in> inp;
  bool overwrite_out = true;
  index_t M = 0;

  Sizes sizes() const { return {M}; }
  // Values [m0, m0 + count); a later part adds to what the first wrote.
  Problem rows(index_t m0, index_t count) const {
    Problem p = *this;
    p.inp = Kokkos::subview(inp, std::pair<index_t, index_t>(m0, m0 + count));
    p.overwrite_out = overwrite_out && m0 == 0;
    p.M = count;
    return p;
  }
};

inline index_t chunks(index_t n) { return (n + kChunk - 1) / kChunk; }

// Each chunk's sum of squares into partials.
template <class ExecSpace, class T>
void chunk_sums(const ExecSpace& exec, const T* inp, const index_t n, float* partials) {
  if constexpr (compat::is_host_space<ExecSpace>) {
    // kLanes sums, lane l of every kLanes-th value in order, then the lanes
    // in order: the same bits however the compiler vectorizes the loop (an
    // `omp simd` reduction's order follows the vector width it picks, which
    // differed between the Serial and OpenMP instantiations for bf16).
    constexpr int kLanes = 16;
    Kokkos::parallel_for(
        "llmk::squared_norm_chunks", Range<ExecSpace>(exec, 0, chunks(n)), [=](const index_t c) {
          const index_t i1 = n - c * kChunk < kChunk ? n : (c + 1) * kChunk;
          float lane[kLanes] = {};
          index_t i = c * kChunk;
          for (; i + kLanes <= i1; i += kLanes) {
            LLMK_SIMD
            for (int l = 0; l < kLanes; ++l) {
              const float x = to_float(inp[i + l]);
              lane[l] += x * x;
            }
          }
          for (int l = 0; i < i1; ++i, ++l) {
            const float x = to_float(inp[i]);
            lane[l] += x * x;
          }
          float sum = 0.0f;
          for (int l = 0; l < kLanes; ++l) sum += lane[l];
          partials[c] = sum;
        });
  } else {
    using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>>;
    Kokkos::parallel_for(
        "llmk::squared_norm_chunks", Policy(exec, chunks(n), 256),
        KOKKOS_LAMBDA(const typename Policy::member_type& team) {
          const index_t i0 = team.league_rank() * kChunk;
          const int count = int(n - i0 < kChunk ? n - i0 : kChunk);
          float sum = 0.0f;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, count),
              [&](const int i, float& s) {
                const float x = to_float(inp[i0 + i]);
                s += x * x;
              },
              sum);
          Kokkos::single(Kokkos::PerTeam(team), [&] { partials[team.league_rank()] = sum; });
        });
  }
}

// out ⟵ the partials' sum (in double, one team: a fixed order).
template <class ExecSpace>
void add_partials(const ExecSpace& exec, const float* partials, const index_t count, float* out,
                  const bool overwrite) {
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<index_t>>;
  const int team_size = compat::is_host_space<ExecSpace> ? 1 : 256;
  Kokkos::parallel_for(
      "llmk::squared_norm_total", Policy(exec, 1, team_size),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        double total = 0.0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, count),
            [&](const index_t c, double& s) { s += double(partials[c]); }, total);
        Kokkos::single(Kokkos::PerTeam(team), [&] { kernels::update(*out, float(total), overwrite); });
      });
}

struct Chunked : core::op::ImplDefaults {
  static constexpr std::string_view name = "chunked";
  // A team per chunk: Kokkos 3 counts the league in int.
  static constexpr index_t max_rows = (core::kInt32Max / 2) * kChunk;
  template <class P>
  static constexpr bool supports = true;
  template <class ExecSpace, class P>
  static void workspace(core::WorkspaceSize& size, const Sizes& s) {
    size.add<float>(std::size_t(chunks(s.M)));
  }
  template <class ExecSpace, class Options, class Problem>
  static void run(core::op::Call<ExecSpace, Options>& call, const Problem& p) {
    float* partials = call.workspace.template take<float>(std::size_t(chunks(p.M)));
    chunk_sums(call.exec, p.inp.data(), p.M, partials);
    add_partials(call.exec, partials, chunks(p.M), p.out.data(), p.overwrite_out);
  }
};

using Implementations = core::ImplList<Chunked>;

struct Op : Spec, core::op::OpDefaults {
  using Implementations = squared_norm::Implementations;
  using Sizes = squared_norm::Sizes;

  static core::op::SizeLimits limits(const Sizes&) { return {1, {}, {"", 0}}; }
  static bool is_empty(const Sizes& s) { return s.M == 0; }
  // No values: the sum is 0 (out ⟵ 0: = writes it, += leaves out as it is).
  template <class Call, class Problem>
  static void run_empty(Call& call, const Problem& p) {
    if (p.overwrite_out) Kokkos::deep_copy(call.exec, p.out, 0.0f);
  }

  template <class ExecSpace, class P, class Bound>
  static Problem<ExecSpace, P> problem(const Bound& b, const Options& options) {
    Problem<ExecSpace, P> p;
    p.out = b.template vector<float>(out);
    p.inp = b.template vector<const typename P::in>(inp);
    p.overwrite_out = options.out_update == Update::overwrite;
    p.M = b.rows();
    return p;
  }
};

}  // namespace llmk::op::squared_norm
