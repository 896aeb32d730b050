#include "benchmark.hpp"

#include "../harness/copy_peer.hpp"
#include "../harness/driver.hpp"
#include "../harness/planned_rows.hpp"
#include "../harness/reference_io.hpp"
#include "peers.hpp"

#include <llmk/classifier_backward.hpp>
#include <llmk/context.hpp>
#include <ops/classifier_backward/reference/reference.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>

namespace llmk::perf::classifier_backward {
namespace {

namespace ref = reference::classifier;

ref::Shape shape_of(const Options& opt) {
  const index_t max = std::numeric_limits<index_t>::max();
  if ((opt.B > 0 && opt.T > max / opt.B) || (opt.B * opt.T > 0 && opt.Vp > max / (opt.B * opt.T)))
    throw std::invalid_argument("sizes too large: B·T·Vp overflows 64 bits");
  if (opt.V > opt.Vp) throw std::invalid_argument("--V must be at most --Vp");
  return {"perf", opt.B, opt.T, opt.V, opt.Vp};
}

// A run's buffers in one element type: logits (overwritten by dlogits),
// losses, targets and a per-position dloss (or none).
template <class ExecSpace, class T>
struct Buffers {
  Matrix<ExecSpace, T> logits;
  Vector<ExecSpace, float> losses, dloss;
  Kokkos::View<std::int32_t*, Kokkos::LayoutRight, typename ExecSpace::device_type> targets;
  float dloss_value = 1.0f;
  index_t V = 0;

  Buffers first_rows(index_t m) const {
    const std::pair<index_t, index_t> rows(0, m);
    Buffers b = *this;
    b.logits = Kokkos::subview(logits, rows, Kokkos::ALL);
    b.losses = Kokkos::subview(losses, rows);
    b.targets = Kokkos::subview(targets, rows);
    if (dloss.extent(0) != 0) b.dloss = Kokkos::subview(dloss, rows);
    return b;
  }
  void call(Context<ExecSpace>& ctx, const ClassifierBackwardOptions& options) const {
    const DlossRef<ExecSpace> d = dloss.extent(0) != 0 ? DlossRef<ExecSpace>(dloss)
                                                       : DlossRef<ExecSpace>(dloss_value);
    llmk::classifier_backward(ctx, logits, losses, logits, targets, d, V, options);
  }
  PeerArgs peer_args(const std::string& precision) const {
    return {logits.data(), losses.data(), targets.data(), dloss_value,
            index_t(logits.extent(0)), V, index_t(logits.extent(1)), precision};
  }
};

using Planned = PlannedRow<Peer>;

template <class ExecSpace, class T>
bool run_precision(const Env<ExecSpace>& env, const Options& opt, const Suite& suite,
                   reference::Precision p, const std::vector<Planned>& planned,
                   std::vector<Record>& records) {
  const ExecSpace& exec = env.exec;
  Context<ExecSpace>& ctx = env.ctx;
  const ref::Shape s = shape_of(opt);
  const index_t M = s.M(), Vp = s.Vp;
  const std::string pname = reference::precision_name(p);
  const double bytes = s.bytes(p);
  Suite group = suite;

  auto t0 = std::chrono::steady_clock::now();
  progress(pname + ": logits and targets ... ", false);
  ref::HostProblem in = ref::make_problem(s, 2024, p, opt.per_position);
  progress(seconds_text(seconds_since(t0)));
  std::optional<ref::Result64> expected;
  if (env.opt.check) {
    t0 = std::chrono::steady_clock::now();
    progress(pname + ": float64 reference ... ", false);
    expected = ref::reference_backward(in);
    progress(seconds_text(seconds_since(t0)));
  }
  std::vector<double> scales(std::size_t(M), in.dloss_value);
  if (!in.dloss.empty()) std::copy(in.dloss.begin(), in.dloss.end(), scales.begin());

  Buffers<ExecSpace, T> full;
  full.logits = Matrix<ExecSpace, T>("llmk-perf::logits", M, Vp);
  full.losses = Vector<ExecSpace, float>("llmk-perf::losses", M);
  full.targets = decltype(full.targets)("llmk-perf::targets", M);
  full.dloss_value = in.dloss_value;
  full.V = s.V;
  if (!in.dloss.empty()) {
    full.dloss = Vector<ExecSpace, float>("llmk-perf::dloss", M);
    upload(exec, full.dloss, in.dloss);
  }
  {
    auto h = Kokkos::create_mirror_view(full.targets);
    for (index_t m = 0; m < M; ++m) h(m) = in.targets[std::size_t(m)];
    Kokkos::deep_copy(exec, full.targets, h);
  }
  const std::vector<T> init_logits = converted<T>(in.logits);
  in.logits.clear();
  in.logits.shrink_to_fit();
  auto reset = [&, exec] {
    upload(exec, full.logits, init_logits);
    exec.fence();
  };
  reset();
  const auto h_logits = Kokkos::create_mirror_view(full.logits);
  const auto h_losses = Kokkos::create_mirror_view(full.losses);
  // The relative L2 errors for the table; the element-wise tolerances of the
  // tests decide whether the row is valid.
  auto verify = [&, exec] {
    Kokkos::deep_copy(exec, h_logits, full.logits);
    Kokkos::deep_copy(exec, h_losses, full.losses);
    exec.fence();
    std::vector<reference::Comparison> cmp = {
        compare_output("dlogits", h_logits.data(), expected->dlogits, Vp, 1.0),
        compare_output("losses", h_losses.data(), expected->losses, 0, 1.0)};
    std::vector<float> dl(h_logits.data(), h_logits.data() + M * Vp);
    const std::vector<float> ls(h_losses.data(), h_losses.data() + M);
    const std::string e1 = ref::compare("dlogits", dl, expected->dlogits, Vp,
                                        ref::dlogits_tolerance(p), scales);
    const std::string e2 = ref::compare("losses", ls, expected->losses, 1, ref::losses_tolerance(p));
    for (auto* e : {&e1, &e2}) {
      if (e->empty()) continue;
      reference::Comparison& c = cmp[e == &e1 ? 0 : 1];
      c.ok = false;
      c.message = *e;
    }
    return check_result(cmp);
  };

  const auto copy = [&, exec] { return copy_row(exec, bytes, M, pname); };
  add_planned_rows(group.rows, planned, pname, copy, [&](Row& row, const Planned& plan) {
    row.bytes = bytes;
    if (expected) {
      row.reset = reset;
      row.verify = verify;
    }
    if (!plan.peer) {
      ClassifierBackwardOptions options;
      options.impl = plan.impl;
      options.check_targets = !opt.no_target_check;
      row.run = [&ctx, b = full, options] { b.call(ctx, options); };
      row.run_part = [&ctx, b = full, options](std::int64_t n) { b.first_rows(n).call(ctx, options); };
    } else {
      row.run = [run = plan.peer->run, args = full.peer_args(pname)] { run(args); };
      row.run_part = [run = plan.peer->run, b = full, pname](std::int64_t n) {
        run(b.first_rows(n).peer_args(pname));
      };
    }
  });
  return run_rows(env.opt, exec, env.timer, group, records);
}

class Benchmark {
 public:
  explicit Benchmark(const Options& opt) : opt_(opt) {}

  template <class ExecSpace>
  Suite suite(const perf::Options& hopt) {
    const ref::Shape s = shape_of(opt_);
    const std::string backend = ExecSpace::name();
    impls_ = implementations().select(opt_.impls, backend);
    precisions_ = select_precisions(opt_.precisions, classifier_backward_precisions());
    peers_ = peers_for(backend);
    Suite suite;
    suite.title = "classifier backward";
    suite.params = {{"B", s.B}, {"T", s.T}, {"V", s.V}, {"Vp", s.Vp}};
    suite.derived = "M=" + std::to_string(s.M());
    suite.units = s.M();
    suite.unit_name = "row";
    suite.error_columns = {"dlogits", "losses"};
    suite.flags = {{"dloss_per_position", opt_.per_position},
                   {"no_target_check", opt_.no_target_check}};
    suite.default_precision = "fp32";
    suite.gflops_column = false;
    suite.gbs_column = true;
    suite.ceiling_label = "copy";
    suite.vs_column = false;
    for (reference::Precision p : precisions_) {
      suite.precisions.push_back(reference::precision_name(p));
      if (hopt.peers) suite.ceilings.emplace_back(reference::precision_name(p), "peer:copy");
    }
    suite.notes.push_back(
        "in place (dlogits over the logits, as llm.c); dloss " +
        std::string(opt_.per_position ? "per position" : "1/(B·T) for every position") +
        "; targets " + (opt_.no_target_check ? "not checked" : "checked on the device first") +
        "; errors: relative L2 against the float64 reference (validity: the tests' element-wise "
        "tolerances)");
    suite.notes.push_back("GB/s: the logits read once and written once, and the targets read");
    return suite;
  }

  template <class ExecSpace>
  bool run_precision(const Env<ExecSpace>& env, const std::string& name, Suite& suite,
                     std::vector<Record>& records) {
    reference::Precision p;
    if (!reference::parse_precision(name, p))
      throw std::logic_error("llmk-perf: the reference knows no precision '" + name + "'");
    const auto rules = declared_rules<Peer>(implementations(), opt_.impls != "all",
                                            classifier_backward_auto_impl<ExecSpace>);
    // The peers take one dloss for all positions (llm.c's).
    const std::vector<Peer> none;
    const std::vector<Planned> planned = plan_rows(name, ExecSpace::name(), impls_,
                                                   opt_.per_position ? none : peers_,
                                                   env.opt.peers, rules);
    return p == reference::Precision::bf16
               ? classifier_backward::run_precision<ExecSpace, bf16>(env, opt_, suite, p, planned,
                                                                     records)
               : classifier_backward::run_precision<ExecSpace, float>(env, opt_, suite, p,
                                                                      planned, records);
  }

 private:
  const Options& opt_;
  std::vector<std::string> impls_;
  std::vector<reference::Precision> precisions_;
  std::vector<Peer> peers_;
};

}  // namespace

const Implementations& implementations() {
  static const Implementations impls(
      classifier_backward_impls(), [](auto space, const std::string& name) {
        return classifier_backward_available<typename decltype(space)::type>(name);
      });
  return impls;
}

void add_options(CLI::App& app, Options& opt) {
  app.add_option("--B", opt.B, "batch size (0: a valid no-op)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--T", opt.T, "sequence length (0: a valid no-op)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--V", opt.V, "vocabulary (the real columns)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--Vp", opt.Vp, "padded vocabulary (the logits' rows)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--impl", opt.impls, implementations().option_help())
      ->capture_default_str()
      ->check(implementations().validator());
  app.add_option("--precision", opt.precisions,
                 "comma list of " + join(classifier_backward_precisions()) + ", or 'all'")
      ->capture_default_str()
      ->check(list_validator(classifier_backward_precisions(), "precision", "PRECISIONS"));
  app.add_flag("--dloss-per-position", opt.per_position,
               "a float dloss per position rather than 1/(B·T) for all (no peer row then)");
  app.add_flag("--no-target-check", opt.no_target_check,
               "options.check_targets = false: no check of the targets (and no wait for it)");
}

int run(const perf::Options& harness, const Options& opt) {
  Benchmark benchmark(opt);
  return perf::run(harness, benchmark);
}

}  // namespace llmk::perf::classifier_backward
