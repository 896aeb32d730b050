#include "compare.hpp"

#include <algorithm>
#include <cmath>

namespace gpt2 {

double relative_l2(const std::vector<double>& got, const std::vector<double>& want) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

std::vector<Comparison> compare_gradients(const Config& cfg, const Doubles& got,
                                          const Doubles& want, double tolerance) {
  return compare_tensors(gradient_specs(cfg), got, want, tolerance);
}

std::vector<Comparison> compare_tensors(const std::vector<TensorSpec>& specs, const Doubles& got,
                                        const Doubles& want, double tolerance) {
  std::vector<Comparison> rows;
  for (const TensorSpec& s : specs) {
    Comparison r;
    r.name = s.name;
    const auto g = got.find(s.name), w = want.find(s.name);
    if (g == got.end() || w == want.end() || g->second.size() != w->second.size() ||
        index_t(w->second.size()) != s.size()) {
      r.rel_l2 = INFINITY;
      rows.push_back(r);
      continue;
    }
    double norm = 0;
    for (std::size_t i = 0; i < w->second.size(); ++i) {
      norm += w->second[i] * w->second[i];
      r.max_abs = std::max(r.max_abs, std::abs(g->second[i] - w->second[i]));
    }
    r.ref_norm = std::sqrt(norm);
    r.rel_l2 = relative_l2(g->second, w->second);
    r.pass = r.rel_l2 <= tolerance;  // NaN fails
    rows.push_back(r);
  }
  return rows;
}

bool print_comparisons(std::FILE* out, const std::vector<Comparison>& rows, double tolerance,
                       const char* what) {
  std::fprintf(out, "%-16s %12s %12s %12s  %s (tolerance %.1e)\n", what, "|ref|_2",
               "rel L2", "max |diff|", "result", tolerance);
  bool all = true;
  for (const Comparison& r : rows) {
    std::fprintf(out, "%-16s %12.4e %12.4e %12.4e  %s\n", r.name.c_str(), r.ref_norm, r.rel_l2,
                 r.max_abs, r.pass ? "ok" : "FAIL");
    all = all && r.pass;
  }
  return all;
}

}  // namespace gpt2
