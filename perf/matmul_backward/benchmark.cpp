#include "benchmark.hpp"

#include "../harness/kokkos_compat.hpp"
#include "../harness/machine.hpp"
#include "../harness/suite.hpp"
#include "../harness/timer.hpp"
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
#include <limits>
#include <cstdio>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace llmk::perf::matmul_backward {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(s);
  for (std::string part; std::getline(ss, part, sep);)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool is_impl_name(const std::string& name) {
  if (name == "auto") return true;
  for (const MatmulBackwardImplInfo& info : matmul_backward_impls())
    if (info.name == name) return true;
  return false;
}

// The implementations available on ExecSpace, in the registry's order.
template <class ExecSpace>
std::vector<std::string> available_impls() {
  std::vector<std::string> names;
  for (const MatmulBackwardImplInfo& info : matmul_backward_impls())
    if (matmul_backward_available<ExecSpace>(info.name)) names.push_back(info.name);
  return names;
}

// "OpenMP, Serial: kokkoskernels, tiled, team, naive; Cuda: cublas, ..."
std::string available_by_backend() {
  std::vector<std::pair<std::string, std::string>> groups;  // names → backends
  auto add = [&](const std::string& backend, const std::vector<std::string>& names) {
    const std::string list = join(names);
    for (auto& g : groups)
      if (g.first == list) {
        g.second += ", " + backend;
        return;
      }
    groups.emplace_back(list, backend);
  };
#ifdef KOKKOS_ENABLE_SERIAL
  add("serial", available_impls<Kokkos::Serial>());
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  add("openmp", available_impls<Kokkos::OpenMP>());
#endif
#ifdef KOKKOS_ENABLE_CUDA
  add("cuda", available_impls<Kokkos::Cuda>());
#endif
  std::string out;
  for (const auto& [names, backends] : groups)
    out += (out.empty() ? "" : "; ") + std::string("on ") + backends + ": " + names;
  return out;
}

template <class ExecSpace>
std::vector<std::string> select_impls(const std::string& list) {
  if (list == "all") return available_impls<ExecSpace>();
  std::vector<std::string> names;
  for (const std::string& name : split(list, ',')) {
    if (!matmul_backward_available<ExecSpace>(name))  // throws std::invalid_argument on an unknown name
      throw std::invalid_argument("implementation '" + name + "' is not available on backend " +
                                  ExecSpace::name() + " (available: " +
                                  join(available_impls<ExecSpace>()) + ")");
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

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

const MatmulBackwardImplInfo& info_of(const std::string& name) {
  for (const MatmulBackwardImplInfo& info : matmul_backward_impls())
    if (info.name == name) return info;
  throw std::logic_error("llmk-perf: no implementation '" + name + "'");
}

// The gradients and the inputs of a run (dinp, dout, inp: M rows).
template <class ExecSpace>
struct Buffers {
  Matrix<ExecSpace> dinp, dweight;
  Vector<ExecSpace> dbias;
  ConstMatrix<ExecSpace> dout, inp, weight;

  // The same buffers cut to their first m rows of activations (a smaller
  // problem on the same memory): what the probes run.
  Buffers first_rows(index_t m) const {
    const std::pair<index_t, index_t> rows(0, m);
    return {Kokkos::subview(dinp, rows, Kokkos::ALL), dweight, dbias,
            Kokkos::subview(dout, rows, Kokkos::ALL), Kokkos::subview(inp, rows, Kokkos::ALL),
            weight};
  }

  PeerArgs peer_args(int threads) const {
    return {dinp.data(), dweight.data(), dbias.data(), dout.data(), inp.data(), weight.data(),
            index_t(dout.extent(0)), index_t(weight.extent(1)), index_t(weight.extent(0)), threads};
  }
};

template <class ExecSpace>
int run_on(const ExecSpace& exec, const perf::Options& hopt, const Options& opt) {
  using HostConst2 = Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace,
                                  Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using HostConst1 = Kokkos::View<const float*, Kokkos::LayoutRight, Kokkos::HostSpace,
                                  Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const reference::Shape& s = opt.shape;
  check_sizes(s);
  const index_t M = s.M(), C = s.C, OC = s.OC;
  const std::string backend = ExecSpace::name();
  const std::vector<std::string> impls = select_impls<ExecSpace>(opt.impls);

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
  suite.comparison = "peer:" + comparison_peer(backend);
  if (M == 0 || C == 0 || OC == 0)
    suite.notes.push_back(
        "zero-sized problem: every llmk call is a valid no-op" +
        std::string(M > 0 && OC > 0 ? " except dbias += Σ_rows dout (C = 0: no products)" : "") +
        "; times are the calls' fixed costs");
  std::vector<Record> imports = load_imports(hopt, suite.params, suite.stage_columns);

  // Host work of a run uses the backend's threads: one on Serial.
  const int threads = on_host<ExecSpace> ? kokkos_compat::concurrency(exec) : hopt.threads;
  const DeviceTimer<ExecSpace> timer(exec);
  const Machine machine = describe_machine(exec, timer, threads);

  // ---- inputs and the float64 reference
  auto t0 = std::chrono::steady_clock::now();
  progress("inputs: B=" + std::to_string(s.B) + " T=" + std::to_string(s.T) +
               " C=" + std::to_string(C) + " OC=" + std::to_string(OC) + " ... ",
           false);
  const reference::HostProblem in = reference::make_problem(s);
  progress(seconds_text(seconds_since(t0)));
  std::optional<reference::Gradients64> ref;
  if (hopt.check) {
    openblas_set_num_threads(hopt.threads);
    t0 = std::chrono::steady_clock::now();
    progress(std::string("float64 reference (") +
                 reference::method_name(reference::Method::Auto, s) + ") ... ",
             false);
    ref = reference::reference_backward(in, reference::Method::Auto, hopt.threads);
    progress(seconds_text(seconds_since(t0)));
  }
  openblas_set_num_threads(threads);

  // ---- the buffers every implementation and peer works on
  const Matrix<ExecSpace> dinp("llmk-perf::dinp", M, C), dweight("llmk-perf::dweight", OC, C);
  const Vector<ExecSpace> dbias("llmk-perf::dbias", OC);
  const Matrix<ExecSpace> dout("llmk-perf::dout", M, OC), inp("llmk-perf::inp", M, C),
      weight("llmk-perf::weight", OC, C);
  Kokkos::deep_copy(exec, dout, HostConst2(in.dout.data(), M, OC));
  Kokkos::deep_copy(exec, inp, HostConst2(in.inp.data(), M, C));
  Kokkos::deep_copy(exec, weight, HostConst2(in.weight.data(), OC, C));
  const Buffers<ExecSpace> full{dinp, dweight, dbias, dout, inp, weight};
  auto reset = [&in, exec, dinp, dweight, dbias, M, C, OC] {
    Kokkos::deep_copy(exec, dinp, HostConst2(in.dinp.data(), M, C));
    Kokkos::deep_copy(exec, dweight, HostConst2(in.dweight.data(), OC, C));
    Kokkos::deep_copy(exec, dbias, HostConst1(in.dbias.data(), OC));
    exec.fence();
  };
  const auto h_dinp = Kokkos::create_mirror_view(dinp);
  const auto h_dweight = Kokkos::create_mirror_view(dweight);
  const auto h_dbias = Kokkos::create_mirror_view(dbias);
  // Reads the outputs back and compares them with the reference.
  auto verify = [&, exec](bool with_bias) {
    return [&, exec, with_bias] {
      Kokkos::deep_copy(exec, h_dinp, dinp);
      Kokkos::deep_copy(exec, h_dweight, dweight);
      Kokkos::deep_copy(exec, h_dbias, dbias);
      exec.fence();
      std::vector<reference::Comparison> cmp{
          reference::compare("dinp", h_dinp.data(), ref->dinp.data(), ref->dinp.size(), C),
          reference::compare("dweight", h_dweight.data(), ref->dweight.data(),
                             ref->dweight.size(), C)};
      if (with_bias)
        cmp.push_back(reference::compare("dbias", h_dbias.data(), ref->dbias.data(), ref->dbias.size()));
      CheckResult r{true, 0, ""};
      char buf[64];
      r.detail = "rel err";
      for (const reference::Comparison& c : cmp) {
        r.valid &= c.ok;
        r.max_rel_err = std::max(r.max_rel_err, c.rel_l2);
        std::snprintf(buf, sizeof buf, " %s %.1e,", c.what.c_str(), c.rel_l2);
        r.detail += buf;
      }
      if (!with_bias) r.detail += " dbias not computed,";
      r.detail.pop_back();
      for (const reference::Comparison& c : cmp)
        if (!c.ok) r.detail += "; " + c.message;
      return r;
    };
  };
  const double bias_bytes = s.bias_bytes();

  // ---- one row per implementation, from the registry
  Context<ExecSpace> ctx(exec);
  for (const std::string& name : impls) {
    const std::string resolved = name == "auto" ? matmul_backward_auto_impl<ExecSpace>() : name;
    const MatmulBackwardImplInfo& info = info_of(resolved);
    MatmulBackwardOptions options;
    options.impl = name;
    Row row;
    row.name = name;
    row.kind = "impl";
    row.run = [&ctx, full, options] {
      llmk::matmul_backward(ctx, full.dinp, full.dweight, full.dbias, full.dout, full.inp, full.weight,
                      options);
    };
    row.run_part = [&ctx, full, options](std::int64_t rows) {
      const Buffers<ExecSpace> b = full.first_rows(rows);
      llmk::matmul_backward(ctx, b.dinp, b.dweight, b.dbias, b.dout, b.inp, b.weight, options);
    };
    if (ref) {
      row.reset = reset;
      row.verify = verify(true);
    }
    if (info.dbias == "fused") {
      row.stages.push_back({"bias", "fused", bias_bytes, {}});
    } else {
      const Vector<ExecSpace> b = dbias;
      const ConstMatrix<ExecSpace> d = dout;
      row.stages.push_back({"bias", info.dbias, bias_bytes,
                            [&ctx, b, d, resolved] { matmul_backward_bias_pass(ctx, b, d, resolved); }});
    }
    if (name == "auto") row.note = "auto is " + resolved + " here";
    if (!info.deterministic)
      row.note += std::string(row.note.empty() ? "" : "; ") + "not bitwise deterministic";
    suite.rows.push_back(std::move(row));
  }

  // ---- the peers
  if (hopt.peers) {
    const PeerArgs args = full.peer_args(threads);
    for (const Peer& p : peers_for(backend)) {
      Row row;
      row.name = "peer:" + p.name;
      row.kind = "peer";
      row.note = p.description;
      if (p.int_sizes && (M > INT_MAX || C > INT_MAX || OC > INT_MAX)) {
        row.skip = "its library takes M, C and OC as int";
        suite.rows.push_back(std::move(row));
        continue;
      }
      row.run = [run = p.run, args] { run(args); };
      row.run_part = [run = p.run, args](std::int64_t rows) {
        PeerArgs part = args;
        part.M = rows;
        run(part);
      };
      if (ref) {
        row.reset = reset;
        row.verify = verify(p.computes_bias);
      }
      if (p.bias_only)
        row.stages.push_back({"bias", p.bias_kernel, bias_bytes, [bias = p.bias_only, args] { bias(args); }});
      else if (p.bias_kernel == "fused")
        row.stages.push_back({"bias", "fused", bias_bytes, {}});
      suite.rows.push_back(std::move(row));
    }
  }

  return run_suite(hopt, exec, timer, machine, suite, std::move(imports));
}

}  // namespace

void add_options(CLI::App& app, Options& opt) {
  reference::Shape& s = opt.shape;
  s.name = "perf";
  s.bias = true;
  const char* zero = " (0: a valid no-op)";
  app.add_option("--B", s.B, std::string("batch size") + zero)->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--T", s.T, std::string("sequence length") + zero)->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--C", s.C, std::string("input channels") + zero)->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--OC", s.OC, std::string("output channels") + zero)->capture_default_str()->check(CLI::NonNegativeNumber);
  std::vector<std::string> elsewhere;  // known, but in no backend of this build
  for (const MatmulBackwardImplInfo& info : matmul_backward_impls()) {
    bool here = false;
#ifdef KOKKOS_ENABLE_SERIAL
    here |= matmul_backward_available<Kokkos::Serial>(info.name);
#endif
#ifdef KOKKOS_ENABLE_OPENMP
    here |= matmul_backward_available<Kokkos::OpenMP>(info.name);
#endif
#ifdef KOKKOS_ENABLE_CUDA
    here |= matmul_backward_available<Kokkos::Cuda>(info.name);
#endif
    if (!here) elsewhere.push_back(info.name + (info.compiled ? "" : " (not compiled)"));
  }
  app.add_option("--impl", opt.impls,
                 "comma list of llmk implementations, or 'all' (every one available on "
                 "--backend). This build: " + available_by_backend() +
                     "; and 'auto', the first of those" +
                     (elsewhere.empty() ? std::string() : "; not here: " + join(elsewhere)))
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& list) -> std::string {
            if (list == "all") return {};
            const std::vector<std::string> parts = split(list, ',');
            if (parts.empty()) return "no implementation named";
            for (const std::string& name : parts)
              if (!is_impl_name(name)) return "'" + name + "' is not an llmk implementation";
            return {};
          },
          "NAMES|all", "IMPLS"));
}

int run(const perf::Options& harness, const Options& opt) {
  return with_backend(harness.backend, [&](const auto& exec) { return run_on(exec, harness, opt); });
}

}  // namespace llmk::perf::matmul_backward
