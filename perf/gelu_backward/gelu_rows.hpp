// What llmk-perf's two GELU subcommands (gelu_backward, gelu_forward) share:
// their sizes B, T, C (N = B·T·C elements, M = B·T rows of C), options and
// rows, as a base of their descriptions (harness/op_benchmark.hpp).
#pragma once

#include "../harness/op_benchmark.hpp"

#include <ops/gelu_backward/reference/problem.hpp>

#include <cstdint>

namespace llmk::perf::gelu {

// GPT-2 124M's MLP activations (4C = 3072) at llm.c's training batch.
struct Sizes {
  std::int64_t B = 8, T = 1024, C = 3072;
  std::string impls = "all";        // "all", or a comma list of implementation names / "auto"
  std::string precisions = "fp32";  // "all", or a comma list: fp32, bf16
};

struct Rows {
  using Shape = reference::gelu::Shape;
  static constexpr const char* unit = "row";

  static Shape shape(const Sizes& opt) {
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
  static void add_sizes(CLI::App& app, Sizes& opt) {
    add_size(app, "--B", opt.B, "batch size");
    add_size(app, "--T", opt.T, "sequence length");
    add_size(app, "--C", opt.C, "channels of GELU's input (GPT-2: 4·C)");
  }
  static void params(Suite& suite, const Shape& s) {
    suite.params = {{"B", s.B}, {"T", s.T}, {"C", s.C}};
    suite.derived = "N=" + std::to_string(s.N());
  }
};

}  // namespace llmk::perf::gelu
