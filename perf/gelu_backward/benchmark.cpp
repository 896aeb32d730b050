// The GELU backward described to llmk-perf's shared subcommand
// (harness/op_benchmark.hpp).
#include "benchmark.hpp"

#include "../harness/op_benchmark.hpp"
#include "peers.hpp"

#include <llmk/gelu_backward.hpp>
#include <ops/gelu_backward/reference/problem.hpp>
#include <ops/gelu_backward/reference/reference.hpp>
#include <ops/gelu_backward/spec.hpp>

namespace llmk::perf::gelu_backward {
namespace {

namespace ref = reference::gelu;

struct Description {
  using Tag = GeluBackward;
  using Spec = op::gelu_backward::Spec;
  using Options = gelu_backward::Options;
  using CallOptions = GeluBackwardOptions;
  using Shape = ref::Shape;
  using Problem = ref::HostProblem;
  using Peer = gelu_backward::Peer;
  static constexpr const char* title = "gelu backward";
  static constexpr const char* unit = "row";

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
  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string& sizes) {
    suite.params = {{"B", s.B}, {"T", s.T}, {"C", s.C}};
    suite.derived = "N=" + std::to_string(s.N());
    suite.flags = {{"overwrite_dinp", opt.overwrite_dinp}};
    suite.notes.push_back(std::string("dinp ") +
                          (opt.overwrite_dinp ? "overwritten (=)" : "accumulated (+=)") +
                          "; error: relative L2 against the float64 reference");
    suite.notes.push_back("GB/s: dout, inp read, dinp " +
                          std::string(opt.overwrite_dinp ? "written" : "read and written") +
                          ", per second: " + sizes);
  }
  static double bytes(const Shape& s, reference::Precision p, const Options& opt) {
    return s.bytes(p, opt.overwrite_dinp);
  }

  static Problem make(const Shape& s, reference::Precision p, const Options&) {
    return ref::make_problem(s, 2024, p);
  }
  static const std::vector<float>& values(const Problem& in, std::size_t i) {
    return i == Spec::dinp ? in.dinp : i == Spec::dout ? in.dout : in.inp;
  }
  static std::vector<std::vector<double>> expected(const Problem& in, const Options& opt, int) {
    return {ref::reference_backward(in, opt.overwrite_dinp)};
  }
  static double tolerance(reference::Precision p, std::size_t) { return ref::tolerance(p); }
  static std::vector<bool> overwrites(const Options& opt) { return {opt.overwrite_dinp}; }

  static CallOptions call_options(const std::string& impl, const Options& opt) {
    CallOptions options;
    options.impl = impl;
    if (opt.overwrite_dinp) options.dinp_update = Update::overwrite;
    return options;
  }
  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& options) {
    llmk::gelu_backward(ctx, a.out(Spec::dinp), a.in(Spec::dout), a.in(Spec::inp),
                        a.elements(Spec::dinp), options);
  }
  static std::vector<Peer> peers(const std::string& backend, const Options&) {
    return peers_on(llmc_peers(), backend);
  }
  template <class S>
  static PeerArgs peer_args(const OpArrays<S, Spec>& a, const std::string& p, const Options& opt) {
    return {a.data(Spec::dinp), a.data(Spec::dout), a.data(Spec::inp), a.elements(Spec::dinp),
            p, opt.overwrite_dinp};
  }
};

}  // namespace

const Implementations& implementations() { return implementations_of<Description>(); }

void add_options(CLI::App& app, Options& opt) {
  const char* zero = " (0: a valid no-op)";
  app.add_option("--B", opt.B, std::string("batch size") + zero)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--T", opt.T, std::string("sequence length") + zero)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--C", opt.C, std::string("channels of GELU's input (GPT-2: 4·C)") + zero)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_selection_options<Description>(app, opt);
  app.add_flag("--overwrite-dinp", opt.overwrite_dinp,
               "dinp = instead of += (Update::overwrite, as llm.c's kernel); its initial values "
               "are NaN, never read");
}

int run(const perf::Options& harness, const Options& opt) {
  return run_op_benchmark<Description>(harness, opt);
}

}  // namespace llmk::perf::gelu_backward
