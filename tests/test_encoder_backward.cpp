// llmk::encoder_backward on LLMK_TEST_SPACE. Not yet on the contract tests
// (tests/contract/ has no int32 argument: tokens); its own cases, named
// encoder_backward/<aspect>.<case>:
//  - Accuracy: every implementation and "auto" × precision × the reference
//    library's shapes (a token absent, all positions one token, V = 1, T = 1,
//    long buckets, most of dwte untouched) × (accumulate; dwte, dwpe, both
//    overwritten, poisoned with NaN/Inf first) × views and raw pointers:
//    within the tolerance of the float64 reference; the rows of absent tokens
//    bitwise their initial values, or 0.0 overwritten;
//  - Order: bitwise equal to float32 sums written here, each token's rows in
//    increasing position order in runs of 32, the runs' sums in order, and
//    dwpe's in order of b (the promised order: a bucket summed in another
//    order differs in its last bits);
//  - Determinism: three calls, an explicit context, bitwise equal;
//  - BadTokens: −1, V, INT_MIN at the first, a middle and the last position
//    refused naming 'tokens', the position and the value, both outputs
//    bitwise unchanged (and with C = 0); BadArguments: extents, ranks, null
//    pointers, negative sizes, element types, an output overlapping dout,
//    unknown implementation names: std::invalid_argument naming them;
//  - Empty: B = 0, C = 0: overwritten outputs zeros, accumulated unchanged;
//  - Workspace: a context given exactly encoder_backward_workspace_bytes runs,
//    also at an odd address (1 past a multiple of 256), one byte less is
//    refused before any write; BadArguments.WorkspaceOverlap: a workspace in
//    the memory of each argument refused naming it;
//  - Large: GPT-2 124M (B 8, T 1024, C 768, V 50257, Zipf tokens), label large.
#include "support/compare.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <llmk/encoder_backward.hpp>
#include <core/reference/bf16.hpp>
#include <ops/encoder_backward/reference/reference.hpp>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#ifndef LLMK_TEST_SPACE
#error "compile with -DLLMK_TEST_SPACE=<a Kokkos execution space: Serial, OpenMP, Cuda>"
#endif

namespace {

using Space = Kokkos::LLMK_TEST_SPACE;
using llmk::reference::Precision;
using ::testing::HasSubstr;
namespace enc = llmk::reference::encoder;

bool bf16_dout(Precision p) { return p != Precision::fp32; }
bool bf16_grads(Precision p) { return p == Precision::bf16; }

// A device array of float or bf16 (by `bf16`) holding `values`.
struct DeviceArray {
  bool bf16;
  Kokkos::View<float*, Space> f;
  Kokkos::View<llmk::bf16*, Space> h;
  DeviceArray(const std::vector<float>& v, bool bf16_) : bf16(bf16_) {
    if (bf16) {
      h = Kokkos::View<llmk::bf16*, Space>("enc", v.size());
      auto m = Kokkos::create_mirror_view(h);
      for (std::size_t i = 0; i < v.size(); ++i) m(i) = llmk::bf16(v[i]);
      Kokkos::deep_copy(h, m);
    } else {
      f = Kokkos::View<float*, Space>("enc", v.size());
      auto m = Kokkos::create_mirror_view(f);
      for (std::size_t i = 0; i < v.size(); ++i) m(i) = v[i];
      Kokkos::deep_copy(f, m);
    }
  }
  void* data() const { return bf16 ? static_cast<void*>(h.data()) : static_cast<void*>(f.data()); }
  llmk::DType dtype() const { return bf16 ? llmk::DType::bf16 : llmk::DType::f32; }
  std::vector<float> host() const {
    std::vector<float> v;
    if (bf16) {
      auto m = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h);
      for (std::size_t i = 0; i < m.extent(0); ++i) v.push_back(float(m(i)));
    } else {
      auto m = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f);
      v.assign(m.data(), m.data() + m.extent(0));
    }
    return v;
  }
};

struct DeviceProblem {
  DeviceArray dwte, dwpe, dout;
  Kokkos::View<int*, Space> tokens;
  const enc::Shape s;
  DeviceProblem(const enc::HostProblem& p, const std::vector<float>& dwte0,
                const std::vector<float>& dwpe0)
      : dwte(dwte0, bf16_grads(p.precision)),
        dwpe(dwpe0, bf16_grads(p.precision)),
        dout(p.dout, bf16_dout(p.precision)),
        tokens("tokens", p.tokens.size()),
        s(p.shape) {
    auto m = Kokkos::create_mirror_view(tokens);
    for (std::size_t i = 0; i < p.tokens.size(); ++i) m(i) = p.tokens[i];
    Kokkos::deep_copy(tokens, m);
  }
  // Through views (raw = false) or raw pointers.
  void call(const llmk::EncoderBackwardOptions& o, bool raw) {
    if (raw) {
      llmk::encoder_backward(Space(), llmk::BufferRef(dwte.data(), dwte.dtype()),
                             llmk::BufferRef(dwpe.data(), dwpe.dtype()),
                             llmk::ConstBufferRef(dout.data(), dout.dtype()), tokens.data(), s.B,
                             s.T, s.C, s.V, o);
    } else {
      llmk::encoder_backward(
          Space(), llmk::Out<Space>(llmk::BufferRef(dwte.data(), dwte.dtype()), {s.V, s.C}),
          llmk::Out<Space>(llmk::BufferRef(dwpe.data(), dwpe.dtype()), {s.T, s.C}),
          llmk::In<Space>(llmk::ConstBufferRef(dout.data(), dout.dtype()), {s.B, s.T, s.C}),
          llmk::TokensView<Space>(tokens.data(), s.B, s.T), o);
    }
    Space().fence();
  }
};

std::vector<float> poisoned(std::size_t n) {
  const float v[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                     -std::numeric_limits<float>::infinity(), 1e30f};
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = v[i % 4];
  return out;
}

std::vector<std::string> impls_and_auto() {
  std::vector<std::string> v{"auto"};
  for (const llmk::ImplInfo& i : llmk::encoder_backward_impls())
    if (llmk::encoder_backward_available<Space>(i.name)) v.push_back(i.name);
  return v;
}

void check_accuracy(const enc::Shape& s, Precision p, const std::string& impl, bool ow_te,
                    bool ow_pe, bool raw) {
  const enc::HostProblem hp = enc::make_problem(s, 11, p);
  DeviceProblem d(hp, ow_te ? poisoned(hp.dwte.size()) : hp.dwte,
                  ow_pe ? poisoned(hp.dwpe.size()) : hp.dwpe);
  llmk::EncoderBackwardOptions o;
  o.impl = impl;
  o.dwte_update = ow_te ? llmk::Update::overwrite : llmk::Update::accumulate;
  o.dwpe_update = ow_pe ? llmk::Update::overwrite : llmk::Update::accumulate;
  d.call(o, raw);
  const enc::Gradients64 ref = enc::reference_backward(hp, ow_te, ow_pe);
  const std::vector<float> dwte = d.dwte.host(), dwpe = d.dwpe.host();
  const double tol = enc::tolerance(p, bf16_grads(p));
  EXPECT_TRUE(llmk_test::matches_reference("dwte", dwte, ref.dwte, s.C, tol));
  EXPECT_TRUE(llmk_test::matches_reference("dwpe", dwpe, ref.dwpe, s.C, tol));
  std::vector<bool> present(std::size_t(s.V), false);
  for (int t : hp.tokens) present[std::size_t(t)] = true;
  for (std::int64_t v = 0; v < s.V; ++v) {
    if (present[std::size_t(v)]) continue;
    for (std::int64_t c = 0; c < s.C; ++c) {
      const float want = ow_te ? 0.0f : hp.dwte[std::size_t(v * s.C + c)];
      const float got = dwte[std::size_t(v * s.C + c)];
      ASSERT_TRUE(std::memcmp(&got, &want, 4) == 0)
          << "absent token " << v << ", channel " << c << ": " << got << ", expected " << want;
    }
  }
}

// Float32 sums in the promised order, rounded once, as the kernels add.
std::vector<float> ordered_sums(const enc::HostProblem& p, bool dwte) {
  const enc::Shape& s = p.shape;
  const std::size_t C = std::size_t(s.C);
  const bool round = bf16_grads(p.precision);
  std::vector<float> out(dwte ? p.dwte : p.dwpe);
  const std::int64_t rows = dwte ? s.V : s.T;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < C; ++c) {
      // dwte: runs of encoder_backward_run positions, each summed in order,
      // the runs' sums added in order; dwpe: the B rows in order.
      const std::int64_t run = dwte ? llmk::encoder_backward_run : s.M();
      float sum = 0, run_sum = 0;
      std::int64_t n = 0;
      for (std::int64_t i = 0; i < s.M(); ++i) {
        if (dwte ? p.tokens[std::size_t(i)] != r : i % s.T != r) continue;
        run_sum += p.dout[std::size_t(i) * C + c];
        if (++n % run == 0) sum += run_sum, run_sum = 0;
      }
      if (n == 0) continue;
      if (n % run != 0) sum += run_sum;
      float& o = out[std::size_t(r) * C + c];
      o = o + sum;
      if (round) o = llmk::reference::round_to_bf16(o);
    }
  }
  return out;
}

void check_order(const enc::Shape& s, Precision p) {
  const enc::HostProblem hp = enc::make_problem(s, 5, p);
  DeviceProblem d(hp, hp.dwte, hp.dwpe);
  d.call({}, false);
  EXPECT_TRUE(llmk_test::bitwise_equal("dwte", d.dwte.host(), ordered_sums(hp, true)));
  EXPECT_TRUE(llmk_test::bitwise_equal("dwpe", d.dwpe.host(), ordered_sums(hp, false)));
}

void check_determinism(const enc::Shape& s, Precision p) {
  const enc::HostProblem hp = enc::make_problem(s, 7, p);
  std::vector<float> first;
  for (int k = 0; k < 3; ++k) {
    DeviceProblem d(hp, hp.dwte, hp.dwpe);
    llmk::EncoderBackwardOptions o;
    llmk::Context<Space> ctx(Space{});
    llmk::encoder_backward(ctx, llmk::BufferRef(d.dwte.data(), d.dwte.dtype()),
                           llmk::BufferRef(d.dwpe.data(), d.dwpe.dtype()),
                           llmk::ConstBufferRef(d.dout.data(), d.dout.dtype()), d.tokens.data(),
                           s.B, s.T, s.C, s.V, o);
    Space().fence();
    std::vector<float> out = d.dwte.host();
    const std::vector<float> pe = d.dwpe.host();
    out.insert(out.end(), pe.begin(), pe.end());
    if (k == 0) first = out;
    else EXPECT_TRUE(llmk_test::bitwise_equal(("call " + std::to_string(k)).c_str(), out, first));
  }
}

// A call that must throw std::invalid_argument with every fragment, both
// outputs bitwise unchanged.
template <class F>
void expect_refused(DeviceProblem& d, F&& call, const std::vector<std::string>& fragments) {
  const std::vector<float> te = d.dwte.host(), pe = d.dwpe.host();
  try {
    call();
    Space().fence();
    ADD_FAILURE() << "no exception thrown";
  } catch (const std::invalid_argument& e) {
    for (const std::string& f : fragments) EXPECT_THAT(e.what(), HasSubstr(f));
  }
  EXPECT_TRUE(llmk_test::bitwise_equal("dwte", d.dwte.host(), te));
  EXPECT_TRUE(llmk_test::bitwise_equal("dwpe", d.dwpe.host(), pe));
}

void check_bad_token(std::int64_t C, std::int64_t where, int value) {
  const enc::Shape s{"bad", 2, 5, C, 9};
  enc::HostProblem hp = enc::make_problem(s, 3, Precision::fp32);
  const std::int64_t pos = where < 0 ? s.M() - 1 : where;
  hp.tokens[std::size_t(pos)] = value;
  DeviceProblem d(hp, hp.dwte, hp.dwpe);
  for (const bool overwrite : {false, true}) {
    for (const bool raw : {false, true}) {
      llmk::EncoderBackwardOptions o;
      if (overwrite) o.dwte_update = o.dwpe_update = llmk::Update::overwrite;
      expect_refused(d, [&] { d.call(o, raw); },
                     {"'tokens'", "holds " + std::to_string(value),
                      "position " + std::to_string(pos), "V = 9"});
    }
  }
}

void check_bad_arguments() {
  const enc::Shape s{"args", 2, 3, 4, 5};
  const enc::HostProblem hp = enc::make_problem(s, 3, Precision::fp32);
  DeviceProblem d(hp, hp.dwte, hp.dwpe);
  using llmk::BufferRef;
  using llmk::ConstBufferRef;
  const BufferRef te(d.dwte.data(), llmk::DType::f32), pe(d.dwpe.data(), llmk::DType::f32);
  const ConstBufferRef dout(d.dout.data(), llmk::DType::f32);
  const int* tok = d.tokens.data();
  using Out = llmk::Out<Space>;
  using In = llmk::In<Space>;
  const llmk::TokensView<Space> tokens(tok, 2, 3);
  const auto views = [&](Out a, Out b, In c, llmk::TokensView<Space> t, std::string impl = "auto") {
    return [=] {
      llmk::EncoderBackwardOptions o;
      o.impl = impl;
      llmk::encoder_backward(Space(), a, b, c, t, o);
    };
  };
  expect_refused(d, views(Out(te, {5, 3}), Out(pe, {3, 4}), In(dout, {2, 3, 4}), tokens),
                 {"'dwte'", "(5, 3)", "(5, 4)"});
  expect_refused(d, views(Out(te, {5, 4}), Out(pe, {2, 4}), In(dout, {2, 3, 4}), tokens),
                 {"'dwpe'", "(2, 4)", "(3, 4)"});
  expect_refused(d, views(Out(te, {5, 4}), Out(pe, {3, 4}), In(dout, {6, 4}), tokens),
                 {"'dout'", "(6, 4)", "rank 3"});
  expect_refused(d, views(Out(te, {20}), Out(pe, {3, 4}), In(dout, {2, 3, 4}), tokens),
                 {"'dwte'", "(20)", "rank 2"});
  expect_refused(d, views(Out(te, {5, 4}), Out(pe, {3, 4}), In(dout, {2, 3, 4}),
                          llmk::TokensView<Space>(tok, 3, 2)),
                 {"'tokens'", "(3, 2)", "(2, 3)"});
  expect_refused(d, views(Out(te, {5, 4}), Out(pe, {3, 4}), In(dout, {2, 3, 4}), tokens, "tiled"),
                 {"'tiled'", "sorted"});
  // dwte over dout's memory (both float): refused as an overlap.
  expect_refused(d, views(Out(BufferRef(d.dout.data(), llmk::DType::f32), {5, 4}), Out(pe, {3, 4}),
                          In(dout, {2, 3, 4}), tokens),
                 {"'dwte'", "overlaps", "'dout'"});
  // Element types that are no configuration: bf16 dwte with float dout.
  DeviceArray te16(hp.dwte, true);
  expect_refused(d, views(Out(BufferRef(te16.data(), llmk::DType::bf16), {5, 4}), Out(pe, {3, 4}),
                          In(dout, {2, 3, 4}), tokens),
                 {"element types", "dwte bf16", "fp32"});
  const auto raw = [&](const void* a, const int* t, std::int64_t B, std::int64_t V) {
    return [=] {
      llmk::encoder_backward(Space(), BufferRef(const_cast<void*>(a), llmk::DType::f32), pe, dout, t,
                             B, 3, 4, V);
    };
  };
  expect_refused(d, raw(nullptr, tok, 2, 5), {"'dwte'", "null pointer"});
  expect_refused(d, raw(te.data, nullptr, 2, 5), {"'tokens'", "null pointer"});
  expect_refused(d, raw(te.data, tok, -3, 5), {"dimension B = -3", "negative"});
  expect_refused(d, raw(te.data, tok, 2, -3), {"dimension V = -3", "negative"});
  expect_refused(d, raw(te.data, tok, 2, std::int64_t(1) << 62), {"V·C", "overflows"});
}

void check_empty(const enc::Shape& s, bool overwrite) {
  const enc::HostProblem hp = enc::make_problem(s, 3, Precision::fp32);
  DeviceProblem d(hp, overwrite ? poisoned(hp.dwte.size()) : hp.dwte,
                  overwrite ? poisoned(hp.dwpe.size()) : hp.dwpe);
  llmk::EncoderBackwardOptions o;
  if (overwrite) o.dwte_update = o.dwpe_update = llmk::Update::overwrite;
  for (const bool raw : {false, true}) {
    d.call(o, raw);
    const enc::Gradients64 ref = enc::reference_backward(hp, overwrite, overwrite);
    const std::vector<float> te = d.dwte.host(), pe = d.dwpe.host();
    for (std::size_t i = 0; i < te.size(); ++i) ASSERT_EQ(double(te[i]), ref.dwte[i]) << i;
    for (std::size_t i = 0; i < pe.size(); ++i) ASSERT_EQ(double(pe[i]), ref.dwpe[i]) << i;
  }
  EXPECT_EQ(llmk::encoder_backward_workspace_bytes<Space>(s.B, s.T, s.C, s.V), 0u);
}

void check_workspace() {
  const enc::Shape s{"ws", 3, 40, 6, 77, enc::Tokens::zipf};
  const enc::HostProblem hp = enc::make_problem(s, 3, Precision::fp32);
  const std::size_t bytes = llmk::encoder_backward_workspace_bytes<Space>(s.B, s.T, s.C, s.V);
  ASSERT_GE(bytes, sizeof(int) * std::size_t(3 * s.V + 1 + 2 * s.M()));
  Kokkos::View<unsigned char*, Space> buffer("ws", bytes);
  DeviceProblem d(hp, hp.dwte, hp.dwpe);
  {
    llmk::Context<Space> ctx(Space{});
    ctx.use_workspace(buffer.data(), bytes - 1);
    expect_refused(d, [&] {
      llmk::encoder_backward(ctx, llmk::BufferRef(d.dwte.data(), llmk::DType::f32),
                             llmk::BufferRef(d.dwpe.data(), llmk::DType::f32),
                             llmk::ConstBufferRef(d.dout.data(), llmk::DType::f32), d.tokens.data(),
                             s.B, s.T, s.C, s.V);
    }, {"workspace", std::to_string(bytes - 1), std::to_string(bytes)});
  }
  llmk::Context<Space> ctx(Space{});
  ctx.use_workspace(buffer.data(), bytes);
  llmk::encoder_backward(ctx, llmk::BufferRef(d.dwte.data(), llmk::DType::f32),
                         llmk::BufferRef(d.dwpe.data(), llmk::DType::f32),
                         llmk::ConstBufferRef(d.dout.data(), llmk::DType::f32), d.tokens.data(), s.B,
                         s.T, s.C, s.V);
  Space().fence();
  EXPECT_TRUE(llmk_test::bitwise_equal("dwte", d.dwte.host(), ordered_sums(hp, true)));
}

// The raw-pointer call of check_workspace's problem with `ctx`.
void call_with(llmk::Context<Space>& ctx, DeviceProblem& d, const enc::Shape& s) {
  llmk::encoder_backward(ctx, llmk::BufferRef(d.dwte.data(), llmk::DType::f32),
                         llmk::BufferRef(d.dwpe.data(), llmk::DType::f32),
                         llmk::ConstBufferRef(d.dout.data(), llmk::DType::f32), d.tokens.data(),
                         s.B, s.T, s.C, s.V);
  ctx.exec().fence();
}

// Exactly encoder_backward_workspace_bytes at an address 1 past a multiple
// of 256 (the alignment of the temporaries takes 255 bytes of it): right,
// the bytes around it untouched.
void check_misaligned_workspace() {
  const enc::Shape s{"ws", 3, 40, 6, 77, enc::Tokens::zipf};
  const enc::HostProblem hp = enc::make_problem(s, 3, Precision::fp32);
  const std::size_t bytes = llmk::encoder_backward_workspace_bytes<Space>(s.B, s.T, s.C, s.V);
  Kokkos::View<unsigned char*, Space> buffer("ws", bytes + 1024);
  Kokkos::deep_copy(buffer, (unsigned char)0xa5);
  const auto address = reinterpret_cast<std::uintptr_t>(buffer.data() + 256);
  const std::size_t start = 256 + (257 - address % 256) % 256;
  DeviceProblem d(hp, hp.dwte, hp.dwpe);
  llmk::Context<Space> ctx(Space{});
  ctx.use_workspace(buffer.data() + start, bytes);
  call_with(ctx, d, s);
  EXPECT_TRUE(llmk_test::bitwise_equal("dwte", d.dwte.host(), ordered_sums(hp, true)));
  EXPECT_TRUE(llmk_test::bitwise_equal("dwpe", d.dwpe.host(), ordered_sums(hp, false)));
  EXPECT_EQ(ctx.workspace_bytes(), bytes) << "the context allocated instead";
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), buffer);
  for (std::size_t i = 0; i < h.extent(0); ++i)
    if (i < start || i >= start + bytes) ASSERT_EQ(h(i), 0xa5) << "byte " << i << " written";
}

// A workspace in the memory of each argument (its first 16 bytes) refused
// naming it, before any write.
void check_workspace_overlap() {
  const enc::Shape s{"ws", 3, 40, 6, 77, enc::Tokens::zipf};
  const enc::HostProblem hp = enc::make_problem(s, 3, Precision::fp32);
  DeviceProblem d(hp, hp.dwte, hp.dwpe);
  const std::pair<const char*, void*> args[] = {{"dwte", d.dwte.data()},
                                                {"dwpe", d.dwpe.data()},
                                                {"dout", d.dout.data()},
                                                {"tokens", d.tokens.data()}};
  for (const auto& [name, data] : args) {
    SCOPED_TRACE(name);
    llmk::Context<Space> ctx(Space{});
    ctx.use_workspace(data, 16);
    expect_refused(d, [&] { call_with(ctx, d, s); },
                   {"workspace", "overlaps argument '" + std::string(name) + "'"});
  }
}

void add(const std::string& suite, const std::string& name, std::function<void()> f) {
  ::testing::RegisterTest(("encoder_backward/" + suite).c_str(), name.c_str(), nullptr, nullptr,
                          __FILE__, __LINE__, [f]() -> ::testing::Test* {
                            struct T : ::testing::Test {
                              std::function<void()> f;
                              void TestBody() override { f(); }
                            };
                            auto* t = new T;
                            t->f = f;
                            return t;
                          });
}

[[maybe_unused]] const bool registered = [] {
  const std::vector<Precision> precisions{Precision::fp32, Precision::bf16,
                                          Precision::bf16_fp32grad};
  for (const std::string& impl : impls_and_auto()) {
    for (const Precision p : precisions) {
      for (const enc::Shape& s : enc::test_shapes()) {
        const std::string name = impl + "_" + llmk::reference::precision_name(p) + "_" + s.name;
        std::string n = name;
        for (char& c : n) if (c == '-') c = '_';
        add("Accuracy", n, [=] {
          for (const auto& [te, pe] : std::vector<std::pair<bool, bool>>{
                   {false, false}, {true, false}, {false, true}, {true, true}})
            for (const bool raw : {false, true}) {
              SCOPED_TRACE(std::string(te ? "dwte = " : "dwte += ") + (pe ? "dwpe = " : "dwpe += ") +
                           (raw ? "raw" : "views"));
              check_accuracy(s, p, impl, te, pe, raw);
            }
        });
      }
      std::string n = impl + "_" + llmk::reference::precision_name(p) + "_gpt2_124M";
      for (char& c : n) if (c == '-') c = '_';
      add("Large", n, [=] { check_accuracy(enc::gpt2_shape(), p, impl, false, false, false); });
    }
  }
  for (const Precision p : precisions) {
    std::string pn = llmk::reference::precision_name(p);
    for (char& c : pn) if (c == '-') c = '_';
    for (const enc::Shape& s : enc::test_shapes())
      add("Order", pn + "_" + s.name, [=] { check_order(s, p); });
    add("Determinism", pn, [=] { check_determinism({"det", 3, 347, 21, 400, enc::Tokens::zipf}, p); });
  }
  for (const std::int64_t C : {std::int64_t(4), std::int64_t(0)})
    for (const std::int64_t where : {std::int64_t(0), std::int64_t(4), std::int64_t(-1)})
      for (const int value : {-1, 9, INT_MIN})
        add("BadTokens", "C" + std::to_string(C) + "_at" + std::to_string(where < 0 ? 9 : where) +
                             "_" + (value == -1 ? "minus1" : value == 9 ? "V" : "intmin"),
            [=] { check_bad_token(C, where, value); });
  add("BadArguments", "All", check_bad_arguments);
  for (const enc::Shape& s : enc::empty_shapes())
    for (const bool ow : {false, true})
      add("Empty", s.name + (ow ? "_overwrite" : "_accumulate"), [=] { check_empty(s, ow); });
  add("Workspace", "ExactAndOneByteLess", check_workspace);
  add("Workspace", "Misaligned", check_misaligned_workspace);
  add("BadArguments", "WorkspaceOverlap", check_workspace_overlap);
  return true;
}();

}  // namespace
