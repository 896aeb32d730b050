// The attention backward in llmk-perf (`llmk-perf attention_backward`),
// described to the shared subcommand (harness/op_benchmark.hpp), the
// recompute variant its Variant: two operations in one table, dqkv
// accumulated or overwritten (llm.c's). Per precision (tf32 too), a row per
// implementation of attention_backward (from att), then of
// attention_backward_recompute (from the forward's out and lse), then the
// peers (peers.hpp): peer:copy, moving as many bytes as attention_backward's
// call must, and on the host peer:openblas (fp32), all on the same problem,
// each checked against its operation's float64 reference. GFLOP/s counts the
// four products on the causal half only (Shape::flops: 4·B·C·T·(T+1)),
// whatever an implementation computes; GB/s the bytes a call must move.
#include "../harness/btc_rows.hpp"
#include "peers.hpp"

#include <llmk/attention_backward.hpp>
#include <ops/attention_backward/reference/compare.hpp>
#include <ops/attention_backward/reference/problem.hpp>
#include <ops/attention_backward/reference/reference.hpp>
#include <ops/attention_backward/spec.hpp>
#include <ops/attention_backward_recompute/spec.hpp>

#include <cstdint>
#include <string>

namespace llmk::perf::attention_backward {
namespace {

namespace ref = reference::attention;

struct Options : AttentionSizes {
  bool overwrite_dqkv = false;  // Update::overwrite on dqkv (llm.c's; default +=)
};

// Element bytes of the precision's inputs and dqkv.
double element_bytes(reference::Precision p) { return p == reference::Precision::bf16 ? 2 : 4; }

// attention_backward_recompute: dqkv from the forward's out and lse for att.
struct Recompute {
  using Tag = AttentionBackwardRecompute;
  using Spec = op::attention_backward_recompute::Spec;
  static constexpr const char* note = "attention_backward_recompute: out and lse, no T × T";

  static const std::vector<float>& values(const ref::HostProblem& in, std::size_t i) {
    const std::vector<float>* v[] = {&in.dqkv, &in.dout, &in.qkv, &in.out, &in.lse};
    return *v[i];
  }
  static std::vector<std::vector<double>> expected(const ref::HostProblem& in, const Options& opt,
                                                   int threads) {
    return {ref::reference_backward_recompute(in, opt.overwrite_dqkv, threads)};
  }
  static double tolerance(reference::Precision p, std::size_t) {
    return ref::recompute_tolerance(p);
  }
  // dout, out, qkv and lse (float) read, dqkv written (and read when accumulated).
  static double bytes(const ref::Shape& s, reference::Precision p, const Options& opt) {
    const double M = double(s.M()), C = double(s.C);
    return element_bytes(p) *
               (2 * M * C + M * 3 * C + (opt.overwrite_dqkv ? 1.0 : 2.0) * M * 3 * C) +
           4.0 * double(s.B) * double(s.NH) * double(s.T);
  }
  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a,
                   const AttentionBackwardOptions& options) {
    llmk::attention_backward_recompute(
        ctx, a.out(Spec::dqkv), a.in(Spec::dout), a.in(Spec::qkv), a.in(Spec::out),
        static_cast<const float*>(a.data(Spec::lse)), a.size("B"), a.size("T"), a.size("C"),
        a.size("NH"), options);
  }
};

struct Description : AttentionRows<ref::Shape> {
  using Tag = AttentionBackward;
  using Spec = op::attention_backward::Spec;
  using Variant = Recompute;
  using Options = attention_backward::Options;
  using CallOptions = AttentionBackwardOptions;
  using Problem = ref::HostProblem;
  using Peer = attention_backward::Peer;
  static constexpr const char* title = "attention backward";
  static constexpr const char* help =
      "the backward pass of GPT-2's causal self-attention (dqkv, given dout, qkv and att)";
  static constexpr bool tf32 = true;

  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string&) {
    params(suite, s, s.flops());
    suite.flags = {{"overwrite_dqkv", opt.overwrite_dqkv}};
    suite.notes.push_back(std::string("dqkv ") +
                          (opt.overwrite_dqkv ? "overwritten (=)" : "accumulated (+=)") +
                          "; errors: relative L2 of dqkv against the float64 reference");
    suite.notes.push_back(
        "GFLOP/s: the four products on the causal half, 4·B·C·T·(T+1) (a dense implementation "
        "does about twice that, the recompute variant's 'flash' 6·B·C·T·(T+1): q·kᵀ and "
        "dout·vᵀ twice); GB/s: dout, qkv and att's causal half read (flash: out and lse for "
        "att), dqkv written" +
        std::string(!opt.overwrite_dqkv ? " and read" : ""));
    if (s.M() == 0 || s.C == 0)
      suite.notes.push_back(
          "zero-sized problem: every llmk call is a valid no-op; times are the calls' fixed costs");
  }
  // dout, qkv and att's causal half read, dqkv written (and read when accumulated).
  static double bytes(const Shape& s, reference::Precision p, const Options& opt) {
    const double M = double(s.M()), C = double(s.C), T = double(s.T);
    return element_bytes(p) * (M * C + M * 3 * C + double(s.B) * double(s.NH) * T * (T + 1) / 2 +
                               (opt.overwrite_dqkv ? 1.0 : 2.0) * M * 3 * C);
  }

  // q, k, v, dout, dqkv, and one forward's att, out and lse (both variants').
  static Problem make(const Shape& s, reference::Precision p, const Options&) {
    return ref::make_problem(s, 2024, p, 0);
  }
  static const std::vector<float>& values(const Problem& in, std::size_t i) {
    const std::vector<float>* v[] = {&in.dqkv, &in.dout, &in.qkv, &in.att};
    return *v[i];
  }
  static std::vector<std::vector<double>> expected(const Problem& in, const Options& opt,
                                                   int threads) {
    return {ref::reference_backward(in, opt.overwrite_dqkv, ref::Masking::Causal, threads)};
  }
  static double tolerance(reference::Precision p, std::size_t) { return ref::tolerance(p); }
  static std::vector<bool> overwrites(const Options& opt) { return {opt.overwrite_dqkv}; }

  static CallOptions call_options(const std::string& impl, const Options& opt) {
    CallOptions options;
    options.impl = impl;
    if (opt.overwrite_dqkv) options.dqkv_update = Update::overwrite;
    return options;
  }
  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& options) {
    llmk::attention_backward(ctx, a.out(Spec::dqkv), a.in(Spec::dout), a.in(Spec::qkv),
                             a.in(Spec::att), a.size("B"), a.size("T"), a.size("C"), a.size("NH"),
                             options);
  }

  static std::vector<Peer> peers(const std::string& backend, const Options&) {
    return peers_for(backend);
  }
  template <class S>
  static PeerArgs peer_args(const OpArrays<S, Spec>& a, const std::string& precision,
                            const Options& opt, int threads) {
    return {a.data(Spec::dqkv), a.data(Spec::dout), a.data(Spec::qkv), a.data(Spec::att),
            a.size("B"),        a.size("T"),        a.size("C"),        a.size("NH"),
            precision,          !opt.overwrite_dqkv, threads};
  }

  static void add_options(CLI::App& app, Options& opt) {
    add_sizes(app, opt);
    add_selection_options<Description>(app, opt);
    add_overwrite(app, "--overwrite-dqkv", opt.overwrite_dqkv, "dqkv =",
                  "as llm.c's backward, where qkv's gradient is a fresh buffer");
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::attention_backward
