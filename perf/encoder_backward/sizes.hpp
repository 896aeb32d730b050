// What llmk-perf's two encoder operations share (encoder_backward and
// encoder_forward): their sizes (B, T, C, V), the tokens' draw and check
// options, and their rows (the probes' parts: whole sequences), as a base of
// their descriptions (harness/op_benchmark.hpp).
#pragma once

#include "../harness/op_benchmark.hpp"

#include <ops/encoder_backward/reference/reference.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace llmk::perf {

struct EncoderSizes {
  // GPT-2 124M (C 768, V 50257) at llm.c's training batch.
  std::int64_t B = 8, T = 1024, C = 768, V = 50257;
  std::string impls = "all";        // "all", or a comma list of implementation names / "auto"
  std::string precisions = "fp32";  // "all", or a comma list of precisions
  // Tokens drawn P(v) ∝ 1/(v + 1), as text's are (and the PyTorch peer's);
  // default uniform in [0, V). Both from a fixed seed.
  bool zipf = false;
  bool no_token_check = false;  // options.check_tokens = false
};

struct EncoderRows {
  using Shape = reference::encoder::Shape;
  static constexpr const char* unit = "sequence";

  static Shape shape(const EncoderSizes& opt) {
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
  static void params(Suite& suite, const Shape& s) {
    suite.params = {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"V", s.V}};
  }
  static std::string tokens_note(const EncoderSizes& opt) {
    return opt.no_token_check ? "not checked (no wait for the device)"
                              : "checked on the device, the host waiting for it";
  }

  // --B --T --C --V; `vocabulary` says which array's rows V counts.
  static void add_sizes(CLI::App& app, EncoderSizes& opt, const std::string& vocabulary) {
    add_size(app, "--B", opt.B, "batch size");
    add_size(app, "--T", opt.T, "sequence length");
    add_size(app, "--C", opt.C, "channels");
    add_size(app, "--V", opt.V, "vocabulary: " + vocabulary + "'s rows (GPT-2: 50257, not padded)",
             1);
  }
  static void add_token_options(CLI::App& app, EncoderSizes& opt) {
    app.add_flag("--zipf", opt.zipf,
                 "tokens drawn P(v) ∝ 1/(v + 1), a few long buckets as text has (the PyTorch "
                 "peer's tokens; needed to --import its records); default uniform in [0, V)");
    app.add_flag("--no-token-check", opt.no_token_check,
                 "options.check_tokens = false: no check of the tokens (and no wait for it)");
  }
};

}  // namespace llmk::perf
