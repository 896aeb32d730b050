#include "inputs.hpp"

#include <random>

namespace llmk::perf {
namespace {

std::vector<float> uniform(std::mt19937& rng, index_t n) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace

HostInputs make_inputs(const Shape& s, unsigned seed) {
  std::mt19937 rng(seed);
  HostInputs in;
  in.shape = s;
  in.dout = uniform(rng, s.M() * s.OC);
  in.inp = uniform(rng, s.M() * s.C);
  in.weight = uniform(rng, s.OC * s.C);
  in.dinp0 = uniform(rng, s.M() * s.C);
  in.dweight0 = uniform(rng, s.OC * s.C);
  in.dbias0 = uniform(rng, s.OC);
  return in;
}

}  // namespace llmk::perf
