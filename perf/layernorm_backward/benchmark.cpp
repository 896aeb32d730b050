// The layernorm backward in llmk-perf (`llmk-perf layernorm_backward`): its
// options (the problem's sizes, the implementations and precisions to time,
// dinp overwritten) and its run: per precision, one row per llmk
// implementation that declares it, in the order of
// llmk::impls<llmk::LayernormBackward>(), then the peers (peers.hpp): peer:copy, a
// device copy moving as many bytes as the operation, the bandwidth ceiling
// every row's "% copy" compares with; on Cuda peer:llmc-style, llm.c's
// algorithm. All on the same inputs, each that computes something validated
// against the float64 reference of llmk_layernorm_backward_reference before it
// is timed. A memory-bound operation: rows report GB/s (the bytes of the
// reference's Shape::bytes, the least a call must move), not GFLOP/s.
#include "../harness/btc_rows.hpp"
#include "../harness/out_update.hpp"
#include "peers.hpp"

#include <llmk/layernorm_backward.hpp>
#include <ops/layernorm_backward/reference/compare.hpp>
#include <ops/layernorm_backward/reference/problem.hpp>
#include <ops/layernorm_backward/reference/reference.hpp>
#include <ops/layernorm_backward/spec.hpp>

namespace llmk::perf::layernorm_backward {
namespace {

namespace ref = reference::layernorm;

// GPT-2 124M's layernorms (C = 768).
// dinp += by default (the residual stream's), or = (--overwrite-dinp).
struct Options : BtcSizes<768>, DinpUpdateOption {};

struct Description : BtcRows<reference::layernorm::Shape>,
                     DinpUpdate<LayernormBackwardOptions, 3> {
  using Tag = LayernormBackward;
  using Spec = op::layernorm_backward::Spec;
  using Options = layernorm_backward::Options;
  static constexpr const char* help =
      "the backward pass of GPT-2's layer normalization (dinp, dweight, dbias)";
  using CallOptions = LayernormBackwardOptions;
  using Problem = ref::HostProblem;
  using Peer = layernorm_backward::Peer;
  static constexpr const char* title = "layernorm backward";

  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string& sizes) {
    params(suite, s);
    suite.derived = "M=" + std::to_string(s.M());
    suite.flags = {{"overwrite_dinp", opt.overwrite_dinp}};
    suite.notes.push_back(dinp_text(opt) +
                          ", dweight and dbias accumulated (+=); errors: relative L2 of each "
                          "output against the float64 reference");
    suite.notes.push_back("GB/s: the bytes a call must move (dout, inp, weight, mean, rstd read; "
                          "dinp " + dinp_bytes_text(opt) +
                          "; dweight, dbias read and written) per second: " + sizes);
    if (s.M() == 0 || s.C == 0)
      suite.notes.push_back(
          "zero-sized problem: every llmk call is a valid no-op; times are the calls' fixed costs");
  }
  static double bytes(const Shape& s, reference::Precision p, const Options& opt) {
    return s.bytes(p, opt.overwrite_dinp);
  }

  static Problem make(const Shape& s, reference::Precision p, const Options&) {
    return ref::make_problem(s, 2024, p);
  }
  static const std::vector<float>& values(const Problem& in, std::size_t i) {
    const std::vector<float>* v[] = {&in.dinp, &in.dweight, &in.dbias, &in.dout,
                                     &in.inp,  &in.weight,  &in.mean,  &in.rstd};
    return *v[i];
  }
  static std::vector<std::vector<double>> expected(const Problem& in, const Options& opt,
                                                   int threads) {
    ref::Gradients64 g = ref::reference_backward(in, {opt.overwrite_dinp, false, false}, threads);
    return {std::move(g.dinp), std::move(g.dweight), std::move(g.dbias)};
  }
  static double tolerance(reference::Precision p, std::size_t k) {
    using reference::Output;
    return ref::tolerance(p, k == 0 ? Output::dinp : k == 1 ? Output::dweight : Output::dbias);
  }

  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& options) {
    llmk::layernorm_backward(
        ctx, a.out(Spec::dinp), a.out(Spec::dweight), a.out(Spec::dbias), a.in(Spec::dout),
        a.in(Spec::inp), a.in(Spec::weight), static_cast<const float*>(a.data(Spec::mean)),
        static_cast<const float*>(a.data(Spec::rstd)), a.size("B"), a.size("T"), a.size("C"),
        options);
  }
  static std::vector<Peer> peers(const std::string& backend, const Options&) {
    return peers_on(llmc_peers(), backend);
  }
  template <class S>
  static PeerArgs peer_args(const OpArrays<S, Spec>& a, const std::string& p, const Options& opt) {
    return {a.data(Spec::dinp),
            a.data(Spec::dweight),
            a.data(Spec::dbias),
            a.data(Spec::dout),
            a.data(Spec::inp),
            a.data(Spec::weight),
            static_cast<const float*>(a.data(Spec::mean)),
            static_cast<const float*>(a.data(Spec::rstd)),
            a.size("B") * a.size("T"),
            a.size("C"),
            p,
            opt.overwrite_dinp};
  }

  static void add_options(CLI::App& app, Options& opt) {
    add_sizes(app, opt, "channels");
    add_selection_options<Description>(app, opt);
    add_overwrite(app, "--overwrite-dinp", opt.overwrite_dinp, "dinp =",
                  "not llm.c's: its layernorm backward adds to dinp, the residual stream's "
                  "gradient");
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::layernorm_backward
