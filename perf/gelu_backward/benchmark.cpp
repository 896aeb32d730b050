// The GELU backward in llmk-perf (`llmk-perf gelu_backward`), described to
// the shared subcommand (harness/op_benchmark.hpp): B, T, C (N = B·T·C
// elements), dinp overwritten or not; per precision, one row per llmk
// implementation, then the peers (peers.hpp): peer:copy, a device copy of as
// many bytes as the call moves (the ceiling every row's "% copy" compares
// with), on Cuda peer:llmc-style, llm.c's kernel's idea. Memory-bound: rows
// report GB/s (Shape::bytes: dout and inp read, dinp written, and read when
// accumulated).
#include "../harness/btc_rows.hpp"
#include "../harness/out_update.hpp"
#include "peers.hpp"

#include <llmk/gelu_backward.hpp>
#include <ops/gelu_backward/reference/problem.hpp>
#include <ops/gelu_backward/reference/reference.hpp>
#include <ops/gelu_backward/spec.hpp>

namespace llmk::perf::gelu_backward {
namespace {

namespace ref = reference::gelu;

// GPT-2 124M's MLP activations (4C = 3072).
// dinp += by default; llm.c's kernel overwrites (--overwrite-dinp).
struct Options : BtcSizes<3072>, DinpUpdateOption {};

struct Description : BtcRows<reference::gelu::Shape>, DinpUpdate<GeluBackwardOptions> {
  using Tag = GeluBackward;
  using Spec = op::gelu_backward::Spec;
  using Options = gelu_backward::Options;
  static constexpr const char* help =
      "the backward pass of GPT-2's GELU (dinp = gelu'(inp) · dout)";
  using CallOptions = GeluBackwardOptions;
  using Problem = ref::HostProblem;
  using Peer = gelu_backward::Peer;
  static constexpr const char* title = "gelu backward";

  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string& sizes) {
    params(suite, s);
    suite.derived = "N=" + std::to_string(s.N());
    suite.flags = {{"overwrite_dinp", opt.overwrite_dinp}};
    suite.notes.push_back(dinp_text(opt) + "; error: relative L2 against the float64 reference");
    suite.notes.push_back("GB/s: dout, inp read, dinp " + dinp_bytes_text(opt) +
                          ", per second: " + sizes);
  }
  static double bytes(const Shape& s, reference::Precision p, const Options& opt) {
    return s.bytes(p, opt.overwrite_dinp);
  }

  static Problem make(const Shape& s, reference::Precision p, const Options&) {
    return ref::make_problem(s, 2024, p);
  }
  static const std::vector<float>& values(const Problem& in, std::size_t i) {
    return i == Spec::dinp ? in.dinp : i == Spec::dout ? in.dout : in.inp;
  }
  static std::vector<std::vector<double>> expected(const Problem& in, const Options& opt, int) {
    return {ref::reference_backward(in, opt.overwrite_dinp)};
  }
  static double tolerance(reference::Precision p, std::size_t) { return ref::tolerance(p); }

  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& options) {
    llmk::gelu_backward(ctx, a.out(Spec::dinp), a.in(Spec::dout), a.in(Spec::inp),
                        a.elements(Spec::dinp), options);
  }
  static std::vector<Peer> peers(const std::string& backend, const Options&) {
    return peers_on(llmc_peers(), backend);
  }
  template <class S>
  static PeerArgs peer_args(const OpArrays<S, Spec>& a, const std::string& p, const Options& opt) {
    return {a.data(Spec::dinp), a.data(Spec::dout), a.data(Spec::inp), a.elements(Spec::dinp),
            p, opt.overwrite_dinp};
  }

  static void add_options(CLI::App& app, Options& opt) {
    add_sizes(app, opt, "channels of GELU's input (GPT-2: 4·C)");
    add_selection_options<Description>(app, opt);
    add_overwrite(app, "--overwrite-dinp", opt.overwrite_dinp, "dinp =", "as llm.c's kernel");
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::gelu_backward
