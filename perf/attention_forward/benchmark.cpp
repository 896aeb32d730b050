// The attention forward in llmk-perf (`llmk-perf attention_forward`),
// described to the shared subcommand (harness/op_benchmark.hpp) with the
// backward's sizes (B, T, C, NH; GPT-2 124M's at llm.c's batch by default):
// out overwritten (llm.c's) or accumulated, lse written; per precision, one
// row per llmk implementation and peer:copy, a device copy of as many bytes
// as the call moves (PyTorch's scaled_dot_product_attention is imported:
// perf/torch_peers/attention_forward.py). GFLOP/s counts the two products on
// the causal half, q·kᵀ and P·v: 2·B·C·T·(T+1).
#include "../harness/out_update.hpp"

#include <llmk/attention_forward.hpp>
#include <ops/attention_backward/reference/compare.hpp>
#include <ops/attention_backward/reference/problem.hpp>
#include <ops/attention_backward/reference/reference.hpp>
#include <ops/attention_forward/spec.hpp>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace llmk::perf::attention_forward {
namespace {

namespace ref = reference::attention;

struct Options : OutUpdateOption {
  std::int64_t B = 8, T = 1024, C = 768, NH = 12;
  std::string impls = "all";        // "all", or a comma list of implementation names / "auto"
  std::string precisions = "fp32";  // "all", or a comma list of precisions
};

// (lse is written whatever the update: its initial NaN never read.)
struct Description : OutUpdate<AttentionForwardOptions, 2>, NoPeers {
  using Tag = AttentionForward;
  using Spec = op::attention_forward::Spec;
  using Options = attention_forward::Options;
  using CallOptions = AttentionForwardOptions;
  using Shape = ref::Shape;
  using Problem = ref::HostProblem;
  static constexpr const char* title = "attention forward";
  static constexpr const char* unit = "sequence";
  static constexpr const char* help =
      "GPT-2's causal self-attention forward (out, and the lse the recompute backward takes)";

  static Shape shape(const Options& opt) {
    if (opt.NH < 1 || opt.C % opt.NH != 0)
      throw std::invalid_argument("--C " + std::to_string(opt.C) + " is not a multiple of --NH " +
                                  std::to_string(opt.NH) + " (at least 1)");
    check_product({opt.B, opt.T, 3, opt.C}, "B·T·3C");
    check_product({opt.B, opt.NH, opt.T, opt.T}, "B·NH·T·T");
    return {"perf", opt.B, opt.T, opt.C, opt.NH};
  }
  static core::op::SymbolSizes sizes(const Shape& s) {
    return {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"NH", s.NH}};
  }
  static std::int64_t units(const Shape& s) { return s.B; }
  static core::op::SymbolSizes part(const core::op::SymbolSizes& s, std::int64_t sequences) {
    return s.with("B", sequences);
  }

  // q·kᵀ and P·v over the causal half: 2 · 2·HS·T(T+1)/2 per head.
  static double flops(const Shape& s) { return 2.0 * double(s.B) * double(s.C) * double(s.T) * double(s.T + 1); }

  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string& sizes) {
    suite.params = {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"NH", s.NH}};
    char derived[96];
    std::snprintf(derived, sizeof derived, "HS=%lld, %.4g GFLOP per call on the causal half",
                  (long long)s.HS(), flops(s) * 1e-9);
    suite.derived = derived;
    suite.flops = flops(s);
    suite.gflops_column = true;
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
    add_size(app, "--B", opt.B, "batch size");
    add_size(app, "--T", opt.T, "sequence length");
    add_size(app, "--C", opt.C, "channels, a multiple of --NH");
    app.add_option("--NH", opt.NH, "heads (HS = C / NH channels each)")
        ->capture_default_str()
        ->check(perf::count_at_least(1, "heads"));
    add_selection_options<Description>(app, opt);
    add_out_update(app, opt, "the attention's output");
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::attention_forward
