// The attention forward in llmk-perf (`llmk-perf attention_forward`),
// described to the shared subcommand (harness/op_benchmark.hpp) with the
// backward's sizes (B, T, C, NH; GPT-2 124M's at llm.c's batch by default):
// out overwritten (llm.c's) or accumulated, lse written; per precision, one
// row per llmk implementation and peer:copy, a device copy of as many bytes
// as the call moves (PyTorch's scaled_dot_product_attention is imported:
// perf/torch_peers/attention_forward.py). GFLOP/s counts the two products on
// the causal half, q·kᵀ and P·v: 2·B·C·T·(T+1).
#include "../harness/btc_rows.hpp"
#include "../harness/out_update.hpp"

#include <llmk/attention_forward.hpp>
#include <ops/attention_backward/reference/compare.hpp>
#include <ops/attention_backward/reference/problem.hpp>
#include <ops/attention_backward/reference/reference.hpp>
#include <ops/attention_forward/spec.hpp>

#include <cstdint>
#include <string>

namespace llmk::perf::attention_forward {
namespace {

namespace ref = reference::attention;

struct Options : AttentionSizes, OutUpdateOption {};

// (lse is written whatever the update: its initial NaN never read.)
struct Description : AttentionRows<ref::Shape>, OutUpdate<AttentionForwardOptions, 2>, NoPeers {
  using Tag = AttentionForward;
  using Spec = op::attention_forward::Spec;
  using Options = attention_forward::Options;
  using CallOptions = AttentionForwardOptions;
  using Problem = ref::HostProblem;
  static constexpr const char* title = "attention forward";
  static constexpr const char* help =
      "GPT-2's causal self-attention forward (out, and the lse the recompute backward takes)";

  // q·kᵀ and P·v over the causal half: 2 · 2·HS·T(T+1)/2 per head.
  static double flops(const Shape& s) { return 2.0 * double(s.B) * double(s.C) * double(s.T) * double(s.T + 1); }

  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string& sizes) {
    params(suite, s, flops(s));
    suite.flags = {{"accumulate_out", opt.accumulate_out}};
    suite.notes.push_back(out_text(opt) +
                          ", lse written; errors: relative L2 against the float64 reference");
    suite.notes.push_back("GFLOP/s: q·kᵀ and P·v on the causal half, 2·B·C·T·(T+1); GB/s: qkv "
                          "read, out " + out_bytes_text(opt) + ", lse written, per second: " +
                          sizes);
  }
  static double bytes(const Shape& s, reference::Precision p, const Options& opt) {
    const double e = p == reference::Precision::bf16 ? 2.0 : 4.0;
    const double M = double(s.M()), C = double(s.C);
    return e * (3 * M * C + (opt.accumulate_out ? 2.0 : 1.0) * M * C) +
           4.0 * double(s.B) * double(s.NH) * double(s.T);
  }

  static Problem make(const Shape& s, reference::Precision p, const Options&) {
    return ref::make_problem(s, 2024, p, 0);
  }
  static const std::vector<float>& values(const Problem& in, std::size_t i) {
    const std::vector<float>* v[] = {&in.out, &in.lse, &in.qkv};
    return *v[i];
  }
  static std::vector<std::vector<double>> expected(const Problem& in, const Options& opt,
                                                   int threads) {
    return ref::reference_forward(in, !opt.accumulate_out, threads);
  }
  static double tolerance(reference::Precision p, std::size_t k) {
    return ref::tolerance(k == 0 ? p : reference::Precision::fp32);
  }
  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& options) {
    llmk::attention_forward(ctx, a.out(Spec::out), static_cast<float*>(a.data(Spec::lse)),
                            a.in(Spec::qkv), a.size("B"), a.size("T"), a.size("C"), a.size("NH"),
                            options);
  }

  static void add_options(CLI::App& app, Options& opt) {
    add_sizes(app, opt);
    add_selection_options<Description>(app, opt);
    add_out_update(app, opt, "the attention's output");
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::attention_forward
