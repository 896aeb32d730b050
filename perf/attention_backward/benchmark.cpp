// The attention backward in llmk-perf (`llmk-perf attention_backward`): its
// options (the problem's sizes, the implementations and precisions to time,
// dqkv accumulated) and its run: per precision, one row per llmk
// implementation that declares it, in the order of
// llmk::impls<llmk::AttentionBackward>(), then the peers (peers.hpp): peer:copy, a
// device copy moving as many bytes as a call must, and on the host
// peer:openblas (fp32: OpenBLAS sgemm per (b, h) around the same softmax
// backward). All on the same inputs, each validated against the float64
// reference of llmk_attention_backward_reference before it is timed.
// GFLOP/s counts the four products on the causal half only (Shape::flops:
// 4·B·C·T·(T+1)), whatever an implementation computes; GB/s the bytes a call
// must move (dout, qkv and att's causal half read, dqkv written, and read
// when accumulated).
#include "../harness/copy_peer.hpp"
#include "../harness/driver.hpp"
#include "../harness/planned_rows.hpp"
#include "../harness/reference_io.hpp"
#include "../harness/subcommand.hpp"
#include "peers.hpp"

#include <llmk/attention_backward.hpp>
#include <llmk/context.hpp>
#include <ops/attention_backward/reference/compare.hpp>
#include <ops/attention_backward/reference/problem.hpp>
#include <ops/attention_backward/reference/reference.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>

namespace llmk::perf::attention_backward {
namespace {

struct Options {
  // GPT-2 124M's attention at llm.c's training batch.
  std::int64_t B = 8, T = 1024, C = 768, NH = 12;
  std::string impls = "all";        // "all", or a comma list of implementation names / "auto"
  std::string precisions = "fp32";  // "all", or a comma list: fp32, bf16
  bool overwrite_dqkv = false;      // Update::overwrite on dqkv (llm.c's; default +=)
};

const Implementations& implementations();

namespace ref = reference::attention;

// Sizes the host problem could not be made of (the library refuses them
// too, but the problem is made first).
void check_sizes(const ref::Shape& s) {
  if (s.NH < 1 || s.C % s.NH != 0)
    throw std::invalid_argument("--C " + std::to_string(s.C) + " is not a multiple of --NH " +
                                std::to_string(s.NH) + " (at least 1)");
  const index_t max = std::numeric_limits<index_t>::max() / 8;
  const auto fits = [&](double n) { return n < double(max); };
  if (!fits(double(s.B) * double(s.T) * 3.0 * double(s.C)) ||
      !fits(double(s.B) * double(s.NH) * double(s.T) * double(s.T)))
    throw std::invalid_argument("sizes too large: B·T·3C or B·NH·T·T overflows");
}

ref::Shape shape_of(const Options& opt) { return {"perf", opt.B, opt.T, opt.C, opt.NH}; }

// Whether `name` is the recompute variant's (attention_backward_recompute:
// out and lse in place of att) rather than attention_backward's.
bool is_recompute(const std::string& name) {
  for (const ImplInfo& info : llmk::impls<llmk::AttentionBackwardRecompute>())
    if (info.name == name) return true;
  return false;
}

// The bytes a call must move: dout, qkv and att's causal half read, dqkv
// written (and read when accumulated).
double bytes_of(const ref::Shape& s, reference::Precision p, bool accumulate) {
  const double e = p == reference::Precision::bf16 ? 2.0 : 4.0;
  const double M = double(s.M()), C = double(s.C), T = double(s.T);
  return e * (M * C + M * 3 * C + double(s.B) * double(s.NH) * T * (T + 1) / 2 +
              (accumulate ? 2.0 : 1.0) * M * 3 * C);
}
// The recompute variant's: dout, out, qkv and lse (float) read, dqkv written
// (and read when accumulated).
double recompute_bytes_of(const ref::Shape& s, reference::Precision p, bool accumulate) {
  const double e = p == reference::Precision::bf16 ? 2.0 : 4.0;
  const double M = double(s.M()), C = double(s.C);
  return e * (2 * M * C + M * 3 * C + (accumulate ? 2.0 : 1.0) * M * 3 * C) +
         4.0 * double(s.B) * double(s.NH) * double(s.T);
}

template <class ExecSpace, class T>
using Att = Kokkos::View<const T****, Kokkos::LayoutRight, typename ExecSpace::device_type,
                         Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class ExecSpace>
using Lse = Kokkos::View<const float***, Kokkos::LayoutRight, typename ExecSpace::device_type,
                         Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// The gradient and the inputs of a run in one precision, as row-major
// matrices: dqkv, qkv (B·T) × 3C, dout (B·T) × C, att (B·NH·T) × T; for the
// recompute variant out (B·T) × C and lse (B·NH) × T.
template <class ExecSpace, class E>
struct Buffers {
  Matrix<ExecSpace, E> dqkv;
  ConstMatrix<ExecSpace, E> dout, qkv, att, out;
  ConstMatrix<ExecSpace, float> lse;
  index_t B = 0, T = 0, C = 0, NH = 1;

  // The same buffers cut to their first b sequences: what the probes run.
  Buffers first_sequences(index_t b) const {
    Buffers p = *this;
    const std::pair<index_t, index_t> rows(0, b * T), att_rows(0, b * NH * T);
    p.dqkv = Kokkos::subview(dqkv, rows, Kokkos::ALL);
    p.dout = Kokkos::subview(dout, rows, Kokkos::ALL);
    p.qkv = Kokkos::subview(qkv, rows, Kokkos::ALL);
    p.att = Kokkos::subview(att, att_rows, Kokkos::ALL);
    p.out = Kokkos::subview(out, rows, Kokkos::ALL);
    p.lse = Kokkos::subview(lse, std::pair<index_t, index_t>(0, b * NH), Kokkos::ALL);
    p.B = b;
    return p;
  }

  void call(Context<ExecSpace>& ctx, const AttentionBackwardOptions& options) const {
    if (is_recompute(options.impl))
      llmk::attention_backward_recompute(ctx, dqkv, dout, qkv, out,
                                         Lse<ExecSpace>(lse.data(), B, NH, T), options);
    else
      llmk::attention_backward(ctx, dqkv, dout, qkv, Att<ExecSpace, E>(att.data(), B, NH, T, T),
                               options);
  }

  PeerArgs peer_args(int threads, const std::string& precision, bool accumulate) const {
    return {dqkv.data(), dout.data(), qkv.data(), att.data(), B, T, C, NH,
            precision, accumulate, threads};
  }
};

using Planned = PlannedRow<Peer>;

// A row of attention_backward_recompute's (from out and lse).
bool recomputes(const Planned& r) { return r.skip.empty() && !r.peer && is_recompute(r.resolved); }

// The rows of one precision: makes its problem and reference, its buffers,
// runs the rows (run_rows) and frees it all. Returns whether a row failed.
template <class ExecSpace, class E>
bool run_precision(const Env<ExecSpace>& env, const Options& opt, const Suite& suite,
                   reference::Precision p, const std::vector<Planned>& planned,
                   std::vector<Record>& records) {
  const ExecSpace& exec = env.exec;
  Context<ExecSpace>& ctx = env.ctx;
  const perf::Options& hopt = env.opt;
  const ref::Shape s = shape_of(opt);
  const index_t M = s.M(), C = s.C;
  const std::string pname = reference::precision_name(p);
  const double bytes = bytes_of(s, p, !opt.overwrite_dqkv);

  Suite group = suite;  // the header's fields; its rows are this precision's
  const bool computes = any_computes(planned);
  // Rows that read att (attention_backward's and the peers) and rows of the
  // recompute variant: each kind gets its inputs and reference only if asked for.
  const auto any = [&](bool recompute) {
    return std::any_of(planned.begin(), planned.end(), [&](const Planned& r) {
      return r.skip.empty() && !r.copy && recomputes(r) == recompute;
    });
  };
  std::optional<ref::HostProblem> in;
  std::optional<std::vector<double>> expected, expected_recompute;
  if (computes) {
    auto t0 = std::chrono::steady_clock::now();
    progress(pname + ": inputs and the forward's att, out, lse ... ", false);
    in = ref::make_problem(s, 2024, p, hopt.threads);
    progress(seconds_text(seconds_since(t0)));
    if (hopt.check && any(false)) {
      t0 = std::chrono::steady_clock::now();
      progress(pname + ": float64 reference ... ", false);
      expected = ref::reference_backward(*in, opt.overwrite_dqkv, ref::Masking::Causal, hopt.threads);
      progress(seconds_text(seconds_since(t0)));
    }
    if (hopt.check && any(true)) {
      t0 = std::chrono::steady_clock::now();
      progress(pname + ": float64 reference of the recompute variant ... ", false);
      expected_recompute = ref::reference_backward_recompute(*in, opt.overwrite_dqkv, hopt.threads);
      progress(seconds_text(seconds_since(t0)));
    }
  }

  // The buffers every row of this precision works on; dqkv's initial values
  // kept on the host for the resets. An overwritten dqkv starts as NaN: a
  // row that reads it fails its check.
  Buffers<ExecSpace, E> full;
  std::vector<E> init_dqkv;
  if (computes) {
    const Matrix<ExecSpace, E> dout("llmk-perf::dout", M, C), qkv("llmk-perf::qkv", M, 3 * C),
        att("llmk-perf::att", any(false) ? s.B * s.NH * s.T : 0, s.T),
        out("llmk-perf::out", M, C);
    const Matrix<ExecSpace, float> lse("llmk-perf::lse", s.B * s.NH, s.T);
    upload(exec, dout, converted<E>(in->dout));
    upload(exec, qkv, converted<E>(in->qkv));
    if (any(false)) upload(exec, att, converted<E>(in->att));
    upload(exec, out, converted<E>(in->out));
    upload(exec, lse, in->lse);
    full.dqkv = Matrix<ExecSpace, E>("llmk-perf::dqkv", M, 3 * C);
    full.dout = dout, full.qkv = qkv, full.att = att, full.out = out, full.lse = lse;
    full.B = s.B, full.T = s.T, full.C = s.C, full.NH = s.NH;
    init_dqkv = opt.overwrite_dqkv
                    ? std::vector<E>(in->dqkv.size(), E(std::numeric_limits<float>::quiet_NaN()))
                    : converted<E>(in->dqkv);
    in.reset();  // the host inputs are on the device now
    exec.fence();
  }
  auto reset = [&, exec] {
    upload(exec, full.dqkv, init_dqkv);
    exec.fence();
  };
  const auto h_dqkv = Kokkos::create_mirror_view(full.dqkv);
  auto verify = [&, exec] {
    Kokkos::deep_copy(exec, h_dqkv, full.dqkv);
    exec.fence();
    return check_result(
        {compare_output("dqkv", h_dqkv.data(), *expected, 3 * C, ref::tolerance(p))});
  };
  auto verify_recompute = [&, exec] {
    Kokkos::deep_copy(exec, h_dqkv, full.dqkv);
    exec.fence();
    return check_result({compare_output("dqkv", h_dqkv.data(), *expected_recompute, 3 * C,
                                        ref::recompute_tolerance(p))});
  };

  const int threads = env.threads;
  const auto copy = [&, exec] { return copy_row(exec, bytes, s.B, pname); };
  add_planned_rows(group.rows, planned, pname, copy, [&](Row& row, const Planned& plan) {
    const bool recompute = recomputes(plan);
    row.bytes = recompute ? recompute_bytes_of(s, p, !opt.overwrite_dqkv) : bytes;
    if (recompute ? bool(expected_recompute) : bool(expected)) {
      row.reset = reset;
      row.verify = recompute ? std::function<CheckResult()>(verify_recompute)
                             : std::function<CheckResult()>(verify);
    }
    if (!plan.peer) {  // an implementation, from the registry
      AttentionBackwardOptions options;
      options.impl = plan.impl;
      options.math = math_of(p);
      if (opt.overwrite_dqkv) options.dqkv_update = Update::overwrite;
      row.run = [&ctx, b = full, options] { b.call(ctx, options); };
      row.run_part = [&ctx, b = full, options](std::int64_t n) {
        b.first_sequences(n).call(ctx, options);
      };
      if (recompute) row.note = "attention_backward_recompute: out and lse, no T × T";
      if (!implementations().info(plan.resolved).deterministic)
        add_note(row, "not bitwise deterministic");
    } else {
      const PeerArgs args = full.peer_args(threads, pname, !opt.overwrite_dqkv);
      row.run = [run = plan.peer->run, args] { run(args); };
      row.run_part = [run = plan.peer->run, b = full, threads, pname, acc = !opt.overwrite_dqkv](
                         std::int64_t n) { run(b.first_sequences(n).peer_args(threads, pname, acc)); };
    }
  });
  return run_rows(hopt, exec, env.timer, group, records);
}

// The harness's driver runs this (driver.hpp).
class Benchmark {
 public:
  explicit Benchmark(const Options& opt) : opt_(opt) {}

  template <class ExecSpace>
  Suite suite(const perf::Options& hopt) {
    const ref::Shape s = shape_of(opt_);
    check_sizes(s);
    const std::string backend = ExecSpace::name();
    impls_ = implementations().select(opt_.impls, backend);
    precisions_ =
        select_precisions(opt_.precisions, with_tf32(llmk::precisions<llmk::AttentionBackward>()));
    peers_ = peers_for(backend);

    Suite suite;
    suite.title = "attention backward";
    suite.params = {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"NH", s.NH}};
    char derived[96];
    std::snprintf(derived, sizeof derived, "HS=%lld, %.4g GFLOP per call on the causal half",
                  (long long)s.HS(), s.flops() * 1e-9);
    suite.derived = derived;
    suite.flops = s.flops();
    suite.units = s.B;
    suite.unit_name = "sequence";
    suite.error_columns = {"dqkv"};
    suite.flags = {{"overwrite_dqkv", opt_.overwrite_dqkv}};
    suite.default_precision = "fp32";
    suite.gflops_column = true;
    suite.gbs_column = true;
    suite.ceiling_label = "copy";
    suite.vs_column = false;
    for (reference::Precision p : precisions_) {
      const std::string name = reference::precision_name(p);
      suite.precisions.push_back(name);
      if (!hopt.peers) continue;
      suite.ceilings.emplace_back(name, "peer:copy");
      const std::string peer = comparison_among(peers_, name);
      if (!peer.empty()) {
        suite.comparisons.emplace_back(name, "peer:" + peer);
        suite.vs_column = true;
      }
    }
    suite.notes.push_back(std::string("dqkv ") +
                          (opt_.overwrite_dqkv ? "overwritten (=)" : "accumulated (+=)") +
                          "; errors: relative L2 of dqkv against the float64 reference");
    suite.notes.push_back(
        "GFLOP/s: the four products on the causal half, 4·B·C·T·(T+1) (a dense implementation "
        "does about twice that, the recompute variant's 'flash' 6·B·C·T·(T+1): q·kᵀ and "
        "dout·vᵀ twice); GB/s: dout, qkv and att's causal half read (flash: out and lse for "
        "att), dqkv written" +
        std::string(!opt_.overwrite_dqkv ? " and read" : ""));
    if (s.M() == 0 || s.C == 0)
      suite.notes.push_back(
          "zero-sized problem: every llmk call is a valid no-op; times are the calls' fixed costs");
    return suite;
  }

  template <class ExecSpace>
  bool run_precision(const Env<ExecSpace>& env, const std::string& name, Suite& suite,
                     std::vector<Record>& records) {
    reference::Precision p;
    if (!reference::parse_precision(name, p))
      throw std::logic_error("llmk-perf: the reference knows no precision '" + name + "'");
    const auto rules =
        declared_rules<Peer>(implementations(), opt_.impls != "all", [p](const std::string&) {
          return llmk::auto_impl<llmk::AttentionBackward, ExecSpace>(storage_name(p), math_of(p));
        });
    const std::vector<Planned> planned =
        plan_rows(name, ExecSpace::name(), impls_, peers_, env.opt.peers, rules);
    if (planned.empty()) {
      const std::string line = name + ": no implementation or peer runs it on " + ExecSpace::name();
      progress(line);
      suite.notes.push_back(line);
      return false;
    }
    return with_types(p, [&](auto types) {
      using T = decltype(types);
      return attention_backward::run_precision<ExecSpace, typename T::Act>(env, opt_, suite, p,
                                                                          planned, records);
    });
  }

 private:
  const Options& opt_;
  std::vector<std::string> impls_;
  std::vector<reference::Precision> precisions_;
  std::vector<Peer> peers_;
};

// attention_backward's implementations, then the recompute variant's
// (attention_backward_recompute: its rows take out and lse for att).
const Implementations& implementations() {
  static const Implementations impls(
      [] {
        std::vector<ImplInfo> all(llmk::impls<llmk::AttentionBackward>().begin(),
                                  llmk::impls<llmk::AttentionBackward>().end());
        for (const ImplInfo& info : llmk::impls<llmk::AttentionBackwardRecompute>())
          all.push_back(info);
        return all;
      }(),
      [](auto space, const std::string& name) {
        using Space = typename decltype(space)::type;
        return is_recompute(name) ? llmk::available<llmk::AttentionBackwardRecompute, Space>(name)
                                  : llmk::available<llmk::AttentionBackward, Space>(name);
      });
  return impls;
}

void add_options(CLI::App& app, Options& opt) {
  add_size(app, "--B", opt.B, "batch size");
  add_size(app, "--T", opt.T, "sequence length");
  add_size(app, "--C", opt.C, "channels, a multiple of --NH");
  app.add_option("--NH", opt.NH, "heads (HS = C / NH channels each)")
      ->capture_default_str()
      ->check(perf::count_at_least(1, "heads"));
  app.add_option("--impl", opt.impls, implementations().option_help())
      ->capture_default_str()
      ->check(implementations().validator());
  const std::vector<std::string> precisions =
      with_tf32(llmk::precisions<llmk::AttentionBackward>());
  app.add_option("--precision", opt.precisions,
                 "comma list of " + join(precisions) +
                     ", or 'all': each implementation and peer gets a row for each of them it runs")
      ->capture_default_str()
      ->check(list_validator(precisions, "precision", "PRECISIONS"));
  add_overwrite(app, "--overwrite-dqkv", opt.overwrite_dqkv,
                "dqkv =", "as llm.c's backward, where qkv's gradient is a fresh buffer");
}

}  // namespace

Subcommand subcommand() {
  return subcommand_of<Benchmark, Options>(
      "attention_backward",
      "the backward pass of GPT-2's causal self-attention (dqkv, given dout, qkv and att)",
      add_options);
}

}  // namespace llmk::perf::attention_backward
