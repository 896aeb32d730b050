// The matmul backward in llmk-perf (`llmk-perf matmul_backward`, also what
// runs without a subcommand), described to the shared subcommand
// (harness/op_benchmark.hpp): dinp, dweight, dbias of out = inp·weightᵀ + bias
// (GPT-2's fc layer by default, llm.c's dev/cuda/matmul_backward.cu), GELU's
// backward fused into dinp (--gelu) or not, dinp accumulated or overwritten;
// per precision (tf32 too), one row per llmk implementation, then the peers
// (peers.hpp: the seed's CPU loops and OpenBLAS on the host, cuBLAS and llm.c's
// cuBLASLt algorithm on Cuda). Compute-bound: GFLOP/s, no peer:copy; the bias
// pass's GB/s is a stage of each row.
#include "../harness/btc_rows.hpp"
#include "../harness/op_benchmark.hpp"
#include "../harness/out_update.hpp"
#include "peers.hpp"

#include <llmk/matmul_backward.hpp>
#include <ops/matmul_backward/reference/compare.hpp>
#include <ops/matmul_backward/reference/reference.hpp>
#include <ops/matmul_backward/spec.hpp>

#include <cblas.h>

#include <cstdio>

namespace llmk::perf::matmul_backward {
namespace {

// dinp += by default, or = (--overwrite-dinp, llm.c's training).
struct Options : MatmulSizes, DinpUpdateOption {
  bool gelu = false;  // pass pre_gelu: the GELU backward fused into dinp
};

// An implementation's registry entry, with how it computes dbias and GELU's backward.
const MatmulBackwardImplInfo& info_of(const std::string& name) {
  for (const MatmulBackwardImplInfo& info : llmk::impls<MatmulBackward>())
    if (info.name == name) return info;
  throw std::logic_error("llmk-perf: no implementation '" + name + "'");
}

struct Description : MatmulRows<reference::Shape>,
                     DinpUpdate<MatmulBackwardOptions, 3> {
  using Tag = MatmulBackward;
  using Spec = op::matmul_backward::Spec;
  using Options = matmul_backward::Options;
  using CallOptions = MatmulBackwardOptions;
  using Problem = reference::HostProblem;
  using Peer = matmul_backward::Peer;
  static constexpr const char* title = "matmul backward";
  static constexpr const char* help =
      "the backward pass of a linear layer (dinp, dweight, dbias of out = inp·Wᵀ + bias)";
  static constexpr bool tf32 = true;
  static constexpr bool refuse_impls_without_precisions = true;

  static Shape shape(const Options& opt) {
    check_sizes(opt);
    return {"perf", opt.B, opt.T, opt.C, opt.OC, true};
  }
  static std::vector<bool> present(const Options& opt) {
    return {true, true, true, true, true, true, opt.gelu};
  }
  static void header(Suite& suite, const Shape& s, const Options& opt, const std::string&) {
    suite.flops = s.flops();
    params(suite, s, suite.flops);
    suite.stage_columns = {"bias"};
    suite.flags = {{"gelu", opt.gelu}, {"overwrite_dinp", opt.overwrite_dinp}};
    suite.vs_column = true;  // (empty without a comparison peer)
    suite.notes.push_back(
        dinp_text(opt) + ", dweight and dbias accumulated (+=)" +
        (opt.gelu ? "; with the GELU backward: dinp is the gradient of pre_gelu" : "") +
        "; errors: relative L2 of each output against the float64 reference");
    if (s.M() == 0 || s.C == 0 || s.OC == 0)
      suite.notes.push_back("zero-sized problem: every llmk call is a valid no-op" +
                            std::string(s.M() > 0 && s.OC > 0
                                            ? " except dbias += Σ_rows dout (C = 0: no products)"
                                            : "") +
                            "; times are the calls' fixed costs");
  }

  // OpenBLAS threads the float64 reference (its dgemm), the openblas peers
  // and llmk's kokkoskernels on the host: the run's threads, one on Serial.
  static void set_threads(int threads) { openblas_set_num_threads(threads); }
  static Problem make(const Shape& s, reference::Precision p, const Options& opt) {
    return reference::make_problem(s, 2024, {p, opt.gelu});
  }
  static const std::vector<float>& values(const Problem& in, std::size_t i) {
    const std::vector<float>* v[] = {&in.dinp, &in.dweight, &in.dbias,   &in.dout,
                                     &in.inp,  &in.weight,  &in.pre_gelu};
    return *v[i];
  }
  static std::vector<std::vector<double>> expected(const Problem& in, const Options& opt,
                                                   int threads) {
    reference::Gradients64 g = reference::reference_backward(in, reference::Method::Auto, threads,
                                                             {opt.overwrite_dinp, false, false});
    return {std::move(g.dinp), std::move(g.dweight), std::move(g.dbias)};
  }
  static double tolerance(reference::Precision p, std::size_t k) {
    using reference::Output;
    return reference::tolerance(p, k == 0 ? Output::dinp : k == 1 ? Output::dweight : Output::dbias);
  }

  template <class S>
  static void call(Context<S>& ctx, const OpArrays<S, Spec>& a, const CallOptions& options) {
    llmk::matmul_backward(ctx, a.out(Spec::dinp), a.out(Spec::dweight), a.out(Spec::dbias),
                          a.in(Spec::dout), a.in(Spec::inp), a.in(Spec::weight),
                          a.in(Spec::pre_gelu), a.size("B"), a.size("T"), a.size("C"), a.size("OC"),
                          options);
  }

  static std::vector<Peer> peers(const std::string& backend, const Options&) {
    return peers_for(backend);
  }
  static std::string peer_skip(const Peer& peer, const Shape& s, const Options& opt) {
    return peer.why_not(opt.gelu, opt.overwrite_dinp, s.M(), s.C, s.OC);
  }
  template <class S>
  static PeerArgs peer_args(const OpArrays<S, Spec>& a, const std::string& precision,
                            const Options& opt, int threads) {
    return {a.data(Spec::dinp), a.data(Spec::dweight), a.data(Spec::dbias), a.data(Spec::dout),
            a.data(Spec::inp),  a.data(Spec::weight),  a.data(Spec::pre_gelu),
            a.size("B") * a.size("T"), a.size("C"), a.size("OC"), threads, precision,
            opt.overwrite_dinp};
  }
  // (cuBLAS's GEMMs alone compute no dbias.)
  static std::vector<std::string> left_alone(const Peer& peer) {
    return peer.computes_bias ? std::vector<std::string>{} : std::vector<std::string>{"dbias"};
  }

  // The row's bias pass (dbias += Σ_rows dout: its bytes are dout's), also
  // timed alone where it is a kernel of its own; with --gelu, how an
  // implementation runs GELU's backward.
  template <class S>
  static void extend_row(Row& row, const PlannedRow<Peer>& plan, const Env<S>& env,
                         const OpArrays<S, Spec>& a, const Options& opt) {
    const double bytes = double(a.elements(Spec::dout) * a.element_bytes(Spec::dout));
    std::function<void()> alone;
    if (plan.peer) {  // its bias kernel: "fused", one it can run alone, or none (no dbias)
      const Peer& peer = *plan.peer;
      if (peer.bias_only)
        alone = [run = peer.bias_only, args = peer_args(a, row.precision, opt, env.threads)] {
          run(args);
        };
      if (!peer.bias_kernel.empty()) row.stages.push_back({"bias", peer.bias_kernel, bytes, alone});
      return;
    }
    const MatmulBackwardImplInfo& info = info_of(plan.resolved);  // dbias: "fused", or its kernel
    if (info.dbias != "fused") {
      const std::int64_t M = a.size("B") * a.size("T"), OC = a.size("OC");
      alone = [&ctx = env.ctx, dbias = Out<S>(a.out(Spec::dbias), {OC}),
               dout = In<S>(a.in(Spec::dout), {M, OC}), impl = plan.resolved] {
        matmul_backward_bias_pass(ctx, dbias, dout, impl);
      };
    }
    row.stages.push_back({"bias", info.dbias, bytes, alone});
    if (opt.gelu) add_note(row, "GELU backward " + info.gelu);
  }

  static void add_options(CLI::App& app, Options& opt) {
    add_sizes(app, opt);
    add_selection_options<Description>(app, opt);
    app.add_flag("--gelu", opt.gelu,
                 "fuse the GELU backward: pass pre_gelu, dinp becomes the gradient of GELU's "
                 "input (GPT-2's tanh approximation)");
    add_overwrite(app, "--overwrite-dinp", opt.overwrite_dinp, "dinp =", "as llm.c's training");
  }
};

}  // namespace

Subcommand subcommand() { return op_subcommand<Description>(); }

}  // namespace llmk::perf::matmul_backward
