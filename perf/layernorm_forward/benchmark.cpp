// The layer-norm forward in llmk-perf (`llmk-perf layernorm_forward`),
// described to the shared subcommand (harness/op_benchmark.hpp) with the
// backward's sizes (B, T, C: M = B·T rows): out overwritten (llm.c's) or
// accumulated, mean and rstd written; per precision, one row per llmk
// implementation, then the peers (peers.hpp): peer:copy, a device copy of as
// many bytes as the call moves, on Cuda peer:llmc-style, llm.c's kernel's
// idea (out overwritten only). Memory-bound: rows report GB/s (inp read, out
// written, and read when accumulated, weight and bias read, mean and rstd
// written).
#include "../harness/btc_rows.hpp"
#include "../harness/out_update.hpp"
#include "peers.hpp"

#include <llmk/layernorm_forward.hpp>
#include <ops/layernorm_forward/reference.hpp>
#include <ops/layernorm_forward/spec.hpp>

namespace llmk::perf::layernorm_forward {
namespace {

namespace ref = reference::layernorm_forward;

// GPT-2 124M's layernorms (C = 768).
struct Options : BtcSizes<768>, OutUpdateOption {};

// (mean and rstd are written whatever the update: their initial NaN never read.)
struct Description : BtcRows<reference::layernorm::Shape>, OutUpdate<LayernormForwardOptions, 3> {
  using Tag = LayernormForward;
  using Spec = op::layernorm_forward::Spec;
  using Options = layernorm_forward::Options;
  using CallOptions = LayernormForwardOptions;
  using Problem = ref::HostProblem;
  using Peer = layernorm_forward::Peer;
  static constexpr const char* title = "layernorm forward";
  static constexpr const char* help =
      "GPT-2's layer normalization (out, and the mean and rstd the backward takes)";

  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string& sizes) {
    params(suite, s);
    suite.flags = {{"accumulate_out", opt.accumulate_out}};
    suite.notes.push_back(out_text(opt) +
                          ", mean and rstd written; errors: relative L2 against the float64 "
                          "reference");
    suite.notes.push_back("GB/s: inp, weight, bias read, out " + out_bytes_text(opt) +
                          ", mean and rstd written, per second: " + sizes);
  }
  static double bytes(const Shape& s, reference::Precision p, const Options& opt) {
    return ref::bytes(s, p, !opt.accumulate_out);
  }

  static Problem make(const Shape& s, reference::Precision p, const Options&) {
    return ref::make_problem(s, 2024, p);
  }
  static const std::vector<float>& values(const Problem& in, std::size_t i) {
    const std::vector<float>* v[] = {&in.out, &in.mean, &in.rstd, &in.inp, &in.weight, &in.bias};
    return *v[i];
  }
  static std::vector<std::vector<double>> expected(const Problem& in, const Options& opt, int) {
    return ref::reference_forward(in, !opt.accumulate_out);
  }
  static double tolerance(reference::Precision p, std::size_t k) { return ref::tolerance(p, k); }
  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& options) {
    llmk::layernorm_forward(ctx, a.out(Spec::out), static_cast<float*>(a.data(Spec::mean)),
                            static_cast<float*>(a.data(Spec::rstd)), a.in(Spec::inp),
                            a.in(Spec::weight), a.in(Spec::bias), a.size("B"), a.size("T"),
                            a.size("C"), options);
  }
  static std::vector<Peer> peers(const std::string& backend, const Options& opt) {
    return opt.accumulate_out ? std::vector<Peer>{} : peers_on(llmc_peers(), backend);
  }
  template <class S>
  static PeerArgs peer_args(const OpArrays<S, Spec>& a, const std::string& p, const Options&) {
    return {a.data(Spec::out),
            static_cast<float*>(a.data(Spec::mean)),
            static_cast<float*>(a.data(Spec::rstd)),
            a.data(Spec::inp),
            a.data(Spec::weight),
            a.data(Spec::bias),
            a.size("B") * a.size("T"),
            a.size("C"),
            p};
  }

  static void add_options(CLI::App& app, Options& opt) {
    add_sizes(app, opt, "channels");
    add_selection_options<Description>(app, opt);
    add_out_update(app, opt, "the normalized rows (no llm.c-style peer then)");
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::layernorm_forward
