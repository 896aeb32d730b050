// The matmul forward in llmk-perf (`llmk-perf matmul_forward`), described to
// the shared subcommand (harness/op_benchmark.hpp): out = inp·weightᵀ + bias
// at GPT-2's fc layer by default (B 8, T 1024, C 768 into OC 3072), with
// GELU's pre_gelu saved (--gelu) or not, out overwritten (llm.c's) or
// accumulated; per precision, one row per llmk implementation and peer:copy
// (the time to move the call's bytes once: the floor at small M). Rows
// report GFLOP/s (2·M·C·OC per call); PyTorch's (torch_baseline.py
// matmul_forward) are imported.
#include "../harness/btc_rows.hpp"
#include "../harness/out_update.hpp"

#include <llmk/matmul_forward.hpp>
#include <ops/matmul_forward/reference.hpp>
#include <ops/matmul_forward/spec.hpp>

namespace llmk::perf::matmul_forward {
namespace {

namespace ref = reference::matmul_forward;

struct Options : MatmulSizes, OutUpdateOption {
  bool gelu = false, no_bias = false;
};

// (pre_gelu is written whatever the update.)
struct Description : MatmulRows<reference::Shape>, OutUpdate<MatmulForwardOptions, 2>,
                     NoPeers {
  using Tag = MatmulForward;
  using Spec = op::matmul_forward::Spec;
  using Options = matmul_forward::Options;
  using CallOptions = MatmulForwardOptions;
  using Problem = ref::HostProblem;
  static constexpr const char* title = "matmul forward";
  static constexpr const char* help =
      "a linear layer, out = inp·Wᵀ + bias (and GELU, saving pre_gelu)";

  static Shape shape(const Options& opt) {
    check_sizes(opt);
    return {"perf", opt.B, opt.T, opt.C, opt.OC, !opt.no_bias};
  }
  static std::vector<bool> present(const Options& opt) {
    return {true, opt.gelu, true, true, !opt.no_bias};
  }
  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string& sizes) {
    suite.flops = ref::flops(s);
    params(suite, s, suite.flops);
    suite.gflops_column = true;
    suite.flags = {{"gelu", opt.gelu}, {"no_bias", opt.no_bias},
                   {"accumulate_out", opt.accumulate_out}};
    suite.notes.push_back(out_text(opt) +
                          (opt.gelu ? " with gelu(pre_gelu), pre_gelu written" : "") +
                          (opt.no_bias ? ", no bias" : ", bias") +
                          "; errors: relative L2 against the float64 reference");
    suite.notes.push_back("GB/s: inp, weight, bias read, out (pre_gelu) written: " + sizes);
  }
  static double bytes(const Shape& s, reference::Precision p, const Options& opt) {
    return ref::bytes(s, p, opt.gelu, !opt.accumulate_out);
  }

  static Problem make(const Shape& s, reference::Precision p, const Options& opt) {
    return ref::make_problem(s, opt.gelu, 2024, p);
  }
  static const std::vector<float>& values(const Problem& in, std::size_t i) {
    const std::vector<float>* v[] = {&in.out, &in.pre_gelu, &in.inp, &in.weight, &in.bias};
    return *v[i];
  }
  static std::vector<std::vector<double>> expected(const Problem& in, const Options& opt,
                                                   int threads) {
    return ref::reference_forward(in, !opt.accumulate_out, threads);
  }
  static double tolerance(reference::Precision p, std::size_t k) { return ref::tolerance(p, k); }
  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& options) {
    llmk::matmul_forward(ctx, a.out(Spec::out), a.out(Spec::pre_gelu), a.in(Spec::inp),
                         a.in(Spec::weight), a.in(Spec::bias), a.size("B"), a.size("T"),
                         a.size("C"), a.size("OC"), options);
  }

  static void add_options(CLI::App& app, Options& opt) {
    add_sizes(app, opt);
    add_selection_options<Description>(app, opt);
    app.add_flag("--gelu", opt.gelu,
                 "GELU after the bias (GPT-2's fc layer): out = gelu(pre_gelu), pre_gelu written");
    app.add_flag("--no-bias", opt.no_bias, "no bias");
    add_out_update(app, opt, "the product");
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::matmul_forward
