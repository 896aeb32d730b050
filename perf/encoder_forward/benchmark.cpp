// The encoder forward in llmk-perf (`llmk-perf encoder_forward`): out =
// wte[tokens] + wpe at the encoder backward's sizes (B, T, C, V and its
// token draws), out overwritten (llm.c's) or accumulated; per precision, one
// row per llmk implementation and peer:copy, a device copy of as many bytes
// as the call moves. Memory-bound: rows report GB/s (a row of wte and of wpe
// read and a row of out written per position, and the tokens).
#include "../encoder_backward/sizes.hpp"
#include "../harness/out_update.hpp"

#include <llmk/encoder_forward.hpp>
#include <ops/encoder_forward/reference.hpp>
#include <ops/encoder_forward/spec.hpp>

namespace llmk::perf::encoder_forward {
namespace {

namespace ref = reference::encoder_forward;

constexpr std::uint32_t kSeed = 2024;

struct Options : EncoderSizes, OutUpdateOption {};

struct Description : EncoderRows, OutUpdate<EncoderForwardOptions>, NoPeers {
  using Tag = EncoderForward;
  using Spec = op::encoder_forward::Spec;
  using Options = encoder_forward::Options;
  static constexpr const char* help =
      "GPT-2's token and position embeddings (out = wte[tokens] + wpe)";
  using CallOptions = EncoderForwardOptions;
  using Problem = ref::HostProblem;
  static constexpr const char* title = "encoder forward";

  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string& sizes) {
    params(suite, s);
    suite.derived = "M=" + std::to_string(s.M()) + ", " + (opt.zipf ? "zipf" : "uniform");
    suite.flags = {{"accumulate_out", opt.accumulate_out},
                   {"zipf_tokens", opt.zipf},
                   {"no_token_check", opt.no_token_check}};
    suite.notes.push_back(out_text(opt) + "; tokens " + tokens_note(opt) +
                          "; error: relative L2 against the float64 reference");
    suite.notes.push_back("GB/s: the tokens, a row of wte and of wpe read and a row of out " +
                          out_bytes_text(opt) + " per position, per second: " + sizes);
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
  static CallOptions call_options(const std::string& impl, const Options& opt) {
    CallOptions options = OutUpdate::call_options(impl, opt);
    options.check_tokens = !opt.no_token_check;
    return options;
  }
  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& options) {
    llmk::encoder_forward(ctx, a.out(Spec::out), a.ints(Spec::tokens), a.in(Spec::wte),
                          a.in(Spec::wpe), a.size("B"), a.size("T"), a.size("C"), a.size("V"),
                          options);
  }

  static void add_options(CLI::App& app, Options& opt) {
    add_sizes(app, opt, "wte");
    add_selection_options<Description>(app, opt);
    add_out_update(app, opt, "wte[tokens] + wpe");
    add_token_options(app, opt);
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::encoder_forward
