// llmk-gpt2-backward: GPT-2's backward pass with llmk (backward.hpp), its
// every gradient compared with a reference, and its time.
//
//   llmk-gpt2-backward --tiny-selfcheck [--L 2 --C 32 --NH 2 --V 61 --Vp 64 --B 2 --T 8]
//                      [--precision fp32|bf16] [--attention materialized|recompute]
//     the float64 reference of reference_*.cpp (random model, fixed --seed):
//     its forward's activations feed llmk's backward, its gradients judge it
//   llmk-gpt2-backward --input gpt2.bin [--precision ...] [--attention ...]
//     a file of gpt2_torch.py: PyTorch's forward activations and autograd's
//     gradients (the configuration is the file's; --L etc., when given, must
//     match it), and PyTorch's backward times, shown beside llmk's
//   ... --forward
//     llmk's own forward first (forward.hpp: the recompute variant): its
//     every activation compared with the reference's (or PyTorch's), its
//     time; the backward then runs from llmk's activations
//   mpirun -np R llmk-gpt2-backward (--tiny-selfcheck | --input FILE) --data-parallel ...
//     the same, the global batch split across R ranks (data_parallel.hpp),
//     the gradients summed by llmk::GradientReducer; built where MPI is
// Exit status: 0 when every gradient is within tolerance, 1 when one is not
// (or, with --check-threads, when a step's threads collapsed: timing.hpp;
// 77 where the machine was too busy to judge, or no --repeats),
// 2 for bad arguments, 77 in a CUDA build without a GPU (CTest: skipped).
#include "backward.hpp"
#include "compare.hpp"
#include "data_parallel.hpp"
#include "self_check.hpp"
#include "tensor_file.hpp"
#include "timing.hpp"

#include <llmk/host_blas.hpp>

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>
#endif
#if LLMK_GPT2_DATA_PARALLEL
#include <mpi.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Exec = Kokkos::DefaultExecutionSpace;

struct Args {
  gpt2::Config cfg{2, 32, 2, 61, 64, 2, 8};
  bool cfg_given[7] = {};
  std::string precision = "fp32";
  std::string attention = "recompute";
  gpt2::Impls impls;
  std::string input;
  bool selfcheck = false;
  bool data_parallel = false;
  bool check_threads = false;  // a thread collapse (timing.hpp) fails the run
  bool forward = false;        // llmk's forward computes the activations
  std::uint64_t seed = 1234;
  int repeats = -1;      // default: 3 in the self-check, 20 with a file
  double tolerance = 0;  // default: by precision and mode (tolerances below)
  double l2_flush_mb = -1;
};

const char* const kUsage =
    "usage: llmk-gpt2-backward (--tiny-selfcheck | --input FILE) [--L n] [--C n] [--NH n]\n"
    "       [--V n] [--Vp n] [--B n] [--T n] [--precision fp32|bf16]\n"
    "       [--attention materialized|recompute] [--seed n] [--repeats n] [--tolerance x]\n"
    "       [--l2-flush-mb n] [--impl OP=NAME ...] [--check-threads] [--forward]\n"
    "       [--data-parallel (under mpirun)]\n"
    "  --impl: an operation's implementation (default auto), OP one of matmul_backward,\n"
    "          layernorm_backward, attention_backward, classifier_backward, encoder_backward\n"
    "  --check-threads: exit 1 when a step is over 10x slower in the sequence than alone\n"
    "          (threads of two libraries fighting for the cores)\n"
    "  --forward: llmk's forward computes the activations (compared with the reference's,\n"
    "          timed); the backward runs from them\n";

Args parse(int argc, char** argv) {
  Args a;
  gpt2::index_t* fields[7] = {&a.cfg.L, &a.cfg.C, &a.cfg.NH, &a.cfg.V, &a.cfg.Vp, &a.cfg.B, &a.cfg.T};
  const char* names[7] = {"--L", "--C", "--NH", "--V", "--Vp", "--B", "--T"};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + ": expected a value after it");
      return argv[++i];
    };
    const auto number = [&]() {
      const std::string v = value();
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 0) {
        throw std::invalid_argument(arg + ": expected a non-negative integer, got '" + v + "'");
      }
      return n;
    };
    bool known = false;
    for (int f = 0; f < 7; ++f) {
      if (arg == names[f]) {
        *fields[f] = number();
        a.cfg_given[f] = known = true;
      }
    }
    if (known) continue;
    if (arg == "--tiny-selfcheck") {
      a.selfcheck = true;
    } else if (arg == "--check-threads") {
      a.check_threads = true;
    } else if (arg == "--forward") {
      a.forward = true;
    } else if (arg == "--input") {
      a.input = value();
    } else if (arg == "--precision") {
      a.precision = value();
      if (a.precision != "fp32" && a.precision != "bf16") {
        throw std::invalid_argument("--precision: expected fp32 or bf16, got '" + a.precision + "'");
      }
    } else if (arg == "--attention") {
      a.attention = value();
      if (a.attention != "materialized" && a.attention != "recompute") {
        throw std::invalid_argument("--attention: expected materialized or recompute, got '" +
                                    a.attention + "'");
      }
    } else if (arg == "--seed") {
      a.seed = std::uint64_t(number());
    } else if (arg == "--repeats") {
      a.repeats = int(number());
    } else if (arg == "--tolerance") {
      a.tolerance = std::atof(value().c_str());
      if (!(a.tolerance > 0)) throw std::invalid_argument("--tolerance: expected a positive number");
    } else if (arg == "--data-parallel") {
      if (!LLMK_GPT2_DATA_PARALLEL) {
        throw std::invalid_argument("--data-parallel: this build has no MPI (LLMK_ENABLE_MPI)"
                                    " or, for CUDA, no NCCL (LLMK_ENABLE_NCCL)");
      }
      a.data_parallel = true;
    } else if (arg == "--impl") {
      const std::string v = value();
      const std::size_t eq = v.find('=');
      std::string* slot = nullptr;
      const std::string op = v.substr(0, eq);
      if (op == "matmul_backward") slot = &a.impls.matmul;
      if (op == "layernorm_backward") slot = &a.impls.layernorm;
      if (op == "attention_backward") slot = &a.impls.attention;
      if (op == "classifier_backward") slot = &a.impls.classifier;
      if (op == "encoder_backward") slot = &a.impls.encoder;
      if (eq == std::string::npos || eq + 1 == v.size() || !slot) {
        throw std::invalid_argument("--impl: expected OP=NAME with OP one of matmul_backward, "
                                    "layernorm_backward, attention_backward, classifier_backward, "
                                    "encoder_backward; got '" + v + "'");
      }
      *slot = v.substr(eq + 1);
    } else if (arg == "--l2-flush-mb") {
      a.l2_flush_mb = double(number());
    } else if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else {
      throw std::invalid_argument(arg + ": unknown argument");
    }
  }
  if (a.selfcheck == !a.input.empty()) {
    throw std::invalid_argument("expected exactly one of --tiny-selfcheck and --input FILE");
  }
  if (a.forward && (a.attention != "recompute" || a.data_parallel)) {
    throw std::invalid_argument("--forward: with --attention recompute (llmk's forward saves lse,"
                                " not att), without --data-parallel");
  }
  return a;
}

// Tolerances on the relative L2 error of every gradient (docs/api.md, the GPT-2
// example; design.md says why).
double default_tolerance(const Args& a) {
  if (a.precision == "bf16") return a.selfcheck ? 2e-2 : 3e-2;
  return a.selfcheck ? 2e-5 : 2e-4;
}

// llmk's forward over the loaded parameters and tokens: its activations
// against the loaded ones (the reference's forward), then its time (the
// median of `repeats` fenced calls). Returns whether every activation passed.
template <class T>
bool forward_matches(gpt2::Gpt2Backward<Exec, T>& model, const gpt2::HostInputs& in,
                     double tolerance, int repeats) {
  model.forward();
  gpt2::Doubles want;
  const std::vector<gpt2::TensorSpec> specs = gpt2::activation_specs(in.cfg, false);
  for (const gpt2::TensorSpec& s : specs) {
    const std::vector<float>& v = in.tensors.at(s.name);
    want[s.name].assign(v.begin(), v.end());
  }
  const bool ok = gpt2::print_comparisons(
      stdout, gpt2::compare_tensors(specs, model.activations(), want, tolerance), tolerance,
      "activation");
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    model.exec().fence();
    Kokkos::Timer timer;
    model.forward();
    model.exec().fence();
    ms.push_back(timer.seconds() * 1e3);
  }
  if (!ms.empty()) {
    std::sort(ms.begin(), ms.end());
    std::printf("llmk forward: median %.3f ms, min %.3f ms over %d calls (fenced)\n",
                ms[ms.size() / 2], ms.front(), repeats);
  }
  std::printf("%s\n", ok ? "every activation within tolerance" : "FAILED: an activation is off");
  return ok;
}

template <class T>
int run(const Args& args) {
  Exec exec;
  const bool materialized = args.attention == "materialized";
  gpt2::Doubles want;
  std::vector<double> want_losses;
  std::map<std::string, double> torch_ms;
  gpt2::HostInputs inputs;
  if (args.selfcheck) {
    gpt2::SelfCheck check = gpt2::make_self_check(args.cfg, args.seed);
    inputs = std::move(check.inputs);
    want = std::move(check.gradients);
    want_losses = std::move(check.losses);
  } else {
    gpt2::TensorFile file = gpt2::read_tensor_file(args.input);
    const gpt2::index_t* file_fields[7] = {&file.inputs.cfg.L, &file.inputs.cfg.C,
                                           &file.inputs.cfg.NH, &file.inputs.cfg.V,
                                           &file.inputs.cfg.Vp, &file.inputs.cfg.B,
                                           &file.inputs.cfg.T};
    const gpt2::index_t* arg_fields[7] = {&args.cfg.L, &args.cfg.C, &args.cfg.NH, &args.cfg.V,
                                          &args.cfg.Vp, &args.cfg.B, &args.cfg.T};
    for (int f = 0; f < 7; ++f) {
      if (args.cfg_given[f] && *arg_fields[f] != *file_fields[f]) {
        throw std::invalid_argument("the configuration given differs from " + args.input + "'s");
      }
    }
    inputs = std::move(file.inputs);
    want = std::move(file.gradients);
    want_losses = std::move(file.losses);
    torch_ms = std::move(file.times_ms);
  }
  const gpt2::Config c = inputs.cfg;
  std::printf("GPT-2 backward with llmk on %s: L %lld C %lld NH %lld V %lld Vp %lld B %lld T %lld, "
              "%s, attention %s\n",
              Exec::name(), (long long)c.L, (long long)c.C, (long long)c.NH, (long long)c.V,
              (long long)c.Vp, (long long)c.B, (long long)c.T, args.precision.c_str(),
              args.attention.c_str());
  const gpt2::Impls& im = args.impls;
  // "auto" shown with what it stands for here (on a host space matmul's
  // depends on the process's BLAS: llmk/host_blas.hpp).
  const std::string& p = args.precision;
  const auto shown = [](const std::string& name, const std::string& chosen) {
    return name == "auto" ? "auto (" + chosen + ")" : name;
  };
  const std::string attention_auto =
      args.attention == "recompute" ? llmk::auto_impl<llmk::AttentionBackwardRecompute, Exec>(p)
                                    : llmk::auto_impl<llmk::AttentionBackward, Exec>(p);
  std::printf("implementations: matmul %s, layernorm %s, attention %s, classifier %s, encoder %s\n",
              shown(im.matmul, llmk::auto_impl<llmk::MatmulBackward, Exec>(p)).c_str(),
              shown(im.layernorm, llmk::auto_impl<llmk::LayernormBackward, Exec>(p)).c_str(),
              shown(im.attention, attention_auto).c_str(),
              shown(im.classifier, llmk::auto_impl<llmk::ClassifierBackward, Exec>(p)).c_str(),
              shown(im.encoder, llmk::auto_impl<llmk::EncoderBackward, Exec>(p)).c_str());
  const llmk::HostBlas blas = llmk::host_blas();
  std::printf("host BLAS: %s, %s threads (%d), kernels %s%s\n", blas.library.c_str(),
              blas.threading.c_str(), blas.threads, blas.core.c_str(),
              blas.fallback_core ? " (a fallback for this CPU: docs/cpu.md)" : "");

  const double tolerance = args.tolerance > 0 ? args.tolerance : default_tolerance(args);
  const int repeats = args.repeats >= 0 ? args.repeats : (args.selfcheck ? 3 : 20);
  if (args.data_parallel) {
    return gpt2::run_data_parallel<T>(inputs, want, want_losses,
                                      gpt2::DataParallelRun{materialized, tolerance, repeats, args.impls});
  }
  gpt2::Gpt2Backward<Exec, T> backward(exec, c, materialized, args.impls);
  backward.load(inputs);
  bool ok = true;
  if (args.forward) ok = forward_matches(backward, inputs, tolerance, repeats);
  inputs = gpt2::HostInputs{};  // the host copies are no longer needed
  backward.reset();
  backward.run();
  const auto rows = gpt2::compare_gradients(c, backward.gradients(), want, tolerance);
  ok = gpt2::print_comparisons(stdout, rows, tolerance) && ok;
  if (!want_losses.empty()) {
    const double e = gpt2::relative_l2(backward.losses(), want_losses);
    const bool losses_ok = e <= tolerance;
    std::printf("%-16s %12s %12.4e %12s  %s\n", "losses", "", e, "", losses_ok ? "ok" : "FAIL");
    ok = ok && losses_ok;
  }

  const double flush_mb = args.l2_flush_mb >= 0 ? args.l2_flush_mb : (args.selfcheck ? 0 : 256);
  // A thread collapse (timing.hpp) is reported; with --check-threads it fails
  // the run, and a machine too busy to judge skips it (77).
  const gpt2::Threads threads = repeats > 0
                                    ? gpt2::print_times(backward, repeats, flush_mb, torch_ms)
                                    : gpt2::Threads::not_judged;
  std::printf("%s\n", ok ? "every gradient within tolerance" : "FAILED: a gradient is off");
  if (!ok) return 1;
  if (!args.check_threads) return 0;
  return threads == gpt2::Threads::fine ? 0 : threads == gpt2::Threads::collapsed ? 1 : 77;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  try {
    args = parse(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "llmk-gpt2-backward: %s\n%s", e.what(), kUsage);
    return 2;
  }
  if (!gpt2::have_gpu()) return 77;
#if LLMK_GPT2_DATA_PARALLEL
  // One GPU a rank, by the rank on its node (Open MPI's variable; MPICH's,
  // or 0 without one): Kokkos takes the device from its own argument.
  std::vector<char*> kokkos_argv(argv, argv + argc);
  std::string device_arg;
  if (args.data_parallel) {
    MPI_Init(&argc, &argv);
#ifdef KOKKOS_ENABLE_CUDA
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (!local) local = std::getenv("MPI_LOCALRANKID");
    int devices = 1;
    cudaGetDeviceCount(&devices);
    device_arg = "--kokkos-device-id=" + std::to_string((local ? std::atoi(local) : 0) % devices);
    kokkos_argv.push_back(device_arg.data());
#endif
  }
  int kokkos_argc = int(kokkos_argv.size());
  Kokkos::initialize(kokkos_argc, kokkos_argv.data());
#else
  Kokkos::initialize(argc, argv);
#endif
  int status = 0;
  try {
    status = args.precision == "bf16" ? run<llmk::bf16>(args) : run<float>(args);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "llmk-gpt2-backward: %s\n", e.what());
    status = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llmk-gpt2-backward: %s\n", e.what());
    status = 1;
  }
  Kokkos::finalize();
#if LLMK_GPT2_DATA_PARALLEL
  if (args.data_parallel) {
    if (status != 0) MPI_Abort(MPI_COMM_WORLD, status);  // the other ranks stop too
    MPI_Finalize();
  }
#endif
  return status;
}
