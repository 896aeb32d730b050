#include <llmk/matmul_backward.hpp>

#include <stdexcept>

namespace llmk {

std::string_view impl_name(Impl impl) {
  switch (impl) {
    case Impl::Auto: return "auto";
    case Impl::Naive: return "naive";
    case Impl::Team: return "team";
    case Impl::Tiled: return "tiled";
    case Impl::KokkosKernels: return "kokkoskernels";
    case Impl::Cublas: return "cublas";
    case Impl::CublasLt: return "cublaslt";
  }
  return "unknown";
}

const std::vector<Impl>& all_impls() {
  static const std::vector<Impl> impls{Impl::Naive,         Impl::Team,   Impl::Tiled,
                                       Impl::KokkosKernels, Impl::Cublas, Impl::CublasLt};
  return impls;
}

Impl parse_impl(std::string_view name) {
  if (name == impl_name(Impl::Auto)) return Impl::Auto;
  std::string valid = "auto";
  for (Impl impl : all_impls()) {
    if (name == impl_name(impl)) return impl;
    valid += ", " + std::string(impl_name(impl));
  }
  throw std::invalid_argument("llmk: unknown implementation '" + std::string(name) +
                              "' (expected one of: " + valid + ")");
}

}  // namespace llmk
