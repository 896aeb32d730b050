// The classifier operations' sizes in llmk-perf (classifier_backward,
// classifier_forward): B × T rows of Vp logits, V of them real (GPT-2 at
// llm.c's training batch by default), the probes' parts a number of rows.
#pragma once

#include "../harness/op_benchmark.hpp"

#include <ops/classifier_backward/reference/reference.hpp>

#include <stdexcept>

namespace llmk::perf::classifier {

struct Sizes {
  std::int64_t B = 8, T = 1024, V = 50257, Vp = 50304;
};

struct Rows {
  using Shape = reference::classifier::Shape;
  static constexpr const char* unit = "row";

  static Shape shape(const Sizes& opt) {
    check_product({opt.B, opt.T, opt.Vp}, "B·T·Vp");
    if (opt.V > opt.Vp) throw std::invalid_argument("--V must be at most --Vp");
    return {"perf", opt.B, opt.T, opt.V, opt.Vp};
  }
  static core::op::SymbolSizes sizes(const Shape& s) {
    return {{"B", s.B}, {"T", s.T}, {"V", s.V}, {"Vp", s.Vp}};
  }
  static std::int64_t units(const Shape& s) { return s.M(); }
  static core::op::SymbolSizes part(const core::op::SymbolSizes& s, std::int64_t rows) {
    return s.with("B", 1).with("T", rows);
  }
  static void add_sizes(CLI::App& app, Sizes& opt) {
    add_size(app, "--B", opt.B, "batch size");
    add_size(app, "--T", opt.T, "sequence length");
    add_size(app, "--V", opt.V, "vocabulary (the real columns)", 1);
    add_size(app, "--Vp", opt.Vp, "padded vocabulary (the logits' rows)", 1);
  }
};

}  // namespace llmk::perf::classifier
