// llmk-perf: validates, then times, every llmk implementation available on a
// backend, and the peers (seed CPU loops, OpenBLAS) on the same inputs.
// Per implementation or peer: a probe on 1/64 of the rows (skip it when the
// projected call exceeds --max-call), one checked call against the float64
// reference, then warm-up and timed calls within --budget seconds.
// Progress on stderr, the table on stdout, optionally a JSON file (--json) to
// which --import adds records timed elsewhere (perf/torch_baseline.py).
// Exits 1 when an implementation or peer failed its check, 2 on bad arguments.
#include "bench.hpp"
#include "inputs.hpp"
#include "peers.hpp"
#include "reference.hpp"
#include "report.hpp"
#include "timing.hpp"

#include <llmk/matmul_backward.hpp>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <cblas.h>

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

namespace llmk::perf {
namespace {

struct Options {
  Shape shape;
  std::string impls = "all";
  std::string backend;  // lower case: serial, openmp, cuda
  TimingPlan plan;
  double max_call_s = 30;  // skip what a probe projects to be slower a call; 0: no limit
  int threads = 1;
  std::string json;
  std::vector<std::string> imports;  // JSON records timed elsewhere (perf/torch_baseline.py)
  bool check = true;
  bool peers = true;
};

// ---- small helpers ------------------------------------------------------------

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(s);
  for (std::string part; std::getline(ss, part, sep);)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto value = line.find_first_not_of(" \t", line.find(':') + 1);
    if (line.find(':') != std::string::npos && value != std::string::npos) return line.substr(value);
  }
  return "unknown";
}

std::string kokkos_version() {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d.%d.%02d", KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100,
                KOKKOS_VERSION % 100);
  return buf;
}

std::vector<std::string> compiled_backends() {
  std::vector<std::string> names;
#ifdef KOKKOS_ENABLE_SERIAL
  names.push_back("serial");
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  names.push_back("openmp");
#endif
#ifdef KOKKOS_ENABLE_CUDA
  names.push_back("cuda");
#endif
  return names;
}

template <class ExecSpace>
std::optional<std::string> gpu_name(const ExecSpace&) {
  return std::nullopt;
}
template <class ExecSpace>
double device_copy_gbs(const ExecSpace& exec, const DeviceTimer& timer) {
  using Buffer = Kokkos::View<float*, Kokkos::LayoutRight, typename ExecSpace::device_type>;
  const index_t n = index_t(1) << 28;  // 1 GiB
  const Buffer src("llmk-perf::copy_src", n), dst("llmk-perf::copy_dst", n);
  const TimingPlan plan{3, 20, 1.0, timer};
  const Timing t = time_calls(plan, [&] { Kokkos::deep_copy(exec, dst, src); }, [&] { exec.fence(); });
  return 2.0 * double(n) * sizeof(float) / (t.ms_median * 1e-3) * 1e-9;
}

template <class ExecSpace>
DeviceTimer device_timer(const ExecSpace&) {
  return {};  // host backends: wall clock
}
template <class ExecSpace>
std::size_t l2_cache_bytes(const ExecSpace&) {
  return 0;
}
#ifdef KOKKOS_ENABLE_CUDA
std::optional<std::string> gpu_name(const Kokkos::Cuda& exec) {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, exec.cuda_device()) != cudaSuccess) return "unknown";
  return std::string(prop.name);
}
// CUDA events around the call on the execution space's stream (where llmk and
// the Cuda peers enqueue).
DeviceTimer device_timer(const Kokkos::Cuda& exec) {
  return [exec](const std::function<void()>& call) {
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start, exec.cuda_stream());
    call();
    cudaEventRecord(stop, exec.cuda_stream());
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return 1e-3 * double(ms);
  };
}
std::size_t l2_cache_bytes(const Kokkos::Cuda& exec) {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, exec.cuda_device()) != cudaSuccess) return 0;
  return std::size_t(prop.l2CacheSize);
}
#endif

void progress(const std::string& msg, bool end_line = true) {
  std::cerr << msg << (end_line ? "\n" : "") << std::flush;
}

std::string ms_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g ms", 1e3 * s);
  return buf;
}

template <class ExecSpace>
std::vector<Impl> select_impls(const std::string& list) {
  std::vector<Impl> impls;
  if (list == "all") {
    for (Impl impl : all_impls())
      if (impl_available<ExecSpace>(impl)) impls.push_back(impl);
    return impls;
  }
  for (const std::string& name : split(list, ',')) {
    const Impl impl = parse_impl(name);  // throws std::invalid_argument on a bad name
    if (!impl_available<ExecSpace>(impl))
      throw std::invalid_argument("implementation '" + name + "' is not available on backend " +
                                  backend_name<ExecSpace>());
    impls.push_back(impl);
  }
  return impls;
}

// ---- the run on one backend ----------------------------------------------------

// The probe: 1/64 of the rows, whose time × 64 projects a call's. Costs grow
// at least linearly with the rows, so a projection errs on the short side.
constexpr index_t kProbeFraction = 64;

template <class ExecSpace>
int run_backend(const Options& opt) {
  using HostConst = Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using HostConst1 = Kokkos::View<const float*, Kokkos::LayoutRight, Kokkos::HostSpace,
                                  Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  constexpr bool on_host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;

  ExecSpace exec;  // the default instance
  const std::string backend = backend_name<ExecSpace>();
  const std::vector<Impl> impls = select_impls<ExecSpace>(opt.impls);
  const std::vector<Peer> peers = opt.peers ? peers_for(backend) : std::vector<Peer>{};
  // Host work of a run uses the backend's threads: one on Serial.
  const int threads = on_host ? ExecSpace::concurrency() : opt.threads;
  Machine machine{cpu_model(), threads, kokkos_version(), backend, gpu_name(exec), {}};
  TimingPlan plan = opt.plan;
  plan.device_timer = device_timer(exec);
  if (!on_host) machine.device_copy_gbs = device_copy_gbs(exec, plan.device_timer);
  const Shape& s = opt.shape;
  const index_t M = s.M(), C = s.C, OC = s.OC;
  const index_t probe_rows = std::max<index_t>(1, M / kProbeFraction);

  // ---- inputs and the float64 reference
  auto t0 = std::chrono::steady_clock::now();
  progress("inputs: B=" + std::to_string(s.B) + " T=" + std::to_string(s.T) +
               " C=" + std::to_string(C) + " OC=" + std::to_string(OC) + " ... ",
           false);
  const HostInputs in = make_inputs(s);
  progress(ms_text(seconds_since(t0)));
  std::optional<Reference> ref;
  if (opt.check) {
    openblas_set_num_threads(opt.threads);
    t0 = std::chrono::steady_clock::now();
    progress("float64 reference (OpenBLAS dgemm) ... ", false);
    ref = compute_reference(in);
    progress(ms_text(seconds_since(t0)));
  }
  openblas_set_num_threads(threads);

  // ---- the buffers every implementation and peer works on
  const Matrix<ExecSpace> dinp("llmk-perf::dinp", M, C), dweight("llmk-perf::dweight", OC, C);
  const Vector<ExecSpace> dbias("llmk-perf::dbias", OC);
  const Matrix<ExecSpace> dout("llmk-perf::dout", M, OC), inp("llmk-perf::inp", M, C),
      weight("llmk-perf::weight", OC, C);
  Kokkos::deep_copy(exec, dout, HostConst(in.dout.data(), M, OC));
  Kokkos::deep_copy(exec, inp, HostConst(in.inp.data(), M, C));
  Kokkos::deep_copy(exec, weight, HostConst(in.weight.data(), OC, C));
  const Buffers<ExecSpace> full{dinp, dweight, dbias, dout, inp, weight};
  const Buffers<ExecSpace> probe = full.first_rows(probe_rows);
  auto reset_gradients = [&] {
    Kokkos::deep_copy(exec, dinp, HostConst(in.dinp0.data(), M, C));
    Kokkos::deep_copy(exec, dweight, HostConst(in.dweight0.data(), OC, C));
    Kokkos::deep_copy(exec, dbias, HostConst1(in.dbias0.data(), OC));
    exec.fence();
  };
  auto h_dinp = Kokkos::create_mirror_view(dinp);
  auto h_dweight = Kokkos::create_mirror_view(dweight);
  auto h_dbias = Kokkos::create_mirror_view(dbias);
  auto read_back = [&] {
    Kokkos::deep_copy(exec, h_dinp, dinp);
    Kokkos::deep_copy(exec, h_dweight, dweight);
    Kokkos::deep_copy(exec, h_dbias, dbias);
    exec.fence();
  };

  // On a GPU, a buffer of twice the L2 is written before each timed call, so
  // that no call finds its inputs in the L2 left by the previous one (as
  // perf/torch_baseline.py does). Host caches are small next to the data of
  // the seed shape (dout alone is 100 MB): no flush there.
  const std::size_t l2_bytes = l2_cache_bytes(exec);
  const Kokkos::View<unsigned char*, Kokkos::LayoutRight, typename ExecSpace::device_type> l2_buffer(
      "llmk-perf::l2_flush", 2 * l2_bytes);
  std::function<void()> flush_l2;
  if (l2_bytes > 0) flush_l2 = [=] { Kokkos::deep_copy(exec, l2_buffer, (unsigned char)(0)); };

  std::vector<Entry> entries;
  for (Impl impl : impls) entries.push_back(impl_entry(impl, exec, full, probe));
  for (const Peer& p : peers)
    entries.push_back(peer_entry(p, full.peer_args(threads), probe.peer_args(threads)));

  // ---- each entry: probe, check, time
  std::vector<Record> records;
  bool failed = false;
  const int n = int(entries.size());
  for (int i = 0; i < n; ++i) {
    const Entry& e = entries[i];
    const std::string tag = "[" + std::to_string(i + 1) + "/" + std::to_string(n) + "] ";
    Record r{e.name, backend, s};
    r.note = e.note;
    try {
      if (opt.max_call_s > 0 && probe_rows < M) {
        const double projected_s = timed_call(e.probe, e.fence) * double(M) / double(probe_rows);
        if (projected_s > opt.max_call_s) {
          char buf[200];
          std::snprintf(buf, sizeof buf,
                        "skipped: a %lld-row probe projects %.3g s a call, over --max-call %g "
                        "(--max-call 0 times it)",
                        (long long)probe_rows, projected_s, opt.max_call_s);
          r.note = buf;
          progress(tag + e.name + " " + r.note);
          records.push_back(std::move(r));
          continue;
        }
      }
      double checked_s = 0;  // the checked call's time, reused by the timing
      if (ref) {
        // Gradients accumulate: one call on fresh copies of the initial
        // gradients, compared with ref = initial + products.
        progress(tag + "checking " + e.name + " ... ", false);
        reset_gradients();
        checked_s = timed_call(e.run, e.fence);
        read_back();
        Errors err = compare(*ref, h_dinp.data(), h_dweight.data(), h_dbias.data());
        if (!e.computes_bias) err.dbias = 0;
        r.max_rel_err = err.max();
        r.valid = err.max() <= kTolerance;
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s (rel err dinp %.1e, dweight %.1e, dbias %.1e; %s)",
                      *r.valid ? "ok" : "FAILED", err.dinp, err.dweight, err.dbias,
                      ms_text(checked_s).c_str());
        progress(buf);
        failed |= !*r.valid;
      }
      progress(tag + "timing " + e.name + " ... ", false);
      const Timing t = time_calls(plan, e.run, e.fence, checked_s, flush_l2);
      r.ms_median = t.ms_median;
      r.ms_min = t.ms_min;
      r.repeats = t.repeats;
      r.gflops = s.flops() / (t.ms_median * 1e-3) * 1e-9;
      progress(std::to_string(t.repeats) + " repeats, median " + ms_text(t.ms_median * 1e-3));
      if (e.bias_only) {
        progress(tag + "timing " + e.name + " bias pass ... ", false);
        TimingPlan bias_plan = plan;
        bias_plan.budget_s /= 4;
        const Timing b = time_calls(bias_plan, e.bias_only, e.fence, 0, flush_l2);
        r.bias_gbs = s.bias_bytes() / (b.ms_median * 1e-3) * 1e-9;
        r.bias_kernel = e.bias_kernel;
        progress(std::to_string(b.repeats) + " repeats, median " + ms_text(b.ms_median * 1e-3));
      }
    } catch (const std::exception& ex) {
      progress(std::string("ERROR: ") + ex.what());
      r.valid = false;
      r.note = std::string("error: ") + ex.what();
      failed = true;
    }
    records.push_back(std::move(r));
  }

  for (const std::string& path : opt.imports) {
    for (Record& r : read_json_records(path)) {
      const Shape& rs = r.shape;
      if (rs.B != s.B || rs.T != s.T || rs.C != s.C || rs.OC != s.OC) {
        progress("--import " + path + ": skipping '" + r.impl + "', timed at another shape");
        continue;
      }
      records.push_back(std::move(r));
    }
  }

  print_header(std::cout, machine, s);
  print_table(std::cout, records, reference_peer(backend));
  if (!opt.json.empty()) {
    write_json(opt.json, machine, records);
    progress("wrote " + opt.json);
  }
  if (failed) progress("llmk-perf: some implementations FAILED (see above)");
  return failed ? 1 : 0;
}

int run(const Options& opt) {
#ifdef KOKKOS_ENABLE_SERIAL
  if (opt.backend == "serial") return run_backend<Kokkos::Serial>(opt);
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  if (opt.backend == "openmp") return run_backend<Kokkos::OpenMP>(opt);
#endif
#ifdef KOKKOS_ENABLE_CUDA
  if (opt.backend == "cuda") return run_backend<Kokkos::Cuda>(opt);
#endif
  throw std::invalid_argument("backend '" + opt.backend + "' is not built into Kokkos");
}

}  // namespace
}  // namespace llmk::perf

int main(int argc, char** argv) {
  using llmk::perf::Options;
  Options opt;
  opt.backend = llmk::perf::lower(Kokkos::DefaultExecutionSpace::name());
  opt.threads = int(std::max(1u, std::thread::hardware_concurrency()));

  CLI::App app{"llmk-perf: validate and time llmk's matmul backward against peers"};
  app.add_option("--B", opt.shape.B, "batch size")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--T", opt.shape.T, "sequence length")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--C", opt.shape.C, "input channels")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--OC", opt.shape.OC, "output channels")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--impl", opt.impls, "comma list of llmk implementations, or 'all'")
      ->capture_default_str();
  app.add_option("--backend", opt.backend, "Kokkos execution space")
      ->capture_default_str()
      ->check(CLI::IsMember(llmk::perf::compiled_backends()));
  app.add_option("--repeat", opt.plan.repeat, "most timed calls")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--warmup", opt.plan.warmup, "untimed calls first")->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--budget", opt.plan.budget_s, "seconds of timed calls per implementation")
      ->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--max-call", opt.max_call_s,
                 "seconds: skip what a probe on 1/64 of the rows projects to be slower a call; 0: no limit")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--threads", opt.threads, "host threads (Kokkos OpenMP, OpenBLAS)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--json", opt.json, "write the results as JSON to this file");
  app.add_option("--import", opt.imports,
                 "add the records of an llmk-perf JSON file (e.g. perf/torch_baseline.py's) to the table")
      ->check(CLI::ExistingFile);
  bool no_check = false, no_peers = false;
  app.add_flag("--no-check", no_check, "skip validation against the float64 reference");
  app.add_flag("--no-peers", no_peers, "skip the peers (seed CPU loops, OpenBLAS)");
  CLI11_PARSE(app, argc, argv);
  opt.check = !no_check;
  opt.peers = !no_peers;

  const auto& s = opt.shape;
  if (s.M() > INT_MAX || s.C > INT_MAX || s.OC > INT_MAX) {  // BLAS takes int dimensions
    std::cerr << "llmk-perf: B*T, C and OC must each fit in an int\n";
    return 2;
  }

  Kokkos::InitArguments init;
  init.num_threads = opt.threads;
  Kokkos::ScopeGuard kokkos(init);
  try {
    return llmk::perf::run(opt);
  } catch (const std::invalid_argument& e) {  // a bad --impl or --backend
    std::cerr << "llmk-perf: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "llmk-perf: error: " << e.what() << "\n";
    return 1;
  }
}
