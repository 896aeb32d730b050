#include "benchmark.hpp"

#include "../harness/copy_peer.hpp"
#include "../harness/driver.hpp"
#include "../harness/planned_rows.hpp"
#include "../harness/reference_io.hpp"
#include "peers.hpp"

#include <llmk/context.hpp>
#include <llmk/layernorm_backward.hpp>
#include <ops/layernorm_backward/reference/compare.hpp>
#include <ops/layernorm_backward/reference/problem.hpp>
#include <ops/layernorm_backward/reference/reference.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>

namespace llmk::perf::layernorm_backward {
namespace {

namespace ref = reference::layernorm;

// Sizes whose element counts overflow 64 bits are refused (the library would
// refuse them too, but the host problem is made first).
void check_sizes(const ref::Shape& s) {
  const index_t max = std::numeric_limits<index_t>::max();
  if (s.B > 0 && s.T > max / s.B)
    throw std::invalid_argument("sizes too large: B·T overflows 64 bits");
  if (s.M() > 0 && s.C > max / s.M())
    throw std::invalid_argument("sizes too large: B·T·C overflows 64 bits");
}

ref::Shape shape_of(const Options& opt) {
  ref::Shape s;
  s.name = "perf";
  s.B = opt.B, s.T = opt.T, s.C = opt.C;
  s.bias = true;
  return s;
}

// The gradients and the inputs of a run in one precision (dinp, dout, inp,
// mean, rstd: M rows).
template <class ExecSpace, class Act, class Grad>
struct Buffers {
  Matrix<ExecSpace, Act> dinp;
  Vector<ExecSpace, Grad> dweight, dbias;
  ConstMatrix<ExecSpace, Act> dout, inp;
  Kokkos::View<const Act*, Kokkos::LayoutRight, typename ExecSpace::device_type> weight;
  Kokkos::View<const float*, Kokkos::LayoutRight, typename ExecSpace::device_type> mean, rstd;

  // The same buffers cut to their first m rows (a smaller problem on the
  // same memory): what the probes run.
  Buffers first_rows(index_t m) const {
    const std::pair<index_t, index_t> rows(0, m);
    Buffers b = *this;
    b.dinp = Kokkos::subview(dinp, rows, Kokkos::ALL);
    b.dout = Kokkos::subview(dout, rows, Kokkos::ALL);
    b.inp = Kokkos::subview(inp, rows, Kokkos::ALL);
    b.mean = Kokkos::subview(mean, rows);
    b.rstd = Kokkos::subview(rstd, rows);
    return b;
  }

  void call(Context<ExecSpace>& ctx, const LayernormBackwardOptions& options) const {
    llmk::layernorm_backward(ctx, dinp, dweight, dbias, dout, inp, weight, mean, rstd, options);
  }

  PeerArgs peer_args(const std::string& precision, bool overwrite_dinp) const {
    return {dinp.data(), dweight.data(), dbias.data(), dout.data(), inp.data(), weight.data(),
            mean.data(), rstd.data(), index_t(dinp.extent(0)), index_t(dinp.extent(1)),
            precision, overwrite_dinp};
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
  const ref::Shape s = shape_of(opt);
  const index_t M = s.M(), C = s.C;
  const std::string pname = reference::precision_name(p);
  const double bytes = s.bytes(p, opt.overwrite_dinp);

  Suite group = suite;  // the header's fields; its rows are this precision's
  // Rows that need the problem (peer:copy needs none).
  const bool computes = any_computes(planned);
  std::optional<ref::HostProblem> in;
  std::optional<ref::Gradients64> expected;
  if (computes) {
    auto t0 = std::chrono::steady_clock::now();
    progress(pname + ": inputs, mean and rstd ... ", false);
    in = ref::make_problem(s, 2024, p);
    progress(seconds_text(seconds_since(t0)));
    if (hopt.check) {
      t0 = std::chrono::steady_clock::now();
      progress(pname + ": float64 reference ... ", false);
      expected = ref::reference_backward(*in, {opt.overwrite_dinp, false, false}, hopt.threads);
      progress(seconds_text(seconds_since(t0)));
    }
  }

  // ---- the buffers every row of this precision works on; the initial
  // gradients in the element types, kept on the host for the resets. An
  // overwritten dinp starts as NaN: a row that reads it fails its check.
  Buffers<ExecSpace, Act, Grad> full;
  std::vector<Act> init_dinp;
  std::vector<Grad> init_dweight, init_dbias;
  if (computes) {
    const Matrix<ExecSpace, Act> dout("llmk-perf::dout", M, C), inp("llmk-perf::inp", M, C);
    const Vector<ExecSpace, Act> weight("llmk-perf::weight", C);
    const Vector<ExecSpace, float> mean("llmk-perf::mean", M), rstd("llmk-perf::rstd", M);
    upload(exec, dout, converted<Act>(in->dout));
    upload(exec, inp, converted<Act>(in->inp));
    upload(exec, weight, converted<Act>(in->weight));
    upload(exec, mean, in->mean);
    upload(exec, rstd, in->rstd);
    full.dinp = Matrix<ExecSpace, Act>("llmk-perf::dinp", M, C);
    full.dweight = Vector<ExecSpace, Grad>("llmk-perf::dweight", C);
    full.dbias = Vector<ExecSpace, Grad>("llmk-perf::dbias", C);
    full.dout = dout, full.inp = inp, full.weight = weight, full.mean = mean, full.rstd = rstd;
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
  auto verify = [&, exec] {
    Kokkos::deep_copy(exec, h_dinp, full.dinp);
    Kokkos::deep_copy(exec, h_dweight, full.dweight);
    Kokkos::deep_copy(exec, h_dbias, full.dbias);
    exec.fence();
    return check_result(
        {compare_output("dinp", h_dinp.data(), expected->dinp, C,
                        ref::tolerance(p, Output::dinp)),
         compare_output("dweight", h_dweight.data(), expected->dweight, 0,
                        ref::tolerance(p, Output::dweight)),
         compare_output("dbias", h_dbias.data(), expected->dbias, 0,
                        ref::tolerance(p, Output::dbias))});
  };

  const auto copy = [&, exec] { return copy_row(exec, bytes, M, pname); };
  add_planned_rows(group.rows, planned, pname, copy, [&](Row& row, const Planned& plan) {
    row.bytes = bytes;
    if (expected) {
      row.reset = reset;
      row.verify = verify;
    }
    if (!plan.peer) {  // an implementation, from the registry
      LayernormBackwardOptions options;
      options.impl = plan.impl;
      if (opt.overwrite_dinp) options.dinp_update = Update::overwrite;
      row.run = [&ctx, b = full, options] { b.call(ctx, options); };
      row.run_part = [&ctx, b = full, options](std::int64_t rows) {
        b.first_rows(rows).call(ctx, options);
      };
      if (!implementations().info(plan.resolved).deterministic)
        add_note(row, "not bitwise deterministic");
    } else {
      row.run = [run = plan.peer->run, args = full.peer_args(pname, opt.overwrite_dinp)] {
        run(args);
      };
      row.run_part = [run = plan.peer->run, b = full, pname, overwrite = opt.overwrite_dinp](
                         std::int64_t rows) { run(b.first_rows(rows).peer_args(pname, overwrite)); };
    }
  });
  return run_rows(hopt, exec, env.timer, group, records);
}

std::string megabytes(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g MB", bytes * 1e-6);
  return buf;
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
    precisions_ = select_precisions(opt_.precisions, layernorm_backward_precisions());
    peers_ = peers_for(backend);

    Suite suite;
    suite.title = "layernorm backward";
    suite.params = {{"B", s.B}, {"T", s.T}, {"C", s.C}};
    suite.derived = "M=" + std::to_string(s.M());
    suite.units = s.M();
    suite.unit_name = "row";
    suite.error_columns = {"dinp", "dweight", "dbias"};
    suite.flags = {{"overwrite_dinp", opt_.overwrite_dinp}};
    suite.default_precision = "fp32";
    suite.gflops_column = false;
    suite.gbs_column = true;
    suite.ceiling_label = "copy";
    suite.vs_column = false;
    std::string sizes;
    for (reference::Precision p : precisions_) {
      const std::string name = reference::precision_name(p);
      suite.precisions.push_back(name);
      sizes += (sizes.empty() ? "" : ", ") + name + " " + megabytes(s.bytes(p, opt_.overwrite_dinp));
      if (!hopt.peers) continue;
      suite.ceilings.emplace_back(name, "peer:copy");
      const std::string peer = comparison_peer(backend, name);
      if (!peer.empty()) {
        suite.comparisons.emplace_back(name, "peer:" + peer);
        suite.vs_column = true;
      }
    }
    suite.notes.push_back(
        std::string("dinp ") + (opt_.overwrite_dinp ? "overwritten (=)" : "accumulated (+=)") +
        ", dweight and dbias accumulated (+=); errors: relative L2 of each output against the "
        "float64 reference");
    suite.notes.push_back("GB/s: the bytes a call must move (dout, inp, weight, mean, rstd read; " +
                          std::string(opt_.overwrite_dinp ? "dinp written" : "dinp read and written") +
                          "; dweight, dbias read and written) per second: " + sizes);
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
    const auto rules = declared_rules<Peer>(implementations(), opt_.impls != "all",
                                            layernorm_backward_auto_impl<ExecSpace>);
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
      return layernorm_backward::run_precision<ExecSpace, typename T::Act, typename T::Grad>(
          env, opt_, suite, p, planned, records);
    });
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
      layernorm_backward_impls(), [](auto space, const std::string& name) {
        return layernorm_backward_available<typename decltype(space)::type>(name);
      });
  return impls;
}

void add_options(CLI::App& app, Options& opt) {
  const char* zero = " (0: a valid no-op)";
  app.add_option("--B", opt.B, std::string("batch size") + zero)
      ->capture_default_str()
      ->check(perf::count_at_least(0, ""));
  app.add_option("--T", opt.T, std::string("sequence length") + zero)
      ->capture_default_str()
      ->check(perf::count_at_least(0, ""));
  app.add_option("--C", opt.C, std::string("channels") + zero)
      ->capture_default_str()
      ->check(perf::count_at_least(0, ""));
  app.add_option("--impl", opt.impls, implementations().option_help())
      ->capture_default_str()
      ->check(implementations().validator());
  app.add_option("--precision", opt.precisions,
                 "comma list of " + join(layernorm_backward_precisions()) +
                     ", or 'all': each implementation and peer gets a row for each of them it runs")
      ->capture_default_str()
      ->check(list_validator(layernorm_backward_precisions(), "precision", "PRECISIONS"));
  app.add_flag("--overwrite-dinp", opt.overwrite_dinp,
               "dinp = instead of += (Update::overwrite); its initial values are NaN, never "
               "read. Default +=: dinp is the residual stream's gradient, which llm.c's "
               "layernorm backward adds to");
}

int run(const perf::Options& harness, const Options& opt) {
  Benchmark benchmark(opt);
  return perf::run(harness, benchmark);
}

}  // namespace llmk::perf::layernorm_backward
