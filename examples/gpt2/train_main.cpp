// llmk-gpt2-train: GPT-2 trained with llmk alone (train.hpp), llm.c's
// train_gpt2.cu loop on Cuda or on a host from one source.
//
//   llmk-gpt2-train --train FILE [--val FILE] [--model gpt2_124M.bin] ...
//     llm.c's token files (llmc_files.hpp) and checkpoint, or a random GPT-2
//     (--L --C --NH --V --Vp --maxT, GPT-2 124M's by default); trains
//     --steps steps of B × T tokens; prints each step's loss, gradient norm,
//     learning rate, time and tokens/s, the validation loss every
//     --val-every steps and a summary; --save writes a checkpoint (version 3
//     fp32, or --save-version 5 bf16), --losses-out a JSON of every step
//   llmk-gpt2-train --tiny-selfcheck [--L 2 --C 32 ... --steps 8] [--precision ...]
//     a random tiny model and batch (reference.hpp) trained by llmk and by
//     the float64 reference (reference_training.hpp): every step's loss
//     within --tolerance (relative) of the reference's
//   llmk-gpt2-train --write-tokens FILE [--count n] [--V n] [--seed n]
//     a token file of synthetic_tokens (train.hpp): a sequence to learn
//   llmk-gpt2-train --files-selfcheck DIR
//     llm.c's files written, read back and, corrupted field by field, refused
//     with the file and the field named (files_check.cpp)
// Exit status: 0 done (the self-checks: passed), 1 a self-check failed or a
// run failed, 2 bad arguments or files, 77 in a CUDA build without a GPU.
#include "files_check.hpp"
#include "llmc_files.hpp"
#include "reference_training.hpp"
#include "train.hpp"
#include "train_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using gpt2::index_t;

struct Args {
  gpt2::Config cfg{12, 768, 12, 50257, 50304, 4, 64};  // GPT-2 124M, llm.c's CPU batch
  index_t maxT = 1024;
  std::string model, train, val, save, losses_out, files_dir, write_tokens;
  index_t count = 100000;  // --write-tokens' tokens
  int save_version = 3;
  std::string precision = "fp32";
  gpt2::Schedule schedule;
  gpt2::OptimizerSettings optimizer;
  std::int64_t val_every = 20, val_batches = 20;
  std::uint64_t seed = 1234;
  bool selfcheck = false;
  bool time_phases = false;  // fence after each phase of a step, time them
  double tolerance = 0;  // default: by precision
  std::set<std::string> given;  // the options on the command line
};

const char* const kUsage =
    "usage: llmk-gpt2-train --train FILE [--val FILE] [--model FILE] [--save FILE]\n"
    "         [--save-version 3|5] [--losses-out FILE.json] [--precision fp32|bf16]\n"
    "         [--B n] [--T n] [--steps n] [--lr x] [--warmup n] [--final-lr-frac x]\n"
    "         [--weight-decay x] [--grad-clip x] [--val-every n] [--val-batches n] [--seed n]\n"
    "         [--time-phases]   (fence after each phase: forward, backward, optimizer)\n"
    "         [--L n --C n --NH n --V n --Vp n --maxT n]   (a random model; GPT-2 124M's)\n"
    "       llmk-gpt2-train --tiny-selfcheck [sizes] [--steps n] [--precision ...] [--tolerance x]\n"
    "       llmk-gpt2-train --write-tokens FILE [--count n] [--V n] [--seed n]\n"
    "       llmk-gpt2-train --files-selfcheck DIR\n"
    "  --train, --val: llm.c token files (header 20240520), or a glob pattern of them in\n"
    "  quotes (\"fineweb_train_*.bin\": one after the other); --model: an llm.c checkpoint\n"
    "  (header 20240326, version 3 or 5); without it a random GPT-2 of the sizes given\n";

Args parse(int argc, char** argv) {
  Args a;
  a.schedule.steps = 20;
  index_t* sizes[8] = {&a.cfg.L, &a.cfg.C, &a.cfg.NH, &a.cfg.V, &a.cfg.Vp, &a.maxT, &a.cfg.B, &a.cfg.T};
  const char* size_names[8] = {"--L", "--C", "--NH", "--V", "--Vp", "--maxT", "--B", "--T"};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    a.given.insert(arg);
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + ": expected a value after it");
      return argv[++i];
    };
    const auto integer = [&](long long lowest) {
      const std::string v = value();
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < lowest)
        throw std::invalid_argument(arg + ": expected an integer >= " + std::to_string(lowest) +
                                    ", got '" + v + "'");
      return n;
    };
    const auto real = [&]() {
      const std::string v = value();
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !std::isfinite(x) || x < 0)
        throw std::invalid_argument(arg + ": expected a finite number >= 0, got '" + v + "'");
      return x;
    };
    const auto size_at = std::find_if(size_names, size_names + 8,
                                      [&](const char* n) { return arg == n; });
    if (size_at != size_names + 8) {
      *sizes[size_at - size_names] = integer(1);
    } else if (arg == "--model") {
      a.model = value();
    } else if (arg == "--train") {
      a.train = value();
    } else if (arg == "--val") {
      a.val = value();
    } else if (arg == "--save") {
      a.save = value();
    } else if (arg == "--save-version") {
      a.save_version = int(integer(3));
      if (a.save_version != 3 && a.save_version != 5)
        throw std::invalid_argument("--save-version: expected 3 (fp32) or 5 (bf16)");
    } else if (arg == "--losses-out") {
      a.losses_out = value();
    } else if (arg == "--precision") {
      a.precision = value();
      if (a.precision != "fp32" && a.precision != "bf16")
        throw std::invalid_argument("--precision: expected fp32 or bf16, got '" + a.precision + "'");
    } else if (arg == "--steps") {
      a.schedule.steps = integer(0);
    } else if (arg == "--lr") {
      a.schedule.lr = float(real());
    } else if (arg == "--warmup") {
      a.schedule.warmup = integer(0);
    } else if (arg == "--final-lr-frac") {
      a.schedule.final_lr_frac = float(real());
    } else if (arg == "--weight-decay") {
      a.optimizer.weight_decay = float(real());
    } else if (arg == "--grad-clip") {
      a.optimizer.grad_clip = float(real());
    } else if (arg == "--val-every") {
      a.val_every = integer(0);
    } else if (arg == "--val-batches") {
      a.val_batches = integer(1);
    } else if (arg == "--seed") {
      a.seed = std::uint64_t(integer(0));
    } else if (arg == "--tolerance") {
      a.tolerance = real();
    } else if (arg == "--time-phases") {
      a.time_phases = true;
    } else if (arg == "--tiny-selfcheck") {
      a.selfcheck = true;
    } else if (arg == "--write-tokens") {
      a.write_tokens = value();
    } else if (arg == "--count") {
      a.count = integer(1);
    } else if (arg == "--files-selfcheck") {
      a.files_dir = value();
    } else if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else {
      throw std::invalid_argument("unknown argument '" + arg + "'");
    }
  }
  if (!a.selfcheck && a.files_dir.empty() && a.write_tokens.empty() && a.train.empty())
    throw std::invalid_argument("--train: expected a token file (or --tiny-selfcheck)");
  if (a.selfcheck) {
    // The tiny model's sizes and a schedule whose every part acts in 8 steps
    // (warmup, cosine decay, weight decay; clipping: the random model's
    // first gradients are larger than 1), where not given.
    const index_t tiny[8] = {2, 32, 2, 61, 64, 8, 2, 8};
    for (int f = 0; f < 8; ++f)
      if (!a.given.count(size_names[f])) *sizes[f] = tiny[f];
    const auto by_default = [&](const char* option, auto& field, auto x) {
      if (!a.given.count(option)) field = x;
    };
    by_default("--steps", a.schedule.steps, 8);
    by_default("--lr", a.schedule.lr, 1e-2f);
    by_default("--warmup", a.schedule.warmup, 2);
    by_default("--final-lr-frac", a.schedule.final_lr_frac, 0.1f);
    by_default("--weight-decay", a.optimizer.weight_decay, 0.1f);
  }
  return a;
}

// The tiny self-check: llmk's losses against the float64 reference's.
template <class T>
int tiny_selfcheck(const Args& args) {
  const gpt2::Config& cfg = args.cfg;  // wpe: T rows
  const gpt2::ReferenceModel model = gpt2::random_model(cfg, args.seed);
  const std::vector<double> expected =
      gpt2::reference_training(model, args.optimizer, args.schedule);
  gpt2::Floats weights;
  for (const auto& [name, p] : model.params) weights[name].assign(p.begin(), p.end());
  gpt2::Trainer<Exec, T> trainer(Exec(), cfg, weights, args.optimizer);
  // Measured on the tiny models (8 steps): fp32 within 3e-7 of the
  // reference's loss, bf16 within 2.3e-3 (its activations' rounding). What
  // the tolerances catch: clipping or weight decay dropped, the wrong tensors
  // decayed (tests/README.md's planted bugs).
  const double tolerance =
      args.tolerance > 0 ? args.tolerance : std::is_same_v<T, float> ? 1e-5 : 1e-2;
  double worst = 0;
  for (std::int64_t s = 0; s < args.schedule.steps; ++s) {
    const gpt2::StepResult r = trainer.step(model.tokens, model.targets, args.schedule.at(s));
    const double error = std::fabs(r.loss - expected[std::size_t(s)]) / std::fabs(expected[std::size_t(s)]);
    worst = std::max(worst, error);
    std::printf("step %2lld: loss %.6f, reference %.6f (relative error %.2e), norm %.4f\n",
                (long long)s + 1, r.loss, expected[std::size_t(s)], error, r.grad_norm);
  }
  // The loss after the last step, as a validation batch's (classifier_forward).
  const double last = trainer.loss(model.tokens, model.targets);
  const double final_expected = expected.back();
  const double final_error = std::fabs(last - final_expected) / std::fabs(final_expected);
  std::printf("after the last step: loss %.6f, reference %.6f (relative error %.2e)\n", last,
              final_expected, final_error);
  worst = std::max(worst, final_error);
  const bool ok = worst <= tolerance;
  std::printf("%s: every step's loss within %.1e of the float64 reference's (worst %.2e)\n",
              ok ? "passed" : "FAILED", tolerance, worst);
  return ok ? 0 : 1;
}

template <class T>
int train(const Args& args) {
  gpt2::Config cfg = args.cfg;
  gpt2::index_t maxT = args.maxT;
  gpt2::Floats weights;
  if (!args.model.empty()) {
    const gpt2::Checkpoint ck = gpt2::read_checkpoint(args.model);
    cfg.L = ck.L, cfg.C = ck.C, cfg.NH = ck.NH, cfg.V = ck.V, cfg.Vp = ck.Vp, maxT = ck.maxT;
    weights = ck.params;
  } else {
    weights = gpt2::random_parameters(cfg, maxT, args.seed);
  }
  if (cfg.T > maxT)
    throw std::invalid_argument("--T: " + std::to_string(cfg.T) + " positions, the model has " +
                                std::to_string(maxT) + " (maxT)");
  gpt2::validate(cfg);
  // The device's wpe holds the T rows a batch uses; the rest are kept as
  // they are and written back with the trained ones.
  const std::vector<float> wpe_all = weights.at("wpe");
  weights["wpe"].resize(std::size_t(cfg.T * cfg.C));
  gpt2::TokenStream train_tokens(args.train, cfg.B, cfg.T, cfg.V);
  std::unique_ptr<gpt2::TokenStream> val_tokens;
  if (!args.val.empty())
    val_tokens = std::make_unique<gpt2::TokenStream>(args.val, cfg.B, cfg.T, cfg.V);
  gpt2::TrainReport report(cfg, args.precision, args.schedule.steps);
  report.start(args.model.empty() ? "a random GPT-2" : args.model, maxT);
  std::printf("train tokens: %zu file(s) of '%s'%s\n", train_tokens.files().size(),
              args.train.c_str(), val_tokens ? (", validation: '" + args.val + "'").c_str() : "");
  gpt2::Trainer<Exec, T> trainer(Exec(), cfg, weights, args.optimizer);
  trainer.time_phases(args.time_phases);

  const auto validate_loss = [&](std::int64_t step) {
    if (!val_tokens) return;
    val_tokens->rewind();
    std::vector<std::int32_t> inputs, targets;
    double sum = 0;
    for (std::int64_t b = 0; b < args.val_batches; ++b) {
      val_tokens->next(inputs, targets);
      sum += trainer.loss(inputs, targets);
    }
    report.validation(step, sum / double(args.val_batches));
  };
  std::vector<std::int32_t> inputs, targets;
  for (std::int64_t s = 0; s < args.schedule.steps; ++s) {
    if (args.val_every > 0 && s % args.val_every == 0) validate_loss(s);
    train_tokens.next(inputs, targets);
    const float lr = args.schedule.at(s);
    Kokkos::Timer timer;
    const gpt2::StepResult r = trainer.step(inputs, targets, lr);
    report.step(s, r, lr, timer.seconds());
  }
  validate_loss(args.schedule.steps);
  report.finish(args.losses_out);

  if (!args.save.empty()) {
    gpt2::Checkpoint ck;
    ck.version = args.save_version;
    ck.maxT = maxT, ck.V = cfg.V, ck.L = cfg.L, ck.NH = cfg.NH, ck.C = cfg.C, ck.Vp = cfg.Vp;
    ck.params = trainer.weights();
    std::vector<float>& wpe = ck.params["wpe"];
    wpe.insert(wpe.end(), wpe_all.begin() + std::ptrdiff_t(wpe.size()), wpe_all.end());
    gpt2::write_checkpoint(args.save, ck);
    std::printf("wrote %s (version %d)\n", args.save.c_str(), ck.version);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  try {
    args = parse(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "llmk-gpt2-train: %s\n%s", e.what(), kUsage);
    return 2;
  }
  if (!args.files_dir.empty()) return gpt2::files_selfcheck(args.files_dir) ? 0 : 1;
  if (!args.write_tokens.empty()) {
    try {
      gpt2::write_tokens(args.write_tokens,
                         gpt2::synthetic_tokens(args.count, args.cfg.V, args.seed));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "llmk-gpt2-train: %s\n", e.what());
      return 2;
    }
    std::printf("wrote %s (%lld tokens)\n", args.write_tokens.c_str(), (long long)args.count);
    return 0;
  }
  if (!gpt2::have_gpu()) return 77;
  Kokkos::initialize(argc, argv);
  int status = 0;
  try {
    const bool bf16 = args.precision == "bf16";
    if (args.selfcheck)
      status = bf16 ? tiny_selfcheck<llmk::bf16>(args) : tiny_selfcheck<float>(args);
    else
      status = bf16 ? train<llmk::bf16>(args) : train<float>(args);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "llmk-gpt2-train: %s\n", e.what());
    status = 2;
  } catch (const std::runtime_error& e) {  // a file
    std::fprintf(stderr, "llmk-gpt2-train: %s\n", e.what());
    status = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llmk-gpt2-train: %s\n", e.what());
    status = 1;
  }
  Kokkos::finalize();
  return status;
}
