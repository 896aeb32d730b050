// The classifier backward in llmk-perf (`llmk-perf classifier_backward`):
// its options (the sizes, the implementations and precisions to time, a
// per-position dloss) and its run: per precision, one row per llmk
// implementation that declares it, then the peers (peers.hpp): peer:copy, a
// device copy moving as many bytes as one read and one write of the logits,
// the ceiling every row's "% copy" compares with; on Cuda peer:llmc-style,
// llm.c's fused_classifier algorithm. Every row works in place on the same
// logits, as llm.c trains, checked against the float64 reference of
// llmk_classifier_backward_reference before it is timed (the logits are
// uploaded again before each check). A memory-bound operation: rows report
// GB/s (Shape::bytes, the least a call moves).
#include "../harness/op_benchmark.hpp"
#include "peers.hpp"
#include "rows.hpp"

#include <llmk/classifier_backward.hpp>
#include <ops/classifier_backward/reference/reference.hpp>
#include <ops/classifier_backward/spec.hpp>

namespace llmk::perf::classifier_backward {
namespace {

namespace ref = reference::classifier;

struct Options : classifier::Sizes {
  std::string impls = "all";        // "all", or a comma list of implementation names / "auto"
  std::string precisions = "fp32";  // "all", or a comma list: fp32, bf16
  bool per_position = false;        // a dloss array rather than llm.c's 1/(B·T)
  bool no_target_check = false;     // options.check_targets = false
};

struct Description : classifier::Rows {
  using Tag = ClassifierBackward;
  using Spec = op::classifier_backward::Spec;
  using Options = classifier_backward::Options;
  static constexpr const char* help =
      "softmax cross-entropy's backward, fused (losses, and dlogits in place of the logits)";
  using Problem = ref::HostProblem;
  using Peer = classifier_backward::Peer;
  static constexpr const char* title = "classifier backward";
  static constexpr bool in_place = true;  // as llm.c trains

  static std::vector<bool> present(const Options& opt) {
    return {true, true, true, true, opt.per_position};  // dloss: an array, or one value
  }
  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string&) {
    suite.params = {{"B", s.B}, {"T", s.T}, {"V", s.V}, {"Vp", s.Vp}};
    suite.derived = "M=" + std::to_string(s.M());
    suite.flags = {{"dloss_per_position", opt.per_position},
                   {"no_target_check", opt.no_target_check}};
    suite.notes.push_back(
        "in place (dlogits over the logits, as llm.c); dloss " +
        std::string(opt.per_position ? "per position" : "1/(B·T) for every position") +
        "; targets " + (opt.no_target_check ? "not checked" : "checked on the device first") +
        "; errors: relative L2 against the float64 reference (validity: the tests' element-wise "
        "tolerances)");
    suite.notes.push_back("GB/s: the logits read once and written once, and the targets read");
  }
  static double bytes(const Shape& s, reference::Precision p, const Options&) {
    return s.bytes(p);
  }

  static Problem make(const Shape& s, reference::Precision p, const Options& opt) {
    return ref::make_problem(s, 2024, p, opt.per_position);
  }
  // dlogits starts as the logits (in place).
  static const std::vector<float>& values(const Problem& in, std::size_t i) {
    return i == Spec::dloss ? in.dloss : in.logits;
  }
  static const std::vector<std::int32_t>& int_values(const Problem& in, std::size_t) {
    return in.targets;
  }
  static std::vector<std::vector<double>> expected(const Problem& in, const Options&, int) {
    ref::Result64 r = ref::reference_backward(in);
    return {std::move(r.dlogits), std::move(r.losses)};
  }
  // The relative L2 for the table; the element-wise tolerances of the tests
  // (judge) decide whether the row is valid.
  static double tolerance(reference::Precision, std::size_t) { return 1.0; }
  using Kept = std::vector<double>;  // each row's dloss, which scales its tolerance
  static Kept keep(const Problem& in) {
    Kept scales(std::size_t(in.shape.M()), in.dloss_value);
    std::copy(in.dloss.begin(), in.dloss.end(), scales.begin());
    return scales;
  }
  static std::string judge(const Kept& scales, std::size_t k, const std::vector<float>& out,
                           const std::vector<double>& expected, reference::Precision p) {
    if (scales.empty()) return "";  // no rows
    return k == 0 ? ref::compare("dlogits", out, expected, std::int64_t(out.size() / scales.size()),
                                 ref::dlogits_tolerance(p), scales)
                  : ref::compare("losses", out, expected, 1, ref::losses_tolerance(p));
  }
  // dlogits from the logits (not NaN); the losses always written.
  static std::vector<bool> overwrites(const Options&) { return {false, true}; }

  struct CallOptions {
    ClassifierBackwardOptions options;
    float dloss_value = 1.0f;  // every position's, without a per-position array
  };
  static CallOptions call_options(const std::string& impl, const Options& opt) {
    CallOptions c;
    c.options.impl = impl;
    c.options.check_targets = !opt.no_target_check;
    const std::int64_t M = opt.B * opt.T;
    c.dloss_value = M > 0 ? 1.0f / float(M) : 1.0f;  // ref::make_problem's
    return c;
  }
  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& c) {
    const auto* dloss = static_cast<const float*>(a.data(Spec::dloss));
    llmk::classifier_backward(ctx, a.out(Spec::dlogits), static_cast<float*>(a.data(Spec::losses)),
                              a.in(Spec::logits), a.ints(Spec::targets),
                              dloss ? DlossRef<S>(dloss) : DlossRef<S>(c.dloss_value), a.size("B"),
                              a.size("T"), a.size("V"), a.size("Vp"), c.options);
  }
  // The peers take one dloss for all positions (llm.c's).
  static std::vector<Peer> peers(const std::string& backend, const Options& opt) {
    return opt.per_position ? std::vector<Peer>{} : peers_for(backend);
  }
  template <class S>
  static PeerArgs peer_args(const OpArrays<S, Spec>& a, const std::string& p, const Options& opt) {
    return {a.data(Spec::dlogits),
            static_cast<float*>(a.data(Spec::losses)),
            a.ints(Spec::targets),
            call_options("", opt).dloss_value,
            a.size("B") * a.size("T"),
            a.size("V"),
            a.size("Vp"),
            p};
  }

  static void add_options(CLI::App& app, Options& opt) {
    add_sizes(app, opt);
    add_selection_options<Description>(app, opt);
    app.add_flag("--dloss-per-position", opt.per_position,
                 "a float dloss per position rather than 1/(B·T) for all (no peer row then)");
    app.add_flag("--no-target-check", opt.no_target_check,
                 "options.check_targets = false: no check of the targets (and no wait for it)");
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::classifier_backward
