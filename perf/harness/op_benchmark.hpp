// A declared operation's llmk-perf subcommand, written once: per precision,
// the rows planned (planned_rows.hpp), the host problem and its float64
// reference, the arguments in the backend's memory (op_arrays.hpp), each
// row's reset, check, call and probe, then run_rows. The operation describes
// itself in a struct D (perf/<op>/benchmark.cpp):
//
//   using Spec;        its declaration (src/ops/<op>/spec.hpp): arguments, precisions
//   using Options;     llmk-perf's options (sizes, impls, precisions, flags)
//   using CallOptions; the library's options struct
//   using Shape, Problem;  the reference's shape and host problem
//   using Peer;        perf::Peer<its PeerArgs> (peers.hpp)
//   title, unit        "gelu backward"; "row" or "sequence" (what probes take parts of)
//   using Tag;         its tag in llmk's generic queries (llmk/operation.hpp: impls<Tag>(), ...)
//   shape(opt)         the run's shape (std::invalid_argument for sizes that overflow)
//   sizes(shape)       its sizes by symbol (Spec's extents)
//   units(shape), part(sizes, n)   the units, and the sizes of the first n of them
//   header(suite, shape, opt, sizes_text)  params, derived, flags, notes
//   bytes(shape, precision, opt)   what a call must move (GB/s, peer:copy)
//   make(shape, precision, opt)    the host problem
//   values(problem, i), int_values(problem, i)   argument i's host values
//   expected(problem, opt, threads)  every output's float64 reference, in order
//   tolerance(precision, k)        output k's
//   overwrites(opt)    per output: overwritten (starts as NaN) or accumulated
//   call_options(impl, opt), call(ctx, arrays, call_options)
//   peers(backend, opt), peer_args(arrays, precision, opt)
//   help               the subcommand's line of help (its name is Spec's)
//   add_options(app, opt)  its sizes (add_size), add_selection_options<D>, its flags
// and where it needs them:
//   present(opt)       per argument, whether the run passes it (default: all)
//   in_place           true: an output that may replace an input does
//   using Kept; keep(problem), judge(kept, k, out, expected_k, precision)
//                      what the check keeps of the problem, and output k's
//                      own test ("" or why it fails) beside the relative L2
//   tf32 = true        "tf32" is a precision too, after "fp32": fp32 storage,
//                      the call's CallOptions::math = Math::tf32
//   refuse_impls_without_precisions = true   an --impl named that runs none
//                      of the --precision asked for is refused (exit 2), as
//                      the library refuses such a call, not a skipped row
//   set_threads(threads)   host libraries' threads (OpenBLAS: the reference's
//                      and the peers'), set before a precision's problem
//   peer_skip(peer, shape, opt)   why a peer cannot run these settings, or
//                      "": a skipped row, and never the "vs" comparison
//   peer_args(arrays, precision, opt, threads)   with the host threads a host
//                      peer may use (instead of the three-argument one)
//   left_alone(peer)   the outputs (names) a peer does not compute: not
//                      compared, "<name> not computed" in its check
//   extend_row(row, plan, env, arrays, opt)   what a row has beyond its call:
//                      parts it also times alone (Row::stages, in the
//                      header's suite.stage_columns), notes
//   using Variant;     a second declared operation with the same outputs
//                      from other inputs (attention_backward_recompute
//                      beside attention_backward), timed in the same table:
//                      its implementations join --impl and the rows, after
//                      D's, on the same problem, each checked against its own
//                      reference. It declares Tag, Spec, values, expected,
//                      tolerance, bytes (where D has it), call and note (a
//                      note on its rows), and shares the rest with D (Options,
//                      Shape, Problem, CallOptions, sizes, part, overwrites,
//                      call_options); "auto", the peers, peer:copy and the
//                      header stay D's, and extend_row is for D's rows only
// Without bytes() the operation is compute-bound: GFLOP/s (the header's
// suite.flops), no GB/s column and no peer:copy.
#pragma once

#include "copy_peer.hpp"
#include "description_hooks.hpp"
#include "driver.hpp"
#include "op_arrays.hpp"
#include "peer_list.hpp"
#include "planned_rows.hpp"
#include "prepared_arrays.hpp"
#include "reference_io.hpp"
#include "subcommand.hpp"

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace llmk::perf {

template <class D>
class OpBenchmark {
 public:
  using Options = typename D::Options;
  using Peer = typename D::Peer;
  using Planned = PlannedRow<Peer>;

  explicit OpBenchmark(const Options& opt) : opt_(opt) {}

  template <class ExecSpace>
  Suite suite(const perf::Options& hopt) {
    const typename D::Shape s = D::shape(opt_);
    const std::string backend = ExecSpace::name();
    impls_ = implementations_of<D>().select(opt_.impls, backend);
    const std::vector<reference::Precision> precisions =
        select_precisions(opt_.precisions, precision_names_of<D>());
    if constexpr (has<refusal_hook, D>)
      if (D::refuse_impls_without_precisions) refuse_impls_without(precisions);
    peers_ = D::peers(backend, opt_);
    std::vector<Peer> runnable;  // the candidates for the "vs" comparison
    for (const Peer& peer : peers_)
      if (peer_skip(peer, s).empty()) runnable.push_back(peer);
    Suite suite;
    suite.title = D::title;
    suite.units = D::units(s);
    suite.unit_name = D::unit;
    for (const core::op::Arg& a : D::Spec::args)
      if (a.output()) suite.error_columns.emplace_back(a.name);
    suite.default_precision = "fp32";
    suite.gflops_column = !memory_bound;
    suite.gbs_column = memory_bound;
    if (memory_bound) suite.ceiling_label = "copy";
    suite.vs_column = false;
    std::string sizes;
    for (reference::Precision p : precisions) {
      const std::string name = reference::precision_name(p);
      suite.precisions.push_back(name);
      if constexpr (memory_bound) {
        char mb[64];
        std::snprintf(mb, sizeof mb, "%s %.4g MB", name.c_str(), D::bytes(s, p, opt_) * 1e-6);
        sizes += (sizes.empty() ? "" : ", ") + std::string(mb);
      }
      if (!hopt.peers) continue;
      if (memory_bound) suite.ceilings.emplace_back(name, "peer:copy");
      const std::string peer = comparison_among(runnable, name);
      if (!peer.empty()) {
        suite.comparisons.emplace_back(name, "peer:" + peer);
        suite.vs_column = true;
      }
    }
    D::header(suite, s, opt_, sizes);
    return suite;
  }

  template <class ExecSpace>
  bool run_precision(const Env<ExecSpace>& env, const std::string& name, Suite& suite,
                     std::vector<Record>& records) {
    reference::Precision p;
    if (!reference::parse_precision(name, p))
      throw std::logic_error("llmk-perf: the reference knows no precision '" + name + "'");
    auto rules =
        declared_rules<Peer>(implementations_of<D>(), opt_.impls != "all", [p](const std::string&) {
          return llmk::auto_impl<typename D::Tag, ExecSpace>(storage_name(p), math_of(p));
        });
    rules.copy_row = memory_bound;
    const typename D::Shape s = D::shape(opt_);
    rules.peer_skip = [this, s](const Peer& peer) { return peer_skip(peer, s); };
    const std::vector<Planned> planned =
        plan_rows(name, ExecSpace::name(), impls_, peers_, env.opt.peers, rules);
    if (planned.empty()) {
      const std::string line = name + ": no implementation or peer runs it on " + ExecSpace::name();
      progress(line);
      suite.notes.push_back(line);
      return false;
    }
    return run_planned(env, suite, p, planned, records);
  }

 private:
  using Spec = typename D::Spec;
  // D's Variant, or D itself where it has none (then no row is the Variant's).
  using Variant = typename hook_or<variant_hook, D, D>::type;
  static constexpr bool memory_bound = has<bytes_hook, D>;

  // Whether a planned row is one of the Variant's implementations.
  static bool of_variant_row(const Planned& plan) {
    return !plan.peer && !plan.copy && of_variant<D>(plan.resolved);
  }

  std::string peer_skip(const Peer& peer, const typename D::Shape& s) const {
    if constexpr (has<peer_skip_hook, D>) return D::peer_skip(peer, s, opt_);
    return {};
  }
  template <class Arrays>
  auto peer_args(const Arrays& a, const std::string& precision, int threads) const {
    if constexpr (has<threads_peer_args_hook, D, Arrays>)
      return D::peer_args(a, precision, opt_, threads);
    else
      return D::peer_args(a, precision, opt_);
  }
  static std::vector<std::string> left_alone(const Planned& plan) {
    if constexpr (has<left_alone_hook, D>)
      if (plan.peer) return D::left_alone(*plan.peer);
    return {};
  }

  // An implementation named in --impl that runs none of the precisions asked
  // for (`--precision tf32 --impl naive`) would time nothing: refused, as the
  // library refuses the call (std::invalid_argument: exit 2). One that runs
  // some of them keeps a "skipped" row for the others, with the reason.
  void refuse_impls_without(const std::vector<reference::Precision>& precisions) const {
    if (opt_.impls == "all") return;
    for (const std::string& name : impls_) {
      if (name == "auto") continue;
      const ImplInfo& info = implementations_of<D>().info(name);
      std::vector<std::string> asked, runs;
      for (reference::Precision p : precisions) {
        asked.push_back(reference::precision_name(p));
        if (declares(info, p)) runs.push_back(asked.back());
      }
      if (!runs.empty()) continue;
      for (reference::Precision p : reference::all_precisions())
        if (declares(info, p)) runs.push_back(reference::precision_name(p));
      throw std::invalid_argument("--impl " + name + " runs none of --precision " + join(asked) +
                                  " (it runs " + join(runs) + ")");
    }
  }

  // The rows of one precision: its problem and references, its arrays, the
  // rows, run and freed. Returns whether a row failed.
  template <class ExecSpace>
  bool run_planned(const Env<ExecSpace>& env, const Suite& suite, reference::Precision p,
                   const std::vector<Planned>& planned, std::vector<Record>& records) {
    const ExecSpace& exec = env.exec;
    const typename D::Shape s = D::shape(opt_);
    const std::string pname = reference::precision_name(p);
    Suite group = suite;  // the header's fields; its rows are this precision's
    // Only rows that compute need the problem (peer:copy needs none), and
    // an operation's arrays and reference only its own rows.
    const auto computes = [&planned](bool variant) {
      return std::any_of(planned.begin(), planned.end(), [variant](const Planned& r) {
        return r.skip.empty() && !r.copy && of_variant_row(r) == variant;
      });
    };
    PreparedArrays<D, D, ExecSpace> own(s, p, opt_, computes(false));
    std::optional<PreparedArrays<D, Variant, ExecSpace>> variant;
    if (computes(true)) variant.emplace(s, p, opt_, true);
    if (computes(false) || variant) {
      if constexpr (has<set_threads_hook, D>) D::set_threads(env.threads);
      const auto t0 = std::chrono::steady_clock::now();
      progress(pname + ": inputs ... ", false);
      std::optional<typename D::Problem> in = D::make(s, p, opt_);
      progress(seconds_text(seconds_since(t0)));
      if (env.opt.check && computes(false))
        own.compute_reference(*in, opt_, env.threads, pname + ": float64 reference");
      if (env.opt.check && variant)
        variant->compute_reference(
            *in, opt_, env.threads,
            pname + ": float64 reference of " + op_name<typename Variant::Spec>());
      if (computes(false)) own.load(exec, *in);
      if (variant) variant->load(exec, *in);
      exec.fence();  // the uploads' host arrays are freed with `in`
    }
    double bytes = 0;
    if constexpr (memory_bound) bytes = D::bytes(s, p, opt_);
    const auto copy = [&, exec] { return copy_row(exec, bytes, D::units(s), pname); };
    add_planned_rows(group.rows, planned, pname, copy, [&](Row& row, const Planned& plan) {
      if constexpr (has<variant_hook, D>)
        if (of_variant_row(plan)) {
          add_note(row, Variant::note);
          return implementation_row(row, plan, env, p, *variant);
        }
      if (plan.peer)
        peer_row(row, plan, env, p, own);
      else
        implementation_row(row, plan, env, p, own);
      if constexpr (has<extend_row_hook, D, OpArrays<ExecSpace, Spec>, Env<ExecSpace>>)
        D::extend_row(row, plan, env, own.full, opt_);
    });
    return run_rows(env.opt, exec, env.timer, group, records);
  }

  // What every row that computes has: its bytes, the reset of its outputs,
  // their check, and the call on the first n units (Op: D or its Variant).
  template <class Op, class ExecSpace>
  auto prepare_row(Row& row, const Planned& plan, const Env<ExecSpace>& env,
                   reference::Precision p, const PreparedArrays<D, Op, ExecSpace>& side) const {
    const typename D::Shape s = D::shape(opt_);
    if constexpr (memory_bound) row.bytes = Op::bytes(s, p, opt_);
    row.reset = [&side, exec = env.exec] { side.reset(exec); };
    if (side.checked())
      row.verify = [&side, exec = env.exec, alone = left_alone(plan)] {
        return side.verify(exec, alone);
      };
    return [full = side.full, s](std::int64_t n) { return full.part(D::part(D::sizes(s), n)); };
  }

  // An implementation's row, from the registry.
  template <class Op, class ExecSpace>
  void implementation_row(Row& row, const Planned& plan, const Env<ExecSpace>& env,
                          reference::Precision p,
                          const PreparedArrays<D, Op, ExecSpace>& side) const {
    const auto part = prepare_row(row, plan, env, p, side);
    typename D::CallOptions options = D::call_options(plan.impl, opt_);
    if constexpr (with_tf32_of<D>()) options.math = math_of(p);
    Context<ExecSpace>& ctx = env.ctx;
    row.run = [&ctx, full = side.full, options] { Op::call(ctx, full, options); };
    row.run_part = [&ctx, part, options](std::int64_t n) { Op::call(ctx, part(n), options); };
    if (!implementations_of<D>().info(plan.resolved).deterministic)
      add_note(row, "not bitwise deterministic");
  }

  // A peer's row, on D's arrays.
  template <class ExecSpace>
  void peer_row(Row& row, const Planned& plan, const Env<ExecSpace>& env, reference::Precision p,
                const PreparedArrays<D, D, ExecSpace>& side) const {
    const auto part = prepare_row(row, plan, env, p, side);
    const auto run = plan.peer->run;
    const int threads = env.threads;
    const std::string pname = reference::precision_name(p);
    row.run = [run, args = peer_args(side.full, pname, threads)] { run(args); };
    row.run_part = [run, part, pname, threads, this](std::int64_t n) {
      run(peer_args(part(n), pname, threads));
    };
  }

  const Options& opt_;
  std::vector<std::string> impls_;
  std::vector<Peer> peers_;
};

// The operation's subcommand, named as its entry (op_name).
template <class D>
Subcommand op_subcommand() {
  return subcommand_of<OpBenchmark<D>, typename D::Options>(op_name<typename D::Spec>(), D::help,
                                                            D::add_options);
}

}  // namespace llmk::perf
