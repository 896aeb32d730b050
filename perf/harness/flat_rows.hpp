// What llmk-perf's operations over N values in one flat array share (the
// optimizer's step, the squared norm): their sizes and options (--N,
// --impl, --precision) and their units (the probes time the first n values),
// as a base of their descriptions (op_benchmark.hpp). Shape: AdamW's
// reference shape (ops/adamw/reference.hpp), 1 × N.
#pragma once

#include "op_benchmark.hpp"

#include <ops/adamw/reference.hpp>

#include <cstdint>
#include <string>

namespace llmk::perf {

// GPT-2 124M's parameters, as llm.c counts them (the vocabulary padded to 50304).
struct FlatSizes {
  std::int64_t N = 124475904;
  std::string impls = "all";        // "all", or a comma list of implementation names / "auto"
  std::string precisions = "fp32";  // "all", or a comma list of precisions
};

struct FlatRows {
  using Shape = reference::adamw::Shape;
  static constexpr const char* unit = "value";

  static core::op::SymbolSizes sizes(const Shape& s) { return {{"B", s.A}, {"T", s.B}}; }
  static std::int64_t units(const Shape& s) { return s.N(); }
  static core::op::SymbolSizes part(const core::op::SymbolSizes& s, std::int64_t n) {
    return s.with("B", 1).with("T", n);
  }
  static void add_sizes(CLI::App& app, FlatSizes& opt) {
    add_size(app, "--N", opt.N, "values (GPT-2 124M's parameters: 124475904)");
  }
  static void params(Suite& suite, const Shape& s) { suite.params = {{"N", s.N()}}; }
};

}  // namespace llmk::perf
