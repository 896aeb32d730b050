// The squared norm in llmk-perf (`llmk-perf squared_norm`), described to the
// shared subcommand (harness/op_benchmark.hpp): out = Σ inp² over N values
// (GPT-2 124M's gradients by default: gradient clipping's norm), out
// overwritten or accumulated; per precision, one row per llmk implementation
// and peer:copy, a device copy of as many bytes as the call reads (a
// reduction's ceiling). Memory-bound: rows report GB/s of inp read.
#include "../harness/flat_rows.hpp"
#include "../harness/out_update.hpp"

#include <llmk/squared_norm.hpp>
#include <ops/squared_norm/reference.hpp>
#include <ops/squared_norm/spec.hpp>

namespace llmk::perf::squared_norm {
namespace {

namespace ref = reference::squared_norm;

struct Options : FlatSizes, OutUpdateOption {};

struct Description : FlatRows, OutUpdate<SquaredNormOptions>, NoPeers {
  using Tag = SquaredNorm;
  using Spec = op::squared_norm::Spec;
  using Options = squared_norm::Options;
  using CallOptions = SquaredNormOptions;
  using Problem = ref::HostProblem;
  static constexpr const char* title = "squared norm";
  static constexpr const char* help = "the sum of squares of N values (gradient clipping's norm)";

  static Shape shape(const Options& opt) { return {"perf", 1, opt.N, false}; }
  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string& sizes) {
    params(suite, s);
    suite.flags = {{"accumulate_out", opt.accumulate_out}};
    suite.notes.push_back(out_text(opt) + "; error: relative against the float64 reference");
    suite.notes.push_back("GB/s: inp read, per second: " + sizes);
  }
  static double bytes(const Shape& s, reference::Precision p, const Options&) {
    return ref::bytes(s, p);
  }

  static Problem make(const Shape& s, reference::Precision p, const Options&) {
    return ref::make_problem(s, 2024, p);
  }
  static const std::vector<float>& values(const Problem& in, std::size_t i) {
    return i == Spec::out ? in.out : in.inp;
  }
  static std::vector<std::vector<double>> expected(const Problem& in, const Options& opt, int) {
    return {ref::reference_sum(in, !opt.accumulate_out)};
  }
  static double tolerance(reference::Precision p, std::size_t) { return ref::tolerance(p); }

  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& options) {
    llmk::squared_norm(ctx, static_cast<float*>(a.data(Spec::out)), a.in(Spec::inp),
                       a.elements(Spec::inp), options);
  }

  static void add_options(CLI::App& app, Options& opt) {
    add_sizes(app, opt);
    add_selection_options<Description>(app, opt);
    add_out_update(app, opt, "the sum");
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::squared_norm
