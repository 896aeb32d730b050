// The encoder forward in llmk-perf (`llmk-perf encoder_forward`): out =
// wte[tokens] + wpe at the encoder backward's sizes (B, T, C, V and its
// token draws), out overwritten (llm.c's) or accumulated; per precision, one
// row per llmk implementation and peer:copy, a device copy of as many bytes
// as the call moves. Memory-bound: rows report GB/s (a row of wte and of wpe
// read and a row of out written per position, and the tokens).
#include "../harness/op_benchmark.hpp"

#include <llmk/encoder_forward.hpp>
#include <ops/encoder_forward/reference.hpp>
#include <ops/encoder_forward/spec.hpp>

namespace llmk::perf::encoder_forward {
namespace {

namespace ref = reference::encoder_forward;

constexpr std::uint32_t kSeed = 2024;

struct Options {
  // GPT-2 124M (C 768, V 50257) at llm.c's training batch.
  std::int64_t B = 8, T = 1024, C = 768, V = 50257;
  std::string impls = "all";        // "all", or a comma list of implementation names / "auto"
  std::string precisions = "fp32";  // "all", or a comma list: fp32, bf16
  bool accumulate_out = false;      // Update::accumulate on out (default =, as llm.c)
  bool zipf = false;                // tokens P(v) ∝ 1/(v + 1); default uniform in [0, V)
  bool no_token_check = false;      // options.check_tokens = false
};

struct PeerArgs {};  // no peer of its own but peer:copy
using Peer = perf::Peer<PeerArgs>;

struct Description {
  using Tag = EncoderForward;
  using Spec = op::encoder_forward::Spec;
  using Options = encoder_forward::Options;
  static constexpr const char* help =
      "GPT-2's token and position embeddings (out = wte[tokens] + wpe)";
  using CallOptions = EncoderForwardOptions;
  using Shape = reference::encoder::Shape;
  using Problem = ref::HostProblem;
  using Peer = encoder_forward::Peer;
  static constexpr const char* title = "encoder forward";
  static constexpr const char* unit = "sequence";

  static Shape shape(const Options& opt) {
    check_product({opt.B, opt.T, opt.C}, "B·T·C");
    check_product({opt.V, opt.C}, "V·C");
    if (opt.V > std::numeric_limits<int>::max())
      throw std::invalid_argument("--V: tokens are int32, V must be at most 2^31 - 1");
    const auto tokens = opt.zipf ? reference::encoder::Tokens::zipf
                                 : reference::encoder::Tokens::uniform;
    return {"perf", opt.B, opt.T, opt.C, opt.V, tokens};
  }
  static core::op::SymbolSizes sizes(const Shape& s) {
    return {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"V", s.V}};
  }
  static std::int64_t units(const Shape& s) { return s.B; }
  static core::op::SymbolSizes part(const core::op::SymbolSizes& s, std::int64_t sequences) {
    return s.with("B", sequences);
  }
  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string& sizes) {
    suite.params = {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"V", s.V}};
    suite.derived = "M=" + std::to_string(s.M()) + ", " + (opt.zipf ? "zipf" : "uniform");
    suite.flags = {{"accumulate_out", opt.accumulate_out},
                   {"zipf_tokens", opt.zipf},
                   {"no_token_check", opt.no_token_check}};
    suite.notes.push_back(
        std::string("out ") + (opt.accumulate_out ? "accumulated (+=)" : "overwritten (=)") +
        "; tokens " +
        (opt.no_token_check ? "not checked" : "checked on the device, the host waiting for it") +
        "; error: relative L2 against the float64 reference");
    suite.notes.push_back("GB/s: the tokens, a row of wte and of wpe read and a row of out " +
                          std::string(opt.accumulate_out ? "read and written" : "written") +
                          " per position, per second: " + sizes);
  }
  static double bytes(const Shape& s, reference::Precision p, const Options& opt) {
    return ref::bytes(s, p, !opt.accumulate_out);
  }

  static Problem make(const Shape& s, reference::Precision p, const Options&) {
    return ref::make_problem(s, kSeed, p);
  }
  static const std::vector<float>& values(const Problem& in, std::size_t i) {
    return i == Spec::out ? in.out : i == Spec::wte ? in.wte : in.wpe;
  }
  static const std::vector<std::int32_t>& int_values(const Problem& in, std::size_t) {
    return in.tokens;
  }
  static std::vector<std::vector<double>> expected(const Problem& in, const Options& opt, int) {
    return {ref::reference_forward(in, !opt.accumulate_out)};
  }
  static double tolerance(reference::Precision p, std::size_t) { return ref::tolerance(p); }
  static std::vector<bool> overwrites(const Options& opt) { return {!opt.accumulate_out}; }

  static CallOptions call_options(const std::string& impl, const Options& opt) {
    CallOptions options;
    options.impl = impl;
    if (opt.accumulate_out) options.out_update = Update::accumulate;
    options.check_tokens = !opt.no_token_check;
    return options;
  }
  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& options) {
    llmk::encoder_forward(ctx, a.out(Spec::out), a.ints(Spec::tokens), a.in(Spec::wte),
                          a.in(Spec::wpe), a.size("B"), a.size("T"), a.size("C"), a.size("V"),
                          options);
  }
  static std::vector<Peer> peers(const std::string&, const Options&) { return {}; }
  template <class S>
  static PeerArgs peer_args(const OpArrays<S, Spec>&, const std::string&, const Options&) {
    return {};
  }

  static void add_options(CLI::App& app, Options& opt) {
    add_size(app, "--B", opt.B, "batch size");
    add_size(app, "--T", opt.T, "sequence length");
    add_size(app, "--C", opt.C, "channels");
    add_size(app, "--V", opt.V, "vocabulary: wte's rows (GPT-2: 50257, not padded)", 1);
    add_selection_options<Description>(app, opt);
    app.add_flag("--accumulate-out", opt.accumulate_out,
                 "out += wte[tokens] + wpe instead of = (Update::accumulate)");
    app.add_flag("--zipf", opt.zipf,
                 "tokens drawn P(v) ∝ 1/(v + 1), as text's (the PyTorch peer's tokens; needed "
                 "to --import its records); default uniform in [0, V)");
    app.add_flag("--no-token-check", opt.no_token_check,
                 "options.check_tokens = false: no check of the tokens (and no wait for it)");
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::encoder_forward
