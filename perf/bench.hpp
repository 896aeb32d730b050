// What llmk-perf runs on one backend: the buffers in the backend's memory and
// one Entry (run, probe, fence, bias pass) per llmk implementation or peer.
#pragma once

#include "peers.hpp"

#include <llmk/kernels/bias.hpp>  // internal: to time an implementation's bias pass alone
#include <llmk/matmul_backward.hpp>

#include <functional>
#include <string>

namespace llmk::perf {

// The gradients and the inputs of a run (dinp, dout, inp: M rows).
template <class ExecSpace>
struct Buffers {
  Matrix<ExecSpace> dinp, dweight;
  Vector<ExecSpace> dbias;
  ConstMatrix<ExecSpace> dout, inp, weight;

  // The same buffers cut to their first m rows of activations (a smaller
  // problem on the same memory): the probe that projects a call's time.
  Buffers first_rows(index_t m) const {
    using Device = typename ExecSpace::device_type;
    using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
    using Rows = Kokkos::View<float**, Kokkos::LayoutRight, Device, Unmanaged>;
    using ConstRows = Kokkos::View<const float**, Kokkos::LayoutRight, Device, Unmanaged>;
    return {Matrix<ExecSpace>(Rows(dinp.data(), m, dinp.extent(1))), dweight, dbias,
            ConstMatrix<ExecSpace>(ConstRows(dout.data(), m, dout.extent(1))),
            ConstMatrix<ExecSpace>(ConstRows(inp.data(), m, inp.extent(1))), weight};
  }

  PeerArgs peer_args(int threads) const {
    return {dinp.data(), dweight.data(), dbias.data(), dout.data(), inp.data(), weight.data(),
            index_t(dout.extent(0)), index_t(weight.extent(1)), index_t(weight.extent(0)), threads};
  }
};

// One row of the table: an llmk implementation or a peer.
struct Entry {
  std::string name;
  std::function<void()> run;        // enqueue one backward pass on the full buffers
  std::function<void()> probe;      // the same on the first rows only
  std::function<void()> fence;      // wait for either
  std::function<void()> bias_only;  // the bias pass alone; empty: not measured
  std::string bias_kernel;          // what bias_only runs
  std::string note;                 // shown under the table
  bool computes_bias = true;        // false: the check skips dbias
};

// The dbias kernel each llmk implementation runs (src/llmk/kernels/naive.hpp,
// team.hpp, backends/kokkoskernels, backends/cublas), for the bias GB/s. The
// library has no hook that says so: keep this in step with it. Others are left
// unmeasured (cublaslt fuses dbias into its GEMM epilogue).
template <class ExecSpace>
void set_bias_pass(Entry& e, Impl impl, const ExecSpace& exec, const Buffers<ExecSpace>& b) {
  const auto dbias = b.dbias;
  const auto dout = b.dout;
  if (impl == Impl::Naive) {
    e.bias_only = [=] { kernels::bias_naive(exec, dbias, dout); };
    e.bias_kernel = "llmk::kernels::bias_naive";
  } else if (impl == Impl::Team) {
    e.bias_only = [=] { kernels::bias_team(exec, dbias, dout); };
    e.bias_kernel = "llmk::kernels::bias_team";
  } else if (impl == Impl::KokkosKernels || impl == Impl::Cublas) {
    e.bias_only = [=] { kernels::bias_columns(exec, dbias, dout); };
    e.bias_kernel = "llmk::kernels::bias_columns";
  }
}

template <class ExecSpace>
Entry impl_entry(Impl impl, const ExecSpace& exec, const Buffers<ExecSpace>& full,
                 const Buffers<ExecSpace>& probe) {
  const MatmulBackwardOptions options{impl};
  auto call = [exec, options](const Buffers<ExecSpace>& b) {
    return [exec, options, b] {
      matmul_backward(exec, b.dinp, b.dweight, b.dbias, b.dout, b.inp, b.weight, options);
    };
  };
  Entry e{std::string(impl_name(impl)), call(full), call(probe), [exec] { exec.fence(); }, {}, {}, {}};
  const Impl resolved = impl == Impl::Auto ? resolve_auto<ExecSpace>() : impl;
  if (impl == Impl::Auto) e.note = "auto is " + std::string(impl_name(resolved)) + " here";
  set_bias_pass(e, resolved, exec, full);
  return e;
}

// Peers are synchronous host code or enqueue on the backend's default stream:
// a global fence waits for either.
inline Entry peer_entry(const Peer& p, const PeerArgs& full, const PeerArgs& probe) {
  auto call = [run = p.run](const PeerArgs& a) { return [run, a] { run(a); }; };
  Entry e{p.name, call(full), call(probe), [] { Kokkos::fence(); }, {}, {}, {}};
  e.computes_bias = p.computes_bias;
  if (!p.computes_bias) e.note = p.name + ": the two GEMMs only, dbias not computed (not checked)";
  if (p.bias_only) {
    e.bias_only = [bias = p.bias_only, full] { bias(full); };
    e.bias_kernel = p.bias_kernel;
  }
  return e;
}

}  // namespace llmk::perf
