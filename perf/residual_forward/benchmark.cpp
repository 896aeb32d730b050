// The residual forward in llmk-perf (`llmk-perf residual_forward`), described
// to the shared subcommand (harness/op_benchmark.hpp): out = inp1 + inp2 over
// B × T × C (GPT-2 124M's residual stream, C 768), out overwritten (llm.c's)
// or accumulated; per precision, one row per llmk implementation and
// peer:copy, a device copy of as many bytes as the call moves (llm.c's
// residual_forward is a 16-byte-pack kernel like `packed`: the copy is the
// ceiling both aim at). Memory-bound: rows report GB/s (inp1 and inp2 read,
// out written, and read when accumulated).
#include "../harness/btc_rows.hpp"
#include "../harness/out_update.hpp"

#include <llmk/residual_forward.hpp>
#include <ops/residual_forward/reference.hpp>
#include <ops/residual_forward/spec.hpp>

namespace llmk::perf::residual_forward {
namespace {

namespace ref = reference::residual_forward;

struct Options : BtcSizes<768>, OutUpdateOption {};

struct Description : BtcRows<reference::gelu::Shape>, OutUpdate<ResidualForwardOptions>, NoPeers {
  using Tag = ResidualForward;
  using Spec = op::residual_forward::Spec;
  using Options = residual_forward::Options;
  using CallOptions = ResidualForwardOptions;
  using Problem = ref::HostProblem;
  static constexpr const char* title = "residual forward";
  static constexpr const char* help = "GPT-2's residual connection (out = inp1 + inp2)";

  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string& sizes) {
    params(suite, s);
    suite.derived = "N=" + std::to_string(s.N());
    suite.flags = {{"accumulate_out", opt.accumulate_out}};
    suite.notes.push_back(out_text(opt) + "; error: relative L2 against the float64 reference");
    suite.notes.push_back("GB/s: inp1 and inp2 read, out " + out_bytes_text(opt) +
                          ", per second: " + sizes);
  }
  static double bytes(const Shape& s, reference::Precision p, const Options& opt) {
    return ref::bytes(s, p, !opt.accumulate_out);
  }

  static Problem make(const Shape& s, reference::Precision p, const Options&) {
    return ref::make_problem(s, 2024, p);
  }
  static const std::vector<float>& values(const Problem& in, std::size_t i) {
    return i == Spec::out ? in.out : i == Spec::inp1 ? in.inp1 : in.inp2;
  }
  static std::vector<std::vector<double>> expected(const Problem& in, const Options& opt, int) {
    return {ref::reference_forward(in, !opt.accumulate_out)};
  }
  static double tolerance(reference::Precision p, std::size_t) { return ref::tolerance(p); }

  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& options) {
    llmk::residual_forward(ctx, a.out(Spec::out), a.in(Spec::inp1), a.in(Spec::inp2),
                           a.elements(Spec::out), options);
  }

  static void add_options(CLI::App& app, Options& opt) {
    add_sizes(app, opt, "channels (GPT-2 124M: 768)");
    add_selection_options<Description>(app, opt);
    add_out_update(app, opt, "inp1 + inp2");
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::residual_forward
