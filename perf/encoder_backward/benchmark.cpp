#include "benchmark.hpp"

#include "../harness/copy_peer.hpp"
#include "../harness/driver.hpp"
#include "../harness/planned_rows.hpp"
#include "../harness/reference_io.hpp"
#include "peers.hpp"

#include <llmk/context.hpp>
#include <llmk/encoder_backward.hpp>
#include <ops/encoder_backward/reference/reference.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>

namespace llmk::perf::encoder_backward {
namespace {

namespace ref = reference::encoder;

constexpr std::uint32_t kSeed = 2024;

ref::Shape shape_of(const Options& opt) {
  const index_t max = std::numeric_limits<index_t>::max();
  if ((opt.B > 0 && opt.T > max / opt.B) || (opt.B * opt.T > 0 && opt.C > max / (opt.B * opt.T)))
    throw std::invalid_argument("sizes too large: B·T·C overflows 64 bits");
  if (opt.C > 0 && opt.V > max / opt.C)
    throw std::invalid_argument("sizes too large: V·C overflows 64 bits");
  if (opt.V > std::numeric_limits<int>::max())
    throw std::invalid_argument("--V: tokens are int32, V must be at most 2^31 - 1");
  return {"perf", opt.B, opt.T, opt.C, opt.V, opt.zipf ? ref::Tokens::zipf : ref::Tokens::uniform};
}

// The distinct tokens of the run's problem (the rows of dwte an accumulating
// call touches): the tokens come from their own random stream, so a problem
// with no channels draws the same ones without the M·C and V·C arrays.
std::int64_t distinct_tokens_of(ref::Shape s) {
  if (s.V == 0) return 0;
  s.C = 0;
  return ref::distinct_tokens(ref::make_problem(s, kSeed));
}

// dwte (V, C), dwpe (T, C), dout (B·T·C), tokens (B·T).
template <class ExecSpace, class Act, class Grad>
struct Buffers {
  Matrix<ExecSpace, Grad> dwte, dwpe;
  Kokkos::View<const Act*, Kokkos::LayoutRight, typename ExecSpace::device_type> dout;
  Kokkos::View<const int*, Kokkos::LayoutRight, typename ExecSpace::device_type> tokens;
  index_t B = 0, T = 0, C = 0, V = 0;

  // The first `sequences` of the batch (the probes' smaller problems on the
  // same memory: dwte and dwpe whole).
  Buffers first_sequences(index_t sequences) const {
    Buffers b = *this;
    b.B = sequences;
    b.dout = Kokkos::subview(dout, std::pair<index_t, index_t>(0, sequences * T * C));
    b.tokens = Kokkos::subview(tokens, std::pair<index_t, index_t>(0, sequences * T));
    return b;
  }
  void call(Context<ExecSpace>& ctx, const EncoderBackwardOptions& options) const {
    llmk::encoder_backward(ctx, BufferRef(dwte.data()), BufferRef(dwpe.data()),
                           ConstBufferRef(dout.data()), tokens.data(), B, T, C, V, options);
  }
  PeerArgs peer_args(const std::string& precision, bool overwrite) const {
    return {dwte.data(), dwpe.data(), dout.data(), tokens.data(), B, T, C, V, precision, overwrite};
  }
};

using Planned = PlannedRow<Peer>;

template <class ExecSpace, class Act, class Grad>
bool run_precision(const Env<ExecSpace>& env, const Options& opt, const Suite& suite,
                   reference::Precision p, const std::vector<Planned>& planned,
                   std::vector<Record>& records) {
  const ExecSpace& exec = env.exec;
  Context<ExecSpace>& ctx = env.ctx;
  const ref::Shape s = shape_of(opt);
  const std::string pname = reference::precision_name(p);
  Suite group = suite;
  const bool computes = any_computes(planned);
  std::optional<ref::HostProblem> in;
  std::optional<ref::Gradients64> expected;
  Buffers<ExecSpace, Act, Grad> full;
  full.B = s.B, full.T = s.T, full.C = s.C, full.V = s.V;
  std::vector<Grad> init_dwte, init_dwpe;
  std::int64_t distinct = 0;
  if (computes) {
    auto t0 = std::chrono::steady_clock::now();
    progress(pname + ": inputs ... ", false);
    in = ref::make_problem(s, kSeed, p);
    distinct = ref::distinct_tokens(*in);
    progress(seconds_text(seconds_since(t0)));
    if (env.opt.check) expected = ref::reference_backward(*in, opt.overwrite, opt.overwrite);
    const Vector<ExecSpace, Act> dout("llmk-perf::dout", s.M() * s.C);
    upload(exec, dout, converted<Act>(in->dout));
    const Kokkos::View<int*, Kokkos::LayoutRight, typename ExecSpace::device_type> tokens(
        "llmk-perf::tokens", s.M());
    Kokkos::deep_copy(exec, tokens, HostConst1<int>(in->tokens.data(), std::size_t(s.M())));
    full.dwte = Matrix<ExecSpace, Grad>("llmk-perf::dwte", s.V, s.C);
    full.dwpe = Matrix<ExecSpace, Grad>("llmk-perf::dwpe", s.T, s.C);
    full.dout = dout, full.tokens = tokens;
    // Overwritten gradients start as NaN: a row that reads them, or leaves
    // an absent token's row of dwte unwritten, fails its check.
    const Grad nan = Grad(std::numeric_limits<float>::quiet_NaN());
    init_dwte = opt.overwrite ? std::vector<Grad>(std::size_t(s.V * s.C), nan)
                              : converted<Grad>(in->dwte);
    init_dwpe = opt.overwrite ? std::vector<Grad>(std::size_t(s.T * s.C), nan)
                              : converted<Grad>(in->dwpe);
    exec.fence();  // the uploads' host arrays are freed with `in`
    in.reset();
  } else {
    distinct = distinct_tokens_of(s);
  }
  const double bytes = s.bytes(p, opt.overwrite, distinct);
  auto reset = [&, exec] {
    upload(exec, full.dwte, init_dwte);
    upload(exec, full.dwpe, init_dwpe);
    exec.fence();
  };
  const auto h_dwte = Kokkos::create_mirror_view(full.dwte);
  const auto h_dwpe = Kokkos::create_mirror_view(full.dwpe);
  const bool bf16_grads = p == reference::Precision::bf16;
  auto verify = [&, exec] {
    Kokkos::deep_copy(exec, h_dwte, full.dwte);
    Kokkos::deep_copy(exec, h_dwpe, full.dwpe);
    exec.fence();
    const double tol = ref::tolerance(p, bf16_grads);
    return check_result({compare_output("dwte", h_dwte.data(), expected->dwte, s.C, tol),
                         compare_output("dwpe", h_dwpe.data(), expected->dwpe, s.C, tol)});
  };
  const auto copy = [&, exec] { return copy_row(exec, bytes, s.B, pname); };
  add_planned_rows(group.rows, planned, pname, copy, [&](Row& row, const Planned& plan) {
    row.bytes = bytes;
    row.reset = reset;
    if (expected) row.verify = verify;
    if (!plan.peer) {
      EncoderBackwardOptions options;
      options.impl = plan.impl;
      if (opt.overwrite) options.dwte_update = options.dwpe_update = Update::overwrite;
      options.check_tokens = !opt.no_token_check;
      row.run = [&ctx, b = full, options] { b.call(ctx, options); };
      row.run_part = [&ctx, b = full, options](std::int64_t n) {
        b.first_sequences(n).call(ctx, options);
      };
    } else {
      row.run = [run = plan.peer->run, args = full.peer_args(pname, opt.overwrite)] { run(args); };
      row.run_part = [run = plan.peer->run, b = full, pname, overwrite = opt.overwrite](
                         std::int64_t n) { run(b.first_sequences(n).peer_args(pname, overwrite)); };
    }
  });
  return run_rows(env.opt, exec, env.timer, group, records);
}

class Benchmark {
 public:
  explicit Benchmark(const Options& opt) : opt_(opt) {}

  template <class ExecSpace>
  Suite suite(const perf::Options& hopt) {
    const ref::Shape s = shape_of(opt_);
    const std::string backend = ExecSpace::name();
    impls_ = implementations().select(opt_.impls, backend);
    precisions_ = select_precisions(opt_.precisions, encoder_backward_precisions());
    peers_ = peers_for(backend);
    const std::int64_t distinct = distinct_tokens_of(s);
    Suite suite;
    suite.title = "encoder backward";
    suite.params = {{"B", s.B}, {"T", s.T}, {"C", s.C}, {"V", s.V}};
    suite.derived = "M=" + std::to_string(s.M()) + ", " + std::to_string(distinct) +
                    " distinct tokens, " + (opt_.zipf ? "zipf" : "uniform");
    suite.units = s.B;
    suite.unit_name = "sequence";
    suite.error_columns = {"dwte", "dwpe"};
    suite.flags = {{"overwrite", opt_.overwrite},
                   {"zipf_tokens", opt_.zipf},
                   {"no_token_check", opt_.no_token_check}};
    suite.default_precision = "fp32";
    suite.gflops_column = false;
    suite.gbs_column = true;
    suite.ceiling_label = "copy";
    suite.vs_column = false;
    std::string sizes;
    for (reference::Precision p : precisions_) {
      const std::string name = reference::precision_name(p);
      suite.precisions.push_back(name);
      char mb[64];
      std::snprintf(mb, sizeof mb, "%s %.4g MB", name.c_str(),
                    s.bytes(p, opt_.overwrite, distinct) * 1e-6);
      sizes += (sizes.empty() ? "" : ", ") + std::string(mb);
      if (!hopt.peers) continue;
      suite.ceilings.emplace_back(name, "peer:copy");
      const std::string peer = comparison_peer(backend, name);
      if (!peer.empty()) {
        suite.comparisons.emplace_back(name, "peer:" + peer);
        suite.vs_column = true;
      }
    }
    suite.notes.push_back(
        std::string("tokens ") +
        (opt_.zipf ? "drawn P(v) ∝ 1/(v + 1) (as text's, and the PyTorch peer's)"
                   : "uniform in [0, V)") +
        ", seed " + std::to_string(kSeed) + "; dwte and dwpe " +
        (opt_.overwrite ? "overwritten (=)" : "accumulated (+=)") + "; tokens " +
        (opt_.no_token_check ? "not checked (no wait for the device)"
                             : "checked on the device, the host waiting for it") +
        "; error: relative L2 against the float64 reference");
    suite.notes.push_back(
        "GB/s: dout and the tokens read once, " +
        std::string(opt_.overwrite ? "all V rows of dwte and dwpe's T rows written"
                                   : "the distinct tokens' rows of dwte and dwpe's T rows read "
                                     "and written") +
        ", per second: " + sizes);
    return suite;
  }

  template <class ExecSpace>
  bool run_precision(const Env<ExecSpace>& env, const std::string& name, Suite& suite,
                     std::vector<Record>& records) {
    reference::Precision p;
    if (!reference::parse_precision(name, p))
      throw std::logic_error("llmk-perf: the reference knows no precision '" + name + "'");
    const auto rules = declared_rules<Peer>(implementations(), opt_.impls != "all",
                                            encoder_backward_auto_impl<ExecSpace>);
    const std::vector<Planned> planned =
        plan_rows(name, ExecSpace::name(), impls_, peers_, env.opt.peers, rules);
    return with_types(p, [&](auto types) {
      using Act = typename decltype(types)::Act;
      using Grad = typename decltype(types)::Grad;
      return encoder_backward::run_precision<ExecSpace, Act, Grad>(env, opt_, suite, p, planned,
                                                                   records);
    });
  }

 private:
  const Options& opt_;
  std::vector<std::string> impls_;
  std::vector<reference::Precision> precisions_;
  std::vector<Peer> peers_;
};

}  // namespace

const Implementations& implementations() {
  static const Implementations impls(encoder_backward_impls(), [](auto space, const std::string& name) {
    return encoder_backward_available<typename decltype(space)::type>(name);
  });
  return impls;
}

void add_options(CLI::App& app, Options& opt) {
  const char* zero = " (0: a valid no-op)";
  app.add_option("--B", opt.B, std::string("batch size") + zero)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--T", opt.T, std::string("sequence length") + zero)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--C", opt.C, std::string("channels") + zero)
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--V", opt.V, "vocabulary: dwte's rows (GPT-2: 50257, not padded)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--impl", opt.impls, implementations().option_help())
      ->capture_default_str()
      ->check(implementations().validator());
  app.add_option("--precision", opt.precisions,
                 "comma list of " + join(encoder_backward_precisions()) + ", or 'all'")
      ->capture_default_str()
      ->check(list_validator(encoder_backward_precisions(), "precision", "PRECISIONS"));
  app.add_flag("--overwrite", opt.overwrite,
               "dwte = and dwpe = instead of += (Update::overwrite: an absent token's row of dwte "
               "becomes zeros); their initial values are NaN, never read");
  app.add_flag("--zipf", opt.zipf,
               "tokens drawn P(v) ∝ 1/(v + 1), a few long buckets as text has (the PyTorch peer's "
               "tokens; needed to --import its records); default uniform in [0, V)");
  app.add_flag("--no-token-check", opt.no_token_check,
               "options.check_tokens = false: no check of the tokens (and no wait for it)");
}

int run(const perf::Options& harness, const Options& opt) {
  Benchmark benchmark(opt);
  return perf::run(harness, benchmark);
}

}  // namespace llmk::perf::encoder_backward
