// The classifier forward in llmk-perf (`llmk-perf classifier_forward`): the
// losses of GPT-2's classifier at llm.c's training batch, the logits
// untouched; per precision, one row per llmk implementation and peer:copy (a
// device copy of as many bytes as the call reads and writes, the ceiling of
// a row that reads the logits once). PyTorch's rows (F.cross_entropy,
// reduction 'none': torch_baseline.py classifier_forward) are imported
// beside them. Checked against the losses of the float64 reference of
// llmk_classifier_backward_reference before it is timed. Memory-bound: rows
// report GB/s (the logits and targets read, the losses written).
#include "../harness/op_benchmark.hpp"
#include "../classifier_backward/rows.hpp"
#include "../harness/out_update.hpp"

#include <llmk/classifier_forward.hpp>
#include <ops/classifier_backward/reference/reference.hpp>
#include <ops/classifier_forward/spec.hpp>

namespace llmk::perf::classifier_forward {
namespace {

namespace ref = reference::classifier;

struct Options : classifier::Sizes {
  std::string impls = "all";
  std::string precisions = "fp32";
  bool no_target_check = false;  // options.check_targets = false
};

struct Description : classifier::Rows, NoPeers {
  using Tag = ClassifierForward;
  using Spec = op::classifier_forward::Spec;
  using Options = classifier_forward::Options;
  using CallOptions = ClassifierForwardOptions;
  static constexpr const char* help = "softmax cross-entropy's forward, fused (the losses alone)";
  using Problem = ref::HostProblem;
  static constexpr const char* title = "classifier forward";

  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string&) {
    suite.params = {{"B", s.B}, {"T", s.T}, {"V", s.V}, {"Vp", s.Vp}};
    suite.derived = "M=" + std::to_string(s.M());
    suite.flags = {{"no_target_check", opt.no_target_check}};
    suite.notes.push_back(std::string("targets ") +
                          (opt.no_target_check ? "not checked" : "checked on the device first") +
                          "; error: relative L2 of the losses against the float64 reference "
                          "(validity: the tests' element-wise tolerance)");
    suite.notes.push_back("GB/s: the logits and targets read once, the losses written");
  }
  // The logits read once, a target read and a loss written a row.
  static double bytes(const Shape& s, reference::Precision p, const Options&) {
    return double(s.M()) * (double(s.Vp) * (p == reference::Precision::bf16 ? 2.0 : 4.0) + 8.0);
  }
  static Problem make(const Shape& s, reference::Precision p, const Options&) {
    return ref::make_problem(s, 2024, p);
  }
  static const std::vector<float>& values(const Problem& in, std::size_t) { return in.logits; }
  static const std::vector<std::int32_t>& int_values(const Problem& in, std::size_t) {
    return in.targets;
  }
  static std::vector<std::vector<double>> expected(const Problem& in, const Options&, int) {
    return {ref::reference_backward(in).losses};
  }
  static double tolerance(reference::Precision, std::size_t) { return 1.0; }  // judge decides
  using Kept = bool;
  static Kept keep(const Problem&) { return true; }
  static std::string judge(const Kept&, std::size_t, const std::vector<float>& out,
                           const std::vector<double>& expected, reference::Precision p) {
    return ref::compare("losses", out, expected, 1, ref::losses_tolerance(p));
  }
  static std::vector<bool> overwrites(const Options&) { return {true}; }

  static CallOptions call_options(const std::string& impl, const Options& opt) {
    CallOptions c;
    c.impl = impl;
    c.check_targets = !opt.no_target_check;
    return c;
  }
  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& c) {
    llmk::classifier_forward(ctx, static_cast<float*>(a.data(Spec::losses)), a.in(Spec::logits),
                             a.ints(Spec::targets), a.size("B"), a.size("T"), a.size("V"),
                             a.size("Vp"), c);
  }

  static void add_options(CLI::App& app, Options& opt) {
    add_sizes(app, opt);
    add_selection_options<Description>(app, opt);
    app.add_flag("--no-target-check", opt.no_target_check,
                 "options.check_targets = false: no check of the targets (and no wait for it)");
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::classifier_forward
