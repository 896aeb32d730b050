// What llmk-perf's operations over B × T rows of C share (the GELU's and the
// layer norm's, forward and backward; with OC, the matmuls'; with NH, the
// attentions', by sequence): their sizes and options (--B --T --C, --impl,
// --precision), their rows (the probes' parts: B = 1, T = n), as a base of
// their descriptions (op_benchmark.hpp).
#pragma once

#include "op_benchmark.hpp"

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace llmk::perf {

// llm.c's training batch, B 8 and T 1024, and a row of kC channels.
template <std::int64_t kC>
struct BtcSizes {
  std::int64_t B = 8, T = 1024, C = kC;
  std::string impls = "all";        // "all", or a comma list of implementation names / "auto"
  std::string precisions = "fp32";  // "all", or a comma list of precisions
};

// Shape: the reference's, made as {name, B, T, C}.
template <class ShapeT>
struct BtcRows {
  using Shape = ShapeT;
  static constexpr const char* unit = "row";

  template <class Options>
  static Shape shape(const Options& opt) {
    check_product({opt.B, opt.T, opt.C}, "B·T·C");
    return {"perf", opt.B, opt.T, opt.C};
  }
  static core::op::SymbolSizes sizes(const Shape& s) {
    return {{"B", s.B}, {"T", s.T}, {"C", s.C}};
  }
  static std::int64_t units(const Shape& s) { return s.M(); }
  static core::op::SymbolSizes part(const core::op::SymbolSizes& s, std::int64_t rows) {
    return s.with("B", 1).with("T", rows);
  }
  template <std::int64_t kC>
  static void add_sizes(CLI::App& app, BtcSizes<kC>& opt, const std::string& channels) {
    add_size(app, "--B", opt.B, "batch size");
    add_size(app, "--T", opt.T, "sequence length");
    add_size(app, "--C", opt.C, channels);
  }
  static void params(Suite& suite, const Shape& s) {
    suite.params = {{"B", s.B}, {"T", s.T}, {"C", s.C}};
  }
};

// The matmuls' (a linear layer's forward and backward): B × T rows of C
// into OC, GPT-2's fc layer by default.
struct MatmulSizes : BtcSizes<768> {
  std::int64_t OC = 3072;
};

// Their sizes by symbol, rows and options as BtcRows'; OC besides. Shape:
// the matmul reference's (the description makes it: its bias differs).
template <class ShapeT>
struct MatmulRows {
  using Shape = ShapeT;
  static constexpr const char* unit = "row";

  // Refuses sizes whose element counts overflow (std::invalid_argument).
  static void check_sizes(const MatmulSizes& opt) {
    check_product({opt.B, opt.T}, "B·T");
    check_product({opt.B, opt.T, opt.C}, "B·T·C");
    check_product({opt.B, opt.T, opt.OC}, "B·T·OC");
    check_product({opt.OC, opt.C}, "OC·C");
  }
  static core::op::SymbolSizes sizes(const Shape& s) {
    return {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"OC", s.OC}};
  }
  static std::int64_t units(const Shape& s) { return s.M(); }
  static core::op::SymbolSizes part(const core::op::SymbolSizes& s, std::int64_t rows) {
    return s.with("B", 1).with("T", rows);
  }
  static void add_sizes(CLI::App& app, MatmulSizes& opt) {
    add_size(app, "--B", opt.B, "batch size");
    add_size(app, "--T", opt.T, "sequence length");
    add_size(app, "--C", opt.C, "input channels");
    add_size(app, "--OC", opt.OC, "output channels");
  }
  // params, and "M=…, … GFLOP per call".
  static void params(Suite& suite, const Shape& s, double flops) {
    suite.params = {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"OC", s.OC}};
    char derived[96];
    std::snprintf(derived, sizeof derived, "M=%lld, %.4g GFLOP per call", (long long)s.M(),
                  flops * 1e-9);
    suite.derived = derived;
  }
};

// The attentions' (GPT-2's causal self-attention, forward and backward):
// B sequences of T positions, C channels in NH heads; GPT-2 124M's at llm.c's
// training batch by default.
struct AttentionSizes : BtcSizes<768> {
  std::int64_t NH = 12;
};

// Their shape, sizes by symbol, parts (whole sequences: B = n) and options;
// the causal half's products in the header. Shape: the attention
// reference's, made as {name, B, T, C, NH}.
template <class ShapeT>
struct AttentionRows {
  using Shape = ShapeT;
  static constexpr const char* unit = "sequence";

  // Refuses a C that NH does not divide and sizes whose arrays' bytes
  // overflow (std::invalid_argument): the host problem is made first.
  static Shape shape(const AttentionSizes& opt) {
    if (opt.NH < 1 || opt.C % opt.NH != 0)
      throw std::invalid_argument("--C " + std::to_string(opt.C) + " is not a multiple of --NH " +
                                  std::to_string(opt.NH) + " (at least 1)");
    check_product({opt.B, opt.T, 3, opt.C, 8}, "the bytes of B·T·3C doubles");
    check_product({opt.B, opt.NH, opt.T, opt.T, 8}, "the bytes of B·NH·T·T doubles");
    return {"perf", opt.B, opt.T, opt.C, opt.NH};
  }
  static core::op::SymbolSizes sizes(const Shape& s) {
    return {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"NH", s.NH}};
  }
  static std::int64_t units(const Shape& s) { return s.B; }
  static core::op::SymbolSizes part(const core::op::SymbolSizes& s, std::int64_t sequences) {
    return s.with("B", sequences);
  }
  static void add_sizes(CLI::App& app, AttentionSizes& opt) {
    add_size(app, "--B", opt.B, "batch size");
    add_size(app, "--T", opt.T, "sequence length");
    add_size(app, "--C", opt.C, "channels, a multiple of --NH");
    app.add_option("--NH", opt.NH, "heads (HS = C / NH channels each)")
        ->capture_default_str()
        ->check(perf::count_at_least(1, "heads"));
  }
  // params, "HS=…, … GFLOP per call on the causal half", and the GFLOP/s column.
  static void params(Suite& suite, const Shape& s, double flops) {
    suite.params = {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"NH", s.NH}};
    char derived[96];
    std::snprintf(derived, sizeof derived, "HS=%lld, %.4g GFLOP per call on the causal half",
                  (long long)s.HS(), flops * 1e-9);
    suite.derived = derived;
    suite.flops = flops;
    suite.gflops_column = true;  // (and GB/s, % copy)
  }
};

}  // namespace llmk::perf
