// An operation's implementations as llmk-perf selects them: the registry's
// entries (a std::vector of llmk::ImplInfo or of a type derived from it, as
// each operation's *_impls() returns) and, per Kokkos backend of this build,
// which of them run there. --impl takes a comma list of their names, "auto",
// or "all" (every one available on --backend); its help lists them per
// backend. Nothing here knows an operation: the registry and its
// availability test come from the operation's benchmark.
#pragma once

#include <llmk/operation.hpp>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <string>
#include <utility>
#include <vector>

namespace llmk::perf {

// The non-empty parts of s between separators.
std::vector<std::string> split(const std::string& s, char sep);
// "a, b, c"
std::string join(const std::vector<std::string>& names);

// "all", or a comma list of names from `known`: those named, in known's
// order, each once. The names must have been validated (list_validator).
std::vector<std::string> select_names(const std::string& list, const std::vector<std::string>& known);
// Accepts "all" or a non-empty comma list of `known` names; otherwise says
// "'x' is not a <what> (a, b, all)" or "no <what> named".
CLI::Validator list_validator(const std::vector<std::string>& known, const std::string& what,
                              const std::string& type_name);

// An execution space as a type, for the availability test of an operation
// (Kokkos need not be initialized: nothing is constructed).
template <class ExecSpace>
struct SpaceTag {
  using type = ExecSpace;
};

class Implementations {
 public:
  // available(SpaceTag<ExecSpace>{}, name) -> bool: whether `name` ("auto"
  // too) runs on ExecSpace, e.g. llmk::available<llmk::MatmulBackward, ExecSpace>.
  // Asked once per backend of this build and name, here.
  template <class Info, class Available>
  Implementations(const std::vector<Info>& registry, Available&& available) {
    for (const Info& info : registry) infos_.push_back(info);  // the ImplInfo part
#ifdef KOKKOS_ENABLE_SERIAL
    add_backend<Kokkos::Serial>("serial", available);
#endif
#ifdef KOKKOS_ENABLE_OPENMP
    add_backend<Kokkos::OpenMP>("openmp", available);
#endif
#ifdef KOKKOS_ENABLE_CUDA
    add_backend<Kokkos::Cuda>("cuda", available);
#endif
  }

  const std::vector<ImplInfo>& infos() const { return infos_; }
  // The registry's entry of `name` (std::logic_error if there is none).
  const ImplInfo& info(const std::string& name) const;
  // An implementation's name or "auto".
  bool known(const std::string& name) const;
  // Those available on a backend (ExecSpace::name(), e.g. "OpenMP"), in the registry's order.
  std::vector<std::string> available(const std::string& space) const;
  bool available(const std::string& space, const std::string& name) const;

  // "on serial, openmp: kokkoskernels, tiled, team, naive; on cuda: cublas, ...":
  // backends with the same list share a group.
  std::string by_backend() const;
  // Those in no backend of this build ("name (not compiled)" when its
  // library was not found).
  std::vector<std::string> elsewhere() const;
  // --impl's help and validator.
  std::string option_help() const;
  CLI::Validator validator() const;

  // --impl's value on a backend: "all" (those available there), or the
  // names listed, each once, in the list's order. std::invalid_argument for a
  // name not available there.
  std::vector<std::string> select(const std::string& list, const std::string& space) const;

 private:
  struct Backend {
    std::string space;  // ExecSpace::name()
    std::string flag;   // as --backend takes it
    std::vector<std::string> names;  // available there, in the registry's order
    bool auto_available = false;
  };

  template <class ExecSpace, class Available>
  void add_backend(const char* flag, Available& available) {
    Backend b{ExecSpace::name(), flag, {}, bool(available(SpaceTag<ExecSpace>{}, std::string("auto")))};
    for (const ImplInfo& info : infos_)
      if (available(SpaceTag<ExecSpace>{}, info.name)) b.names.push_back(info.name);
    backends_.push_back(std::move(b));
  }
  const Backend* backend(const std::string& space) const;

  std::vector<ImplInfo> infos_;
  std::vector<Backend> backends_;
};

}  // namespace llmk::perf
