// The GELU forward in llmk-perf (`llmk-perf gelu_forward`), described to the
// shared subcommand (harness/op_benchmark.hpp) with the GELU backward's
// sizes (B, T, C: N = B·T·C elements): out overwritten (llm.c's) or
// accumulated; per precision, one row per llmk implementation, then the
// peers (peers.hpp): peer:copy, a device copy of as many bytes as the call
// moves, on Cuda peer:llmc-style, llm.c's kernel's idea. Memory-bound: rows
// report GB/s (inp read, out written, and read when accumulated).
#include "../harness/btc_rows.hpp"
#include "../harness/out_update.hpp"
#include "peers.hpp"

#include <llmk/gelu_forward.hpp>
#include <ops/gelu_forward/reference.hpp>
#include <ops/gelu_forward/spec.hpp>

namespace llmk::perf::gelu_forward {
namespace {

namespace ref = reference::gelu_forward;

// GPT-2 124M's MLP activations (4C = 3072).
struct Options : BtcSizes<3072>, OutUpdateOption {};

struct Description : BtcRows<reference::gelu::Shape>, OutUpdate<GeluForwardOptions> {
  using Tag = GeluForward;
  using Spec = op::gelu_forward::Spec;
  using Options = gelu_forward::Options;
  using CallOptions = GeluForwardOptions;
  using Problem = ref::HostProblem;
  using Peer = gelu_forward::Peer;
  static constexpr const char* title = "gelu forward";
  static constexpr const char* help = "GPT-2's GELU (out = gelu(inp), the tanh approximation)";

  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string& sizes) {
    params(suite, s);
    suite.derived = "N=" + std::to_string(s.N());
    suite.flags = {{"accumulate_out", opt.accumulate_out}};
    suite.notes.push_back(out_text(opt) + "; error: relative L2 against the float64 reference");
    suite.notes.push_back("GB/s: inp read, out " + out_bytes_text(opt) + ", per second: " + sizes);
  }
  static double bytes(const Shape& s, reference::Precision p, const Options& opt) {
    return ref::bytes(s, p, !opt.accumulate_out);
  }

  static Problem make(const Shape& s, reference::Precision p, const Options&) {
    return ref::make_problem(s, 2024, p);
  }
  static const std::vector<float>& values(const Problem& in, std::size_t i) {
    return i == Spec::out ? in.out : in.inp;
  }
  static std::vector<std::vector<double>> expected(const Problem& in, const Options& opt, int) {
    return {ref::reference_forward(in, !opt.accumulate_out)};
  }
  static double tolerance(reference::Precision p, std::size_t) { return ref::tolerance(p); }
  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& options) {
    llmk::gelu_forward(ctx, a.out(Spec::out), a.in(Spec::inp), a.elements(Spec::out), options);
  }
  static std::vector<Peer> peers(const std::string& backend, const Options&) {
    return peers_on(llmc_peers(), backend);
  }
  template <class S>
  static PeerArgs peer_args(const OpArrays<S, Spec>& a, const std::string& p, const Options& opt) {
    return {a.data(Spec::out), a.data(Spec::inp), a.elements(Spec::out), p, !opt.accumulate_out};
  }

  static void add_options(CLI::App& app, Options& opt) {
    add_sizes(app, opt, "channels of GELU's input (GPT-2: 4·C)");
    add_selection_options<Description>(app, opt);
    add_out_update(app, opt, "gelu(inp)");
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::gelu_forward
