#include <ops/gelu_backward/reference/reference.hpp>
#include <ops/matmul_backward/reference/reference.hpp>  // gelu_grad in double

#include <stdexcept>
#include <string>

namespace llmk::reference::gelu {

std::vector<double> reference_backward(const HostProblem& p, bool overwrite_dinp) {
  const std::size_t N = std::size_t(p.shape.N());
  for (const std::vector<float>* v : {&p.dout, &p.inp, &p.dinp})
    if (v->size() != N)
      throw std::invalid_argument("llmk::reference::gelu: an array has " +
                                  std::to_string(v->size()) + " elements, expected N = " +
                                  std::to_string(N));
  std::vector<double> dinp(N);
  for (std::size_t i = 0; i < N; ++i) {
    const double term = llmk::reference::gelu_grad(double(p.inp[i])) * double(p.dout[i]);
    dinp[i] = overwrite_dinp ? term : double(p.dinp[i]) + term;
  }
  return dinp;
}

double tolerance(Precision precision) {
  if (precision != Precision::fp32 && precision != Precision::bf16)
    throw std::invalid_argument(std::string("llmk::reference::gelu: ") +
                                precision_name(precision) + " is not a precision of gelu_backward");
  return precision == Precision::bf16 ? kBf16Tolerance : kFloat32Tolerance;
}

}  // namespace llmk::reference::gelu
