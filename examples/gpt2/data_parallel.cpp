#include "data_parallel.hpp"

#include <stdexcept>

namespace gpt2 {

namespace {

// Rows [first, first + count) of every block of `rows` rows of `width`
// elements: the batch dimension of a (blocks, B, ...) tensor.
template <class V>
std::vector<V> rows_of(const std::vector<V>& all, index_t blocks, index_t rows, index_t width,
                       index_t first, index_t count) {
  std::vector<V> out;
  out.reserve(std::size_t(blocks * count * width));
  for (index_t b = 0; b < blocks; ++b) {
    const auto start = all.begin() + (b * rows + first) * width;
    out.insert(out.end(), start, start + count * width);
  }
  return out;
}

Config local_config(const Config& global, int ranks) {
  if (ranks < 1 || global.B % ranks != 0) {
    throw std::invalid_argument("data parallel: B = " + std::to_string(global.B) +
                                " is not a multiple of the " + std::to_string(ranks) + " ranks");
  }
  Config c = global;
  c.B = global.B / ranks;
  return c;
}

}  // namespace

HostInputs batch_slice(const HostInputs& global, int rank, int ranks) {
  const Config& g = global.cfg;
  HostInputs local;
  local.cfg = local_config(g, ranks);
  if (ranks == 1) return global;
  const index_t b = local.cfg.B, first = b * rank;
  for (const TensorSpec& s : parameter_specs(g)) local.tensors[s.name] = global.tensors.at(s.name);
  // An activation's batch dimension is the one its local shape changes:
  // (B, ...) or (L, B, ...). Both variants' lists: att or lse is present.
  for (const bool materialized : {true, false}) {
    const auto globals = activation_specs(g, materialized);
    const auto locals = activation_specs(local.cfg, materialized);
    for (std::size_t i = 0; i < globals.size(); ++i) {
      const auto found = global.tensors.find(globals[i].name);
      if (found == global.tensors.end() || local.tensors.count(globals[i].name)) continue;
      const std::vector<index_t>& shape = globals[i].shape;
      std::size_t dim = 0;
      while (shape[dim] == locals[i].shape[dim]) ++dim;
      index_t blocks = 1, width = 1;
      for (std::size_t d = 0; d < dim; ++d) blocks *= shape[d];
      for (std::size_t d = dim + 1; d < shape.size(); ++d) width *= shape[d];
      local.tensors[globals[i].name] = rows_of(found->second, blocks, g.B, width, first, b);
    }
  }
  local.tokens = rows_of(global.tokens, 1, g.B, g.T, first, b);
  local.targets = rows_of(global.targets, 1, g.B, g.T, first, b);
  return local;
}

Doubles reference_slice(const Doubles& global, const Config& cfg, int rank, int ranks) {
  const index_t b = local_config(cfg, ranks).B;
  Doubles local = global;
  local["grad.encoded"] = rows_of(global.at("grad.encoded"), 1, cfg.B, cfg.T * cfg.C, b * rank, b);
  return local;
}

std::vector<double> losses_slice(const std::vector<double>& global, const Config& cfg, int rank,
                                 int ranks) {
  const index_t b = local_config(cfg, ranks).B;
  return rows_of(global, 1, cfg.B, cfg.T, b * rank, b);
}

}  // namespace gpt2
