#include "benchmark.hpp"

#include "../harness/copy_peer.hpp"
#include "../harness/driver.hpp"
#include "../harness/planned_rows.hpp"
#include "../harness/reference_io.hpp"
#include "peers.hpp"

#include <llmk/context.hpp>
#include <llmk/gelu_backward.hpp>
#include <ops/gelu_backward/reference/problem.hpp>
#include <ops/gelu_backward/reference/reference.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>

namespace llmk::perf::gelu_backward {
namespace {

namespace ref = reference::gelu;

ref::Shape shape_of(const Options& opt) {
  const index_t max = std::numeric_limits<index_t>::max();
  if ((opt.B > 0 && opt.T > max / opt.B) || (opt.B * opt.T > 0 && opt.C > max / (opt.B * opt.T)))
    throw std::invalid_argument("sizes too large: B·T·C overflows 64 bits");
  return {"perf", opt.B, opt.T, opt.C};
}

// dinp, dout, inp: N elements, M = B·T rows of C.
template <class ExecSpace, class T>
struct Buffers {
  Vector<ExecSpace, T> dinp;
  Kokkos::View<const T*, Kokkos::LayoutRight, typename ExecSpace::device_type> dout, inp;
  index_t C = 0;

  // The first `rows` rows (the probes' smaller problems on the same memory).
  Buffers first_rows(index_t rows) const {
    const std::pair<index_t, index_t> r(0, rows * C);
    Buffers b = *this;
    b.dinp = Kokkos::subview(dinp, r);
    b.dout = Kokkos::subview(dout, r);
    b.inp = Kokkos::subview(inp, r);
    return b;
  }
  void call(Context<ExecSpace>& ctx, const GeluBackwardOptions& options) const {
    llmk::gelu_backward(ctx, BufferRef(dinp.data()), ConstBufferRef(dout.data()),
                        ConstBufferRef(inp.data()), index_t(dinp.extent(0)), options);
  }
  PeerArgs peer_args(const std::string& precision, bool overwrite) const {
    return {dinp.data(), dout.data(), inp.data(), index_t(dinp.extent(0)), precision, overwrite};
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
  const index_t N = s.N();
  const std::string pname = reference::precision_name(p);
  const double bytes = s.bytes(p, opt.overwrite_dinp);
  Suite group = suite;
  const bool computes = any_computes(planned);
  std::optional<ref::HostProblem> in;
  std::vector<double> expected;
  Buffers<ExecSpace, T> full;
  full.C = s.C;
  std::vector<T> init_dinp;
  if (computes) {
    auto t0 = std::chrono::steady_clock::now();
    progress(pname + ": inputs ... ", false);
    in = ref::make_problem(s, 2024, p);
    progress(seconds_text(seconds_since(t0)));
    if (env.opt.check) expected = ref::reference_backward(*in, opt.overwrite_dinp);
    const Vector<ExecSpace, T> dout("llmk-perf::dout", N), inp("llmk-perf::inp", N);
    upload(exec, dout, converted<T>(in->dout));
    upload(exec, inp, converted<T>(in->inp));
    full.dinp = Vector<ExecSpace, T>("llmk-perf::dinp", N);
    full.dout = dout, full.inp = inp;
    // An overwritten dinp starts as NaN: a row that reads it fails its check.
    init_dinp = opt.overwrite_dinp
                    ? std::vector<T>(std::size_t(N), T(std::numeric_limits<float>::quiet_NaN()))
                    : converted<T>(in->dinp);
    in.reset();
    exec.fence();
  }
  auto reset = [&, exec] {
    upload(exec, full.dinp, init_dinp);
    exec.fence();
  };
  const auto h_dinp = Kokkos::create_mirror_view(full.dinp);
  auto verify = [&, exec] {
    Kokkos::deep_copy(exec, h_dinp, full.dinp);
    exec.fence();
    return check_result({compare_output("dinp", h_dinp.data(), expected, s.C, ref::tolerance(p))});
  };
  const auto copy = [&, exec] { return copy_row(exec, bytes, s.M(), pname); };
  add_planned_rows(group.rows, planned, pname, copy, [&](Row& row, const Planned& plan) {
    row.bytes = bytes;
    if (!expected.empty() || N == 0) {
      row.reset = reset;
      if (!expected.empty()) row.verify = verify;
    }
    if (!plan.peer) {
      GeluBackwardOptions options;
      options.impl = plan.impl;
      if (opt.overwrite_dinp) options.dinp_update = Update::overwrite;
      row.run = [&ctx, b = full, options] { b.call(ctx, options); };
      row.run_part = [&ctx, b = full, options](std::int64_t rows) {
        b.first_rows(rows).call(ctx, options);
      };
    } else {
      row.run = [run = plan.peer->run, args = full.peer_args(pname, opt.overwrite_dinp)] {
        run(args);
      };
      row.run_part = [run = plan.peer->run, b = full, pname, overwrite = opt.overwrite_dinp](
                         std::int64_t rows) { run(b.first_rows(rows).peer_args(pname, overwrite)); };
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
    precisions_ = select_precisions(opt_.precisions, gelu_backward_precisions());
    peers_ = peers_for(backend);
    Suite suite;
    suite.title = "gelu backward";
    suite.params = {{"B", s.B}, {"T", s.T}, {"C", s.C}};
    suite.derived = "N=" + std::to_string(s.N());
    suite.units = s.M();
    suite.unit_name = "row";
    suite.error_columns = {"dinp"};
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
      char mb[48];
      std::snprintf(mb, sizeof mb, "%s %.4g MB", name.c_str(), s.bytes(p, opt_.overwrite_dinp) * 1e-6);
      sizes += (sizes.empty() ? "" : ", ") + std::string(mb);
      if (!hopt.peers) continue;
      suite.ceilings.emplace_back(name, "peer:copy");
      const std::string peer = comparison_peer(backend, name);
      if (!peer.empty()) {
        suite.comparisons.emplace_back(name, "peer:" + peer);
        suite.vs_column = true;
      }
    }
    suite.notes.push_back(std::string("dinp ") +
                          (opt_.overwrite_dinp ? "overwritten (=)" : "accumulated (+=)") +
                          "; error: relative L2 against the float64 reference");
    suite.notes.push_back("GB/s: dout, inp read, dinp " +
                          std::string(opt_.overwrite_dinp ? "written" : "read and written") +
                          ", per second: " + sizes);
    return suite;
  }

  template <class ExecSpace>
  bool run_precision(const Env<ExecSpace>& env, const std::string& name, Suite& suite,
                     std::vector<Record>& records) {
    reference::Precision p;
    if (!reference::parse_precision(name, p))
      throw std::logic_error("llmk-perf: the reference knows no precision '" + name + "'");
    const auto rules = declared_rules<Peer>(implementations(), opt_.impls != "all",
                                            gelu_backward_auto_impl<ExecSpace>);
    const std::vector<Planned> planned =
        plan_rows(name, ExecSpace::name(), impls_, peers_, env.opt.peers, rules);
    (void)suite;
    return with_types(p, [&](auto types) {
      using T = typename decltype(types)::Act;
      return gelu_backward::run_precision<ExecSpace, T>(env, opt_, suite, p, planned, records);
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
  static const Implementations impls(gelu_backward_impls(), [](auto space, const std::string& name) {
    return gelu_backward_available<typename decltype(space)::type>(name);
  });
  return impls;
}

void add_options(CLI::App& app, Options& opt) {
  const char* zero = " (0: a valid no-op)";
  app.add_option("--B", opt.B, std::string("batch size") + zero)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--T", opt.T, std::string("sequence length") + zero)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--C", opt.C, std::string("channels of GELU's input (GPT-2: 4·C)") + zero)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--impl", opt.impls, implementations().option_help())
      ->capture_default_str()
      ->check(implementations().validator());
  app.add_option("--precision", opt.precisions,
                 "comma list of " + join(gelu_backward_precisions()) + ", or 'all'")
      ->capture_default_str()
      ->check(list_validator(gelu_backward_precisions(), "precision", "PRECISIONS"));
  app.add_flag("--overwrite-dinp", opt.overwrite_dinp,
               "dinp = instead of += (Update::overwrite, as llm.c's kernel); its initial values "
               "are NaN, never read");
}

int run(const perf::Options& harness, const Options& opt) {
  Benchmark benchmark(opt);
  return perf::run(harness, benchmark);
}

}  // namespace llmk::perf::gelu_backward
