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
#include <cstdint>
#include <cstdio>
#include <limits>
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

// The precisions --precision may name: the library's configurations, with
// "tf32" (fp32 storage, TF32 products) after "fp32".
std::vector<std::string> precision_names() {
  std::vector<std::string> names;
  for (const std::string& config : matmul_backward_precisions()) {
    names.push_back(config);
    if (config == "fp32") names.push_back("tf32");
  }
  return names;
}

// "all", or a comma list of precision_names(), in that list's order.
std::vector<reference::Precision> select_precisions(const std::string& list) {
  const std::vector<std::string> wanted = split(list, ',');
  std::vector<reference::Precision> out;
  for (const std::string& name : precision_names()) {
    if (list != "all" && std::find(wanted.begin(), wanted.end(), name) == wanted.end()) continue;
    reference::Precision p;
    if (!reference::parse_precision(name, p))
      throw std::logic_error("llmk-perf: the reference knows no precision '" + name + "'");
    out.push_back(p);
  }
  return out;
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

// The element types of a precision configuration: Act for the activations
// (dout, inp, weight, pre_gelu, dinp), Grad for dweight and dbias.
template <class A, class G>
struct Types {
  using Act = A;
  using Grad = G;
};

// f(Types<...>{}) for a precision's element types.
template <class F>
auto with_types(reference::Precision p, F&& f) {
  using reference::Precision;
  switch (p) {
    case Precision::bf16: return f(Types<bf16, bf16>{});
    case Precision::bf16_fp32grad: return f(Types<bf16, float>{});
    default: return f(Types<float, float>{});  // fp32, tf32
  }
}

// The library's name of a precision's storage ("tf32" is "fp32" with
// Math::tf32), and its math mode.
std::string storage_name(reference::Precision p) {
  return p == reference::Precision::tf32 ? "fp32" : reference::precision_name(p);
}
Math math_of(reference::Precision p) {
  return p == reference::Precision::tf32 ? Math::tf32 : Math::fp32;
}

// Whether an implementation declares a precision (tf32: fp32 storage and info.tf32).
bool declares(const MatmulBackwardImplInfo& info, reference::Precision p) {
  const std::string storage = storage_name(p);
  const bool stored = std::find(info.precisions.begin(), info.precisions.end(), storage) !=
                      info.precisions.end();
  return stored && (p != reference::Precision::tf32 || info.tf32);
}

template <class T>
std::vector<T> converted(const std::vector<float>& values) {
  std::vector<T> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = T(values[i]);  // exact: representable
  return out;
}

template <class T>
using HostConst2 = Kokkos::View<const T**, Kokkos::LayoutRight, Kokkos::HostSpace,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using HostConst1 = Kokkos::View<const T*, Kokkos::LayoutRight, Kokkos::HostSpace,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class ExecSpace, class T>
void upload(const ExecSpace& exec, const Matrix<ExecSpace, T>& dst, const std::vector<T>& src) {
  Kokkos::deep_copy(exec, dst, HostConst2<T>(src.data(), dst.extent(0), dst.extent(1)));
}
template <class ExecSpace, class T>
void upload(const ExecSpace& exec, const Vector<ExecSpace, T>& dst, const std::vector<T>& src) {
  Kokkos::deep_copy(exec, dst, HostConst1<T>(src.data(), dst.extent(0)));
}

// An output read back (float, or bf16 widened) against the float64 reference.
reference::Comparison compare_output(const char* what, const float* out,
                                     const std::vector<double>& ref, std::int64_t cols, double tol) {
  return reference::compare(what, out, ref.data(), ref.size(), cols, tol);
}
reference::Comparison compare_output(const char* what, const bf16* out,
                                     const std::vector<double>& ref, std::int64_t cols, double tol) {
  return reference::compare_bf16(what, reinterpret_cast<const std::uint16_t*>(out), ref.data(),
                                 ref.size(), cols, tol);
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

// What a precision's rows will be, decided before anything is allocated.
struct Planned {
  std::string name, kind, skip;
  std::string impl;        // implementation rows: the name passed (maybe "auto")
  std::string resolved;    // ... and what it is here
  const Peer* peer = nullptr;
};

template <class ExecSpace>
std::vector<Planned> plan_rows(reference::Precision p, const std::vector<std::string>& impls,
                               bool listed, const std::vector<Peer>& peers, bool run_peers,
                               const Options& opt, const reference::Shape& s) {
  const std::string pname = reference::precision_name(p);
  std::vector<Planned> rows;
  for (const std::string& name : impls) {
    Planned r;
    r.name = r.impl = name;
    r.kind = "impl";
    try {
      r.resolved = name == "auto" ? matmul_backward_auto_impl<ExecSpace>(storage_name(p), math_of(p))
                                  : name;
    } catch (const std::invalid_argument&) {
      r.skip = "no implementation runs " + pname + " on " + ExecSpace::name();
    }
    if (r.skip.empty() && !declares(info_of(r.resolved), p))
      r.skip = "does not run " + pname;
    if (!r.skip.empty() && !listed) continue;  // --impl all: only what runs
    rows.push_back(std::move(r));
  }
  if (run_peers) {
    for (const Peer& peer : peers) {
      if (std::find(peer.precisions.begin(), peer.precisions.end(), pname) == peer.precisions.end())
        continue;
      Planned r;
      r.name = "peer:" + peer.name;
      r.kind = "peer";
      r.peer = &peer;
      r.skip = peer.why_not(opt.gelu, opt.overwrite_dinp);
      if (r.skip.empty() && peer.int_sizes &&
          (s.M() > INT_MAX || s.C > INT_MAX || s.OC > INT_MAX))
        r.skip = "its library takes M, C and OC as int";
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

// The rows of one precision: makes its problem and reference, its buffers,
// runs the rows (run_rows) and frees it all. Returns whether a row failed.
template <class ExecSpace, class Act, class Grad>
bool run_precision(const ExecSpace& exec, Context<ExecSpace>& ctx, const perf::Options& hopt,
                   const Options& opt, const DeviceTimer<ExecSpace>& timer, const Suite& suite,
                   reference::Precision p, const std::vector<Planned>& planned, int threads,
                   std::vector<Record>& records) {
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
      CheckResult r{true, 0, {}, "rel err"};
      char buf[64];
      for (const reference::Comparison& c : cmp) {
        r.valid &= c.ok;
        r.max_rel_err = std::max(r.max_rel_err, c.rel_l2);
        r.errors.emplace_back(c.what, c.rel_l2);
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
  const double bias_bytes = s.bias ? double(M) * double(OC) * sizeof(Act) : 0.0;

  for (const Planned& plan : planned) {
    Row row;
    row.name = plan.name;
    row.kind = plan.kind;
    row.precision = pname;
    row.skip = plan.skip;
    if (!row.skip.empty()) {
      group.rows.push_back(std::move(row));
      continue;
    }
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
      if (plan.impl == "auto") row.note = "auto is " + plan.resolved + " here";
      if (!info.deterministic)
        row.note += std::string(row.note.empty() ? "" : "; ") + "not bitwise deterministic";
      if (opt.gelu)
        row.note += std::string(row.note.empty() ? "" : "; ") + "GELU backward " + info.gelu;
    } else {
      const Peer& peer = *plan.peer;
      const PeerArgs args = full.peer_args(threads, pname, opt.overwrite_dinp);
      row.note = peer.description;
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
    group.rows.push_back(std::move(row));
  }
  return run_rows(hopt, exec, timer, group, records);
}

template <class ExecSpace>
int run_on(const ExecSpace& exec, const perf::Options& hopt, const Options& opt) {
  const reference::Shape& s = opt.shape;
  check_sizes(s);
  const index_t M = s.M(), C = s.C, OC = s.OC;
  const std::string backend = ExecSpace::name();
  const std::vector<std::string> impls = select_impls<ExecSpace>(opt.impls);
  const std::vector<reference::Precision> precisions = select_precisions(opt.precisions);

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
  suite.flags = {{"gelu", opt.gelu}, {"overwrite_dinp", opt.overwrite_dinp}};
  suite.default_precision = "fp32";  // records from before precisions were float32
  for (reference::Precision p : precisions) {
    const std::string name = reference::precision_name(p);
    suite.precisions.push_back(name);
    const std::string peer = comparison_peer(backend, name, opt.gelu, opt.overwrite_dinp);
    if (hopt.peers && !peer.empty()) suite.comparisons.emplace_back(name, "peer:" + peer);
  }
  suite.notes.push_back(
      std::string("dinp ") + (opt.overwrite_dinp ? "overwritten (=)" : "accumulated (+=)") +
      ", dweight and dbias accumulated (+=)" +
      (opt.gelu ? "; with the GELU backward: dinp is the gradient of pre_gelu" : "") +
      "; errors: relative L2 of each output against the float64 reference");
  if (M == 0 || C == 0 || OC == 0)
    suite.notes.push_back(
        "zero-sized problem: every llmk call is a valid no-op" +
        std::string(M > 0 && OC > 0 ? " except dbias += Σ_rows dout (C = 0: no products)" : "") +
        "; times are the calls' fixed costs");
  std::vector<Record> imports = load_imports(hopt, suite);

  // Host work of a run uses the backend's threads: one on Serial.
  const int threads = on_host<ExecSpace> ? kokkos_compat::concurrency(exec) : hopt.threads;
  const DeviceTimer<ExecSpace> timer(exec);
  const Machine machine = describe_machine(exec, timer, threads);
  const std::vector<Peer> peers = peers_for(backend);

  Context<ExecSpace> ctx(exec);
  std::vector<Record> records;
  bool failed = false;
  for (reference::Precision p : precisions) {
    const std::vector<Planned> planned =
        plan_rows<ExecSpace>(p, impls, opt.impls != "all", peers, hopt.peers, opt, s);
    if (planned.empty()) {
      const std::string line = std::string(reference::precision_name(p)) +
                               ": no implementation or peer runs it on " + backend;
      progress(line);
      suite.notes.push_back(line);
      continue;
    }
    failed |= with_types(p, [&](auto types) {
      using T = decltype(types);
      return run_precision<ExecSpace, typename T::Act, typename T::Grad>(
          exec, ctx, hopt, opt, timer, suite, p, planned, threads, records);
    });
  }
  return report(hopt, machine, suite, std::move(records), std::move(imports), failed);
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
  app.add_option("--precision", opt.precisions,
                 "comma list of " + join(precision_names()) +
                     ", or 'all': each implementation and peer gets a row for each of them it "
                     "runs (tf32: float32 storage with TF32 products, Math::tf32)")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& list) -> std::string {
            if (list == "all") return {};
            const std::vector<std::string> parts = split(list, ',');
            const std::vector<std::string> known = precision_names();
            if (parts.empty()) return "no precision named";
            for (const std::string& name : parts)
              if (std::find(known.begin(), known.end(), name) == known.end())
                return "'" + name + "' is not a precision (" + join(known) + ", all)";
            return {};
          },
          "NAMES|all", "PRECISIONS"));
  app.add_flag("--gelu", opt.gelu,
               "fuse the GELU backward: pass pre_gelu, dinp becomes the gradient of GELU's input "
               "(GPT-2's tanh approximation)");
  app.add_flag("--overwrite-dinp", opt.overwrite_dinp,
               "dinp = instead of += (Update::overwrite, as llm.c's training); its initial "
               "values are NaN, never read");
}

int run(const perf::Options& harness, const Options& opt) {
  return with_backend(harness.backend, [&](const auto& exec) { return run_on(exec, harness, opt); });
}

}  // namespace llmk::perf::matmul_backward
