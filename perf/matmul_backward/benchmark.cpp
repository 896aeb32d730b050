// The matmul backward in llmk-perf: its options (the problem's sizes, the
// implementations and precisions to time, GELU, dinp overwritten) and its
// run: per precision, one row per llmk implementation that declares it, in
// the order of llmk::impls<llmk::MatmulBackward>(), then the peers (peers.hpp) that
// run it, all on the same inputs, each validated against the float64
// reference of llmk_matmul_backward_reference before it is timed. One
// precision's buffers are freed before the next one's are made.
#include "../harness/driver.hpp"
#include "../harness/planned_rows.hpp"
#include "../harness/reference_io.hpp"
#include "../harness/subcommand.hpp"
#include "peers.hpp"

#include <llmk/context.hpp>
#include <llmk/matmul_backward.hpp>
#include <ops/matmul_backward/reference/compare.hpp>
#include <ops/matmul_backward/reference/reference.hpp>

#include <Kokkos_Core.hpp>
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>

namespace llmk::perf::matmul_backward {
namespace {

struct Options {
  reference::Shape shape = reference::seed_shape();  // B=8 T=1024 C=768 OC=3072
  std::string impls = "all";        // "all", or a comma list of implementation names / "auto"
  std::string precisions = "fp32";  // "all", or a comma list: fp32, tf32, bf16, bf16-fp32grad
  bool gelu = false;                // pass pre_gelu: the GELU backward fused into dinp
  bool overwrite_dinp = false;      // Update::overwrite on dinp (llm.c's training)
};

const Implementations& implementations();

// Sizes whose element counts overflow 64 bits are refused (the library would
// refuse them too, but the host problem is made first).
void check_sizes(const reference::Shape& s) {
  const index_t max = std::numeric_limits<index_t>::max();
  auto product = [max](index_t a, index_t b, const char* what) {
    if (a > 0 && b > max / a)
      throw std::invalid_argument(std::string("sizes too large: ") + what + " overflows 64 bits");
    return a * b;
  };
  const index_t M = product(s.B, s.T, "B·T");
  product(M, s.C, "B·T·C");
  product(M, s.OC, "B·T·OC");
  product(s.OC, s.C, "OC·C");
}

std::vector<std::string> precision_names() {
  return with_tf32(llmk::precisions<llmk::MatmulBackward>());
}

const MatmulBackwardImplInfo& info_of(const std::string& name) {
  for (const MatmulBackwardImplInfo& info : llmk::impls<llmk::MatmulBackward>())
    if (info.name == name) return info;
  throw std::logic_error("llmk-perf: no implementation '" + name + "'");
}

// The gradients and the inputs of a run in one precision (dinp, dout, inp,
// pre_gelu: M rows; pre_gelu empty without --gelu).
template <class ExecSpace, class Act, class Grad>
struct Buffers {
  Matrix<ExecSpace, Act> dinp;
  Matrix<ExecSpace, Grad> dweight;
  Vector<ExecSpace, Grad> dbias;
  ConstMatrix<ExecSpace, Act> dout, inp, weight, pre_gelu;
  bool gelu = false;

  // The same buffers cut to their first m rows of activations (a smaller
  // problem on the same memory): what the probes run.
  Buffers first_rows(index_t m) const {
    const std::pair<index_t, index_t> rows(0, m);
    Buffers b = *this;
    b.dinp = Kokkos::subview(dinp, rows, Kokkos::ALL);
    b.dout = Kokkos::subview(dout, rows, Kokkos::ALL);
    b.inp = Kokkos::subview(inp, rows, Kokkos::ALL);
    if (gelu) b.pre_gelu = Kokkos::subview(pre_gelu, rows, Kokkos::ALL);
    return b;
  }

  // pre_gelu as the call takes it: nullptr without --gelu.
  In<ExecSpace> pre() const { return gelu ? In<ExecSpace>(pre_gelu) : In<ExecSpace>(nullptr); }

  void call(Context<ExecSpace>& ctx, const MatmulBackwardOptions& options) const {
    llmk::matmul_backward(ctx, dinp, dweight, dbias, dout, inp, weight, pre(), options);
  }

  PeerArgs peer_args(int threads, const std::string& precision, bool overwrite_dinp) const {
    return {dinp.data(), dweight.data(), dbias.data(), dout.data(), inp.data(), weight.data(),
            gelu ? pre_gelu.data() : nullptr, index_t(dout.extent(0)), index_t(weight.extent(1)),
            index_t(weight.extent(0)), threads, precision, overwrite_dinp};
  }
};

using Planned = PlannedRow<Peer>;

// The rows of one precision: makes its problem and reference, its buffers,
// runs the rows (run_rows) and frees it all. Returns whether a row failed.
template <class ExecSpace, class Act, class Grad>
bool run_precision(const Env<ExecSpace>& env, const Options& opt, const Suite& suite,
                   reference::Precision p, const std::vector<Planned>& planned,
                   std::vector<Record>& records) {
  const ExecSpace& exec = env.exec;
  Context<ExecSpace>& ctx = env.ctx;
  const perf::Options& hopt = env.opt;
  const int threads = env.threads;
  const reference::Shape& s = opt.shape;
  const index_t M = s.M(), C = s.C, OC = s.OC;
  const std::string pname = reference::precision_name(p);

  Suite group = suite;  // the header's fields; its rows are this precision's
  const bool anything_runs = std::any_of(planned.begin(), planned.end(),
                                         [](const Planned& r) { return r.skip.empty(); });
  std::optional<reference::HostProblem> in;
  std::optional<reference::Gradients64> ref;
  if (anything_runs) {
    auto t0 = std::chrono::steady_clock::now();
    progress(pname + ": inputs" + (opt.gelu ? " and pre_gelu" : "") + " ... ", false);
    in = reference::make_problem(s, 2024, {p, opt.gelu});
    progress(seconds_text(seconds_since(t0)));
    if (hopt.check) {
      openblas_set_num_threads(hopt.threads);
      t0 = std::chrono::steady_clock::now();
      progress(pname + ": float64 reference (" +
                   reference::method_name(reference::Method::Auto, s) + ") ... ",
               false);
      ref = reference::reference_backward(*in, reference::Method::Auto, hopt.threads,
                                          {opt.overwrite_dinp, false, false});
      progress(seconds_text(seconds_since(t0)));
    }
    openblas_set_num_threads(threads);
  }

  // ---- the buffers every row of this precision works on; the initial
  // gradients in the element types, kept on the host for the resets. An
  // overwritten dinp starts as NaN: a row that reads it fails its check.
  Buffers<ExecSpace, Act, Grad> full;
  std::vector<Act> init_dinp;
  std::vector<Grad> init_dweight, init_dbias;
  if (anything_runs) {
    const Matrix<ExecSpace, Act> dout("llmk-perf::dout", M, OC), inp("llmk-perf::inp", M, C),
        weight("llmk-perf::weight", OC, C);
    upload(exec, dout, converted<Act>(in->dout));
    upload(exec, inp, converted<Act>(in->inp));
    upload(exec, weight, converted<Act>(in->weight));
    full.dinp = Matrix<ExecSpace, Act>("llmk-perf::dinp", M, C);
    full.dweight = Matrix<ExecSpace, Grad>("llmk-perf::dweight", OC, C);
    full.dbias = Vector<ExecSpace, Grad>("llmk-perf::dbias", OC);
    full.dout = dout, full.inp = inp, full.weight = weight;
    full.gelu = opt.gelu;
    if (opt.gelu) {
      const Matrix<ExecSpace, Act> pre("llmk-perf::pre_gelu", M, C);
      upload(exec, pre, converted<Act>(in->pre_gelu));
      full.pre_gelu = pre;
    }
    init_dinp = opt.overwrite_dinp
                    ? std::vector<Act>(in->dinp.size(), Act(std::numeric_limits<float>::quiet_NaN()))
                    : converted<Act>(in->dinp);
    init_dweight = converted<Grad>(in->dweight);
    init_dbias = converted<Grad>(in->dbias);
    in.reset();  // the host inputs are on the device now
    exec.fence();
  }
  auto reset = [&, exec] {
    upload(exec, full.dinp, init_dinp);
    upload(exec, full.dweight, init_dweight);
    upload(exec, full.dbias, init_dbias);
    exec.fence();
  };
  const auto h_dinp = Kokkos::create_mirror_view(full.dinp);
  const auto h_dweight = Kokkos::create_mirror_view(full.dweight);
  const auto h_dbias = Kokkos::create_mirror_view(full.dbias);
  using reference::Output;
  // Reads the outputs back and compares each with the reference, at its
  // precision's tolerance.
  auto verify = [&, exec](bool with_bias) {
    return [&, exec, with_bias] {
      Kokkos::deep_copy(exec, h_dinp, full.dinp);
      Kokkos::deep_copy(exec, h_dweight, full.dweight);
      Kokkos::deep_copy(exec, h_dbias, full.dbias);
      exec.fence();
      std::vector<reference::Comparison> cmp{
          compare_output("dinp", h_dinp.data(), ref->dinp, C, reference::tolerance(p, Output::dinp)),
          compare_output("dweight", h_dweight.data(), ref->dweight, C,
                         reference::tolerance(p, Output::dweight))};
      if (with_bias)
        cmp.push_back(compare_output("dbias", h_dbias.data(), ref->dbias, 0,
                                     reference::tolerance(p, Output::dbias)));
      return check_result(cmp, with_bias ? "" : "dbias not computed");
    };
  };
  const double bias_bytes = s.bias ? double(M) * double(OC) * sizeof(Act) : 0.0;

  const auto no_copy = []() -> Row { throw std::logic_error("matmul plans no peer:copy"); };
  add_planned_rows(group.rows, planned, pname, no_copy, [&](Row& row, const Planned& plan) {
    if (ref) {
      row.reset = reset;
      row.verify = verify(!plan.peer || plan.peer->computes_bias);
    }
    if (!plan.peer) {  // an implementation, from the registry
      const MatmulBackwardImplInfo& info = info_of(plan.resolved);
      MatmulBackwardOptions options;
      options.impl = plan.impl;
      options.math = math_of(p);
      if (opt.overwrite_dinp) options.dinp_update = Update::overwrite;
      row.run = [&ctx, b = full, options] { b.call(ctx, options); };
      row.run_part = [&ctx, b = full, options](std::int64_t rows) {
        b.first_rows(rows).call(ctx, options);
      };
      if (info.dbias == "fused") {
        row.stages.push_back({"bias", "fused", bias_bytes, {}});
      } else {
        row.stages.push_back({"bias", info.dbias, bias_bytes,
                              [&ctx, b = full, impl = plan.resolved] {
                                matmul_backward_bias_pass(ctx, b.dbias, b.dout, impl);
                              }});
      }
      if (!info.deterministic) add_note(row, "not bitwise deterministic");
      if (opt.gelu) add_note(row, "GELU backward " + info.gelu);
    } else {
      const Peer& peer = *plan.peer;
      const PeerArgs args = full.peer_args(threads, pname, opt.overwrite_dinp);
      row.run = [run = peer.run, args] { run(args); };
      row.run_part = [run = peer.run, args](std::int64_t rows) {
        PeerArgs part = args;
        part.M = rows;
        run(part);
      };
      if (peer.bias_only)
        row.stages.push_back({"bias", peer.bias_kernel, bias_bytes,
                              [bias = peer.bias_only, args] { bias(args); }});
      else if (peer.bias_kernel == "fused")
        row.stages.push_back({"bias", "fused", bias_bytes, {}});
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
    const reference::Shape& s = opt_.shape;
    check_sizes(s);
    const index_t M = s.M(), C = s.C, OC = s.OC;
    const std::string backend = ExecSpace::name();
    impls_ = implementations().select(opt_.impls, backend);
    precisions_ = select_precisions(opt_.precisions, precision_names());
    refuse_impls_without_precisions();
    peers_ = peers_for(backend);

    Suite suite;
    suite.title = "matmul backward";
    suite.params = {{"B", s.B}, {"T", s.T}, {"C", C}, {"OC", OC}};
    char derived[96];
    std::snprintf(derived, sizeof derived, "M=%lld, %.4g GFLOP per call", (long long)M,
                  s.flops() * 1e-9);
    suite.derived = derived;
    suite.flops = s.flops();
    suite.units = M;
    suite.unit_name = "row";
    suite.stage_columns = {"bias"};
    suite.error_columns = {"dinp", "dweight", "dbias"};
    suite.flags = {{"gelu", opt_.gelu}, {"overwrite_dinp", opt_.overwrite_dinp}};
    suite.default_precision = "fp32";  // records from before precisions were float32
    for (reference::Precision p : precisions_) {
      const std::string name = reference::precision_name(p);
      suite.precisions.push_back(name);
      const std::string peer = comparison_peer(backend, name, opt_.gelu, opt_.overwrite_dinp);
      if (hopt.peers && !peer.empty()) suite.comparisons.emplace_back(name, "peer:" + peer);
    }
    suite.notes.push_back(
        std::string("dinp ") + (opt_.overwrite_dinp ? "overwritten (=)" : "accumulated (+=)") +
        ", dweight and dbias accumulated (+=)" +
        (opt_.gelu ? "; with the GELU backward: dinp is the gradient of pre_gelu" : "") +
        "; errors: relative L2 of each output against the float64 reference");
    if (M == 0 || C == 0 || OC == 0)
      suite.notes.push_back(
          "zero-sized problem: every llmk call is a valid no-op" +
          std::string(M > 0 && OC > 0 ? " except dbias += Σ_rows dout (C = 0: no products)" : "") +
          "; times are the calls' fixed costs");
    return suite;
  }

  template <class ExecSpace>
  bool run_precision(const Env<ExecSpace>& env, const std::string& name, Suite& suite,
                     std::vector<Record>& records) {
    reference::Precision p;
    if (!reference::parse_precision(name, p))
      throw std::logic_error("llmk-perf: the reference knows no precision '" + name + "'");
    auto rules =
        declared_rules<Peer>(implementations(), opt_.impls != "all", [p](const std::string&) {
          return llmk::auto_impl<llmk::MatmulBackward, ExecSpace>(storage_name(p), math_of(p));
        });
    rules.copy_row = false;  // the products' ceiling is the device's peak, not a copy
    const reference::Shape& s = opt_.shape;
    rules.peer_skip = [&](const Peer& peer) {
      std::string why = peer.why_not(opt_.gelu, opt_.overwrite_dinp);
      if (why.empty() && peer.int_sizes && (s.M() > INT_MAX || s.C > INT_MAX || s.OC > INT_MAX))
        why = "its library takes M, C and OC as int";
      return why;
    };
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
      return matmul_backward::run_precision<ExecSpace, typename T::Act, typename T::Grad>(
          env, opt_, suite, p, planned, records);
    });
  }

 private:
  // An implementation named in --impl that runs none of the precisions asked
  // for (`--precision tf32 --impl naive`) would time nothing: refused, as the
  // library refuses the call (std::invalid_argument: exit 2). One that runs
  // some of them keeps a "skipped" row for the others, with the reason.
  void refuse_impls_without_precisions() const {
    if (opt_.impls == "all") return;
    for (const std::string& name : impls_) {
      if (name == "auto") continue;
      const MatmulBackwardImplInfo& info = info_of(name);
      bool runs_one = false;
      for (reference::Precision p : precisions_) runs_one = runs_one || declares(info, p);
      if (runs_one) continue;
      std::vector<std::string> asked, runs;
      for (reference::Precision p : precisions_) asked.push_back(reference::precision_name(p));
      for (reference::Precision p : reference::all_precisions())
        if (declares(info, p)) runs.push_back(reference::precision_name(p));
      throw std::invalid_argument("--impl " + name + " runs none of --precision " + join(asked) +
                                  " (it runs " + join(runs) + ")");
    }
  }

  const Options& opt_;
  std::vector<std::string> impls_;
  std::vector<reference::Precision> precisions_;
  std::vector<Peer> peers_;
};

const Implementations& implementations() {
  static const Implementations impls(
      llmk::impls<llmk::MatmulBackward>(), [](auto space, const std::string& name) {
        return llmk::available<llmk::MatmulBackward, typename decltype(space)::type>(name);
      });
  return impls;
}

void add_options(CLI::App& app, Options& opt) {
  reference::Shape& s = opt.shape;
  s.name = "perf";
  s.bias = true;
  add_size(app, "--B", s.B, "batch size");
  add_size(app, "--T", s.T, "sequence length");
  add_size(app, "--C", s.C, "input channels");
  add_size(app, "--OC", s.OC, "output channels");
  app.add_option("--impl", opt.impls, implementations().option_help())
      ->capture_default_str()
      ->check(implementations().validator());
  app.add_option("--precision", opt.precisions,
                 "comma list of " + join(precision_names()) +
                     ", or 'all': each implementation and peer gets a row for each of them it "
                     "runs (tf32: float32 storage with TF32 products, Math::tf32)")
      ->capture_default_str()
      ->check(list_validator(precision_names(), "precision", "PRECISIONS"));
  app.add_flag("--gelu", opt.gelu,
               "fuse the GELU backward: pass pre_gelu, dinp becomes the gradient of GELU's input "
               "(GPT-2's tanh approximation)");
  add_overwrite(app, "--overwrite-dinp", opt.overwrite_dinp, "dinp =", "as llm.c's training");
}

}  // namespace

Subcommand subcommand() {
  return subcommand_of<Benchmark, Options>(
      "matmul_backward",
      "the backward pass of a linear layer (dinp, dweight, dbias of out = inp·Wᵀ + bias)",
      add_options);
}

}  // namespace llmk::perf::matmul_backward
