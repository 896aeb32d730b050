// The encoder backward in llmk-perf (`llmk-perf encoder_backward`): its
// options (B, T, C, V, the implementations and precisions to time, dwte and
// dwpe overwritten, the tokens' distribution) and its run: per precision,
// one row per llmk implementation, then the peers (peers.hpp): peer:copy, a
// device copy of as many bytes as the call moves (the ceiling every row's
// "% copy" compares with), on Cuda peer:llmc-atomics, llm.c's simple kernel
// of float atomics (not deterministic). Each that computes something is
// validated against llmk_encoder_backward_reference before it is timed.
// Memory-bound: rows report GB/s (Shape::bytes: dout and the tokens read,
// dwpe and the touched rows of dwte written, and read when accumulated).
#include "../harness/op_benchmark.hpp"
#include "peers.hpp"
#include "sizes.hpp"

#include <llmk/encoder_backward.hpp>
#include <ops/encoder_backward/reference/reference.hpp>
#include <ops/encoder_backward/spec.hpp>

namespace llmk::perf::encoder_backward {
namespace {

namespace ref = reference::encoder;

constexpr std::uint32_t kSeed = 2024;

struct Options : EncoderSizes {
  bool overwrite = false;  // Update::overwrite on dwte and dwpe (default +=)
};

struct Description : EncoderRows {
  using Tag = EncoderBackward;
  using Spec = op::encoder_backward::Spec;
  using Options = encoder_backward::Options;
  static constexpr const char* help =
      "the backward pass of GPT-2's token and position embeddings (dwte, dwpe, given dout and the "
      "tokens)";
  using CallOptions = EncoderBackwardOptions;
  using Problem = ref::HostProblem;
  using Peer = encoder_backward::Peer;
  static constexpr const char* title = "encoder backward";

  // The distinct tokens (the rows of dwte an accumulating call touches): the
  // tokens come from their own random stream, so a problem with no channels
  // draws the same ones without the M·C and V·C arrays.
  static std::int64_t distinct_tokens(Shape s) {
    if (s.V == 0) return 0;
    s.C = 0;
    return ref::distinct_tokens(ref::make_problem(s, kSeed));
  }
  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string& sizes) {
    params(suite, s);
    suite.derived = "M=" + std::to_string(s.M()) + ", " + std::to_string(distinct_tokens(s)) +
                    " distinct tokens, " + (opt.zipf ? "zipf" : "uniform");
    suite.flags = {{"overwrite", opt.overwrite},
                   {"zipf_tokens", opt.zipf},
                   {"no_token_check", opt.no_token_check}};
    suite.notes.push_back(
        std::string("tokens ") +
        (opt.zipf ? "drawn P(v) ∝ 1/(v + 1) (as text's, and the PyTorch peer's)"
                  : "uniform in [0, V)") +
        ", seed " + std::to_string(kSeed) + "; dwte and dwpe " +
        (opt.overwrite ? "overwritten (=)" : "accumulated (+=)") + "; tokens " +
        tokens_note(opt) + "; error: relative L2 against the float64 reference");
    suite.notes.push_back(
        "GB/s: dout and the tokens read once, " +
        std::string(opt.overwrite ? "all V rows of dwte and dwpe's T rows written"
                                  : "the distinct tokens' rows of dwte and dwpe's T rows read "
                                    "and written") +
        ", per second: " + sizes);
  }
  static double bytes(const Shape& s, reference::Precision p, const Options& opt) {
    return s.bytes(p, opt.overwrite, distinct_tokens(s));
  }

  static Problem make(const Shape& s, reference::Precision p, const Options&) {
    return ref::make_problem(s, kSeed, p);
  }
  static const std::vector<float>& values(const Problem& in, std::size_t i) {
    return i == Spec::dwte ? in.dwte : i == Spec::dwpe ? in.dwpe : in.dout;
  }
  static const std::vector<std::int32_t>& int_values(const Problem& in, std::size_t) {
    return in.tokens;
  }
  static std::vector<std::vector<double>> expected(const Problem& in, const Options& opt, int) {
    ref::Gradients64 g = ref::reference_backward(in, opt.overwrite, opt.overwrite);
    return {std::move(g.dwte), std::move(g.dwpe)};
  }
  // Both outputs bf16 in bf16 only (bf16-fp32grad: float gradients).
  static double tolerance(reference::Precision p, std::size_t) {
    return ref::tolerance(p, p == reference::Precision::bf16);
  }
  static std::vector<bool> overwrites(const Options& opt) { return {opt.overwrite, opt.overwrite}; }

  static CallOptions call_options(const std::string& impl, const Options& opt) {
    CallOptions options;
    options.impl = impl;
    if (opt.overwrite) options.dwte_update = options.dwpe_update = Update::overwrite;
    options.check_tokens = !opt.no_token_check;
    return options;
  }
  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& options) {
    llmk::encoder_backward(ctx, a.out(Spec::dwte), a.out(Spec::dwpe), a.in(Spec::dout),
                           a.ints(Spec::tokens), a.size("B"), a.size("T"), a.size("C"),
                           a.size("V"), options);
  }
  static std::vector<Peer> peers(const std::string& backend, const Options&) {
    return peers_on(llmc_peers(), backend);
  }
  template <class S>
  static PeerArgs peer_args(const OpArrays<S, Spec>& a, const std::string& p, const Options& opt) {
    return {a.data(Spec::dwte), a.data(Spec::dwpe), a.data(Spec::dout), a.ints(Spec::tokens),
            a.size("B"),        a.size("T"),        a.size("C"),        a.size("V"),
            p,                  opt.overwrite};
  }

  static void add_options(CLI::App& app, Options& opt) {
    add_sizes(app, opt, "dwte");
    add_selection_options<Description>(app, opt);
    add_overwrite(app, "--overwrite", opt.overwrite,
                  "dwte = and dwpe =", "an absent token's row of dwte becomes zeros");
    add_token_options(app, opt);
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::encoder_backward
