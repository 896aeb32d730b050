// The AdamW step in llmk-perf (`llmk-perf adamw`), described to the shared
// subcommand (harness/op_benchmark.hpp): one call over N parameters (GPT-2
// 124M's 124,475,904 by default, llm.c's count with the padded vocabulary),
// without or with fp32 master weights (--master, llm.c's bf16 training);
// per precision, one row per llmk implementation and peer:copy, a device
// copy of as many bytes as the step moves (llm.c's adamw_kernel3 is the same
// one pass: the copy is the ceiling both aim at). Memory-bound: rows report
// GB/s (grads read; params, m, v, master read and written). Each timed call
// continues the state the previous one left (the check starts from the
// problem's).
#include "../harness/flat_rows.hpp"
#include "../harness/out_update.hpp"

#include <llmk/adamw.hpp>
#include <ops/adamw/reference.hpp>
#include <ops/adamw/spec.hpp>

namespace llmk::perf::adamw {
namespace {

namespace ref = reference::adamw;

struct Options : FlatSizes {
  bool master = false;
};

struct Description : FlatRows, NoPeers {
  using Tag = AdamW;
  using Spec = op::adamw::Spec;
  using Options = adamw::Options;
  using CallOptions = AdamWOptions;
  using Problem = ref::HostProblem;
  static constexpr const char* title = "AdamW step";
  static constexpr const char* help = "the AdamW optimizer's step over N parameters";

  static Shape shape(const Options& opt) { return {"perf", 1, opt.N, opt.master}; }
  static std::vector<bool> present(const Options& opt) {
    return {true, true, true, true, opt.master};
  }

  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string& sizes) {
    params(suite, s);
    suite.flags = {{"master", opt.master}};
    suite.notes.push_back(std::string(opt.master ? "with" : "without") +
                          " fp32 master weights; error: relative L2 of the first step against "
                          "the float64 reference");
    suite.notes.push_back("GB/s: grads read; params, m, v" +
                          std::string(opt.master ? ", master" : "") +
                          " read and written, per second: " + sizes);
  }
  static double bytes(const Shape& s, reference::Precision p, const Options&) {
    return ref::bytes(s, p);
  }

  static Problem make(const Shape& s, reference::Precision p, const Options&) {
    return ref::make_problem(s, 2024, p);
  }
  static const std::vector<float>& values(const Problem& in, std::size_t i) {
    switch (i) {
      case Spec::params: return in.params;
      case Spec::grads: return in.grads;
      case Spec::m: return in.m;
      case Spec::v: return in.v;
      default: return in.master;
    }
  }
  static std::vector<std::vector<double>> expected(const Problem& in, const Options&, int) {
    return ref::reference_step(in);
  }
  static double tolerance(reference::Precision p, std::size_t k) {
    return ref::tolerance(p, k == 0);
  }
  // Every output is the state the step reads (inout): none starts as NaN.
  static std::vector<bool> overwrites(const Options&) { return {false, false, false, false}; }

  static CallOptions call_options(const std::string& impl, const Options&) {
    CallOptions options;
    options.impl = impl;
    return options;
  }
  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& options) {
    const auto f32 = [&](std::size_t i) { return static_cast<float*>(a.data(i)); };
    llmk::adamw(ctx, a.out(Spec::params), a.in(Spec::grads), f32(Spec::m), f32(Spec::v),
                f32(Spec::master), a.elements(Spec::params), ref::test_hyperparams(), options);
  }

  static void add_options(CLI::App& app, Options& opt) {
    add_sizes(app, opt);
    add_selection_options<Description>(app, opt);
    app.add_flag("--master", opt.master,
                 "fp32 master weights beside the params (llm.c's bf16 training)");
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::adamw
