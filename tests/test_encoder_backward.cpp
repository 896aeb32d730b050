// llmk::encoder_backward's own cases on LLMK_TEST_SPACE, beside its contract
// tests (tests/contract/, registered by the generated
// space_encoder_backward.cpp with support/encoder_backward_adapter.hpp:
// tokens an int32 input), named encoder_backward/<aspect>.<case> as they are:
//  - Order: each implementation bitwise equal to float32 sums written here,
//    each token's rows in increasing position order in runs of 32, the runs'
//    sums in order, and dwpe's in order of b (the promised order: a bucket
//    summed in another order differs in its last bits), on the reference's
//    shapes and two past 8192 and 16384 positions (block_sort's limits);
//  - BadTokens: −1, V, INT_MIN at the first, a middle and the last position
//    refused naming 'tokens', the position and the value, both outputs
//    bitwise unchanged (and with C = 0); BadArguments.Ranks: dout as (M, C)
//    and dwte of rank 1, refused naming them and the rank expected;
//  - Unchecked: options.check_tokens off, the same bits as Order; bad tokens
//    then skipped by dwte (not refused), dwpe still adding their rows;
//  - Workspace.Misaligned: exactly encoder_backward_workspace_bytes at an
//    odd address (1 past a multiple of 256): bitwise the ordered sums (the
//    contract's Misaligned holds it to the tolerance), the bytes around it
//    untouched.
// And llmk::encoder_forward's: its contract tests (support/encoder_forward_adapter.hpp),
// and BadTokens (−1, V, INT_MIN at the first, a middle and the last position
// refused naming 'tokens', the position and the value, out bitwise
// unchanged) and Unchecked (check_tokens off: that row NaN, the others
// bitwise wte[token] + wpe[t]), named encoder_forward/<aspect>.<case>.
// (Bad arguments on the host: test_encoder_bad_inputs.cpp.)
#include "contract/all.hpp"
#include "support/compare.hpp"
#include "support/encoder_backward_adapter.hpp"
#include "support/encoder_forward_adapter.hpp"
#include "support/test_space.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <llmk/encoder_backward.hpp>
#include <llmk/encoder_forward.hpp>
#include <core/reference/bf16.hpp>
#include <ops/encoder_backward/reference/reference.hpp>
#include <ops/encoder_forward/reference.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace {

using Space = llmk_test::TestSpace;
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

// Each implementation (`impl`), checked = false: options.check_tokens off
// (no wait for the device; the sums' launches sized for the most tokens and
// runs there can be): the same bits.
void check_order(const std::string& impl, const enc::Shape& s, Precision p, bool checked = true) {
  const enc::HostProblem hp = enc::make_problem(s, 5, p);
  DeviceProblem d(hp, hp.dwte, hp.dwpe);
  llmk::EncoderBackwardOptions o;
  o.impl = impl;
  o.check_tokens = checked;
  d.call(o, false);
  EXPECT_TRUE(llmk_test::bitwise_equal("dwte", d.dwte.host(), ordered_sums(hp, true)));
  EXPECT_TRUE(llmk_test::bitwise_equal("dwpe", d.dwpe.host(), ordered_sums(hp, false)));
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

// options.check_tokens off, bad tokens at the first, a middle and the last
// position of Zipf tokens (long buckets: the runs' path too): no exception,
// dwte the ordered sums of the good positions alone (ordered_sums matches
// no row to a bad token), dwpe every position's; overwritten, dwte's rows
// of absent tokens zero.
void check_unchecked_bad_tokens(const std::string& impl, bool overwrite) {
  const enc::Shape s{"unchecked", 3, 40, 6, 77, enc::Tokens::zipf};
  enc::HostProblem hp = enc::make_problem(s, 7, Precision::fp32);
  hp.tokens[0] = -1, hp.tokens[57] = 77, hp.tokens[std::size_t(s.M() - 1)] = INT_MIN;
  const std::vector<float> te0 = hp.dwte, pe0 = hp.dwpe;
  if (overwrite) {
    std::fill(hp.dwte.begin(), hp.dwte.end(), 0.0f);
    std::fill(hp.dwpe.begin(), hp.dwpe.end(), 0.0f);
  }
  DeviceProblem d(hp, te0, pe0);  // poisoned by the old values where overwritten
  llmk::EncoderBackwardOptions o;
  o.impl = impl;
  o.check_tokens = false;
  if (overwrite) o.dwte_update = o.dwpe_update = llmk::Update::overwrite;
  d.call(o, true);
  EXPECT_TRUE(llmk_test::bitwise_equal("dwte", d.dwte.host(), ordered_sums(hp, true)));
  EXPECT_TRUE(llmk_test::bitwise_equal("dwpe", d.dwpe.host(), ordered_sums(hp, false)));
}

// What the contract's bad inputs do not try (they give dout, the leader, a
// rank of 1 and the others wrong extents of their own rank): dout as the
// (M, C) matrix of the other operations, and dwte flattened.
void check_bad_ranks() {
  const enc::Shape s{"args", 2, 3, 4, 5};
  const enc::HostProblem hp = enc::make_problem(s, 3, Precision::fp32);
  DeviceProblem d(hp, hp.dwte, hp.dwpe);
  using llmk::BufferRef;
  using llmk::ConstBufferRef;
  const BufferRef te(d.dwte.data(), llmk::DType::f32), pe(d.dwpe.data(), llmk::DType::f32);
  const ConstBufferRef dout(d.dout.data(), llmk::DType::f32);
  using Out = llmk::Out<Space>;
  using In = llmk::In<Space>;
  const llmk::TokensView<Space> tokens(d.tokens.data(), 2, 3);
  const auto views = [&](Out a, Out b, In c) {
    return [=] { llmk::encoder_backward(Space(), a, b, c, tokens); };
  };
  expect_refused(d, views(Out(te, {5, 4}), Out(pe, {3, 4}), In(dout, {6, 4})),
                 {"'dout'", "(6, 4)", "rank 3"});
  expect_refused(d, views(Out(te, {20}), Out(pe, {3, 4}), In(dout, {2, 3, 4})),
                 {"'dwte'", "(20)", "rank 2"});
}

// The raw-pointer call of a problem with `ctx`.
void call_with(llmk::Context<Space>& ctx, DeviceProblem& d, const enc::Shape& s) {
  llmk::encoder_backward(ctx, llmk::BufferRef(d.dwte.data(), llmk::DType::f32),
                         llmk::BufferRef(d.dwpe.data(), llmk::DType::f32),
                         llmk::ConstBufferRef(d.dout.data(), llmk::DType::f32), d.tokens.data(),
                         s.B, s.T, s.C, s.V);
  ctx.exec().fence();
}

// Exactly encoder_backward_workspace_bytes at an address 1 past a multiple
// of 256 (the alignment of the temporaries takes 255 bytes of it): bitwise
// the ordered sums, the bytes around it untouched.
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

// The reference library's shapes, and two past one block's sort of 8192
// positions (block_sort's: 1024 threads × 16 keys up to 16384, then
// "sorted"'s kernels), few channels.
std::vector<enc::Shape> order_shapes() {
  std::vector<enc::Shape> shapes = enc::test_shapes();
  shapes.push_back({"M9000", 9, 1000, 3, 400, enc::Tokens::zipf});
  shapes.push_back({"M17000", 17, 1000, 2, 300, enc::Tokens::zipf});
  return shapes;
}

// The implementations that run on Space.
std::vector<std::string> impls_here() {
  std::vector<std::string> names;
  for (const llmk::EncoderBackwardImplInfo& impl : llmk::impls<llmk::EncoderBackward>())
    if (llmk::available<llmk::EncoderBackward, Space>(impl.name)) names.push_back(impl.name);
  return names;
}

void add(const std::string& aspect, const std::string& name, std::function<void()> f) {
  llmk_test::contract::add_test("encoder_backward", aspect, name, "", std::move(f));
}

// --- encoder_forward's own cases (its contract tests: register_space_tests below) ---
namespace encf = llmk::reference::encoder_forward;

// A token outside [0, V) at the first, a middle or the last position: refused
// naming 'tokens', its position and value, out bitwise unchanged; with
// check_tokens off, no exception, its row NaN and every other row
// wte[token] + wpe[t] (in float, as the kernels add).
void check_forward_bad_token(const std::string& impl, std::int64_t where, int value,
                             bool checked) {
  const enc::Shape s{"bad", 2, 5, 8, 9};
  encf::HostProblem hp = encf::make_problem(s, 3, Precision::fp32);
  const std::int64_t pos = where < 0 ? s.M() - 1 : where;
  hp.tokens[std::size_t(pos)] = value;
  DeviceArray out(hp.out, false), wte(hp.wte, false), wpe(hp.wpe, false);
  Kokkos::View<int*, Space> tokens("tokens", hp.tokens.size());
  auto m = Kokkos::create_mirror_view(tokens);
  for (std::size_t i = 0; i < hp.tokens.size(); ++i) m(i) = hp.tokens[i];
  Kokkos::deep_copy(tokens, m);
  llmk::EncoderForwardOptions o;
  o.impl = impl;
  o.check_tokens = checked;
  const auto call = [&] {
    llmk::encoder_forward(Space(), llmk::BufferRef(out.data(), out.dtype()), tokens.data(),
                          llmk::ConstBufferRef(wte.data(), wte.dtype()),
                          llmk::ConstBufferRef(wpe.data(), wpe.dtype()), s.B, s.T, s.C, s.V, o);
    Space().fence();
  };
  if (checked) {
    try {
      call();
      ADD_FAILURE() << "no exception thrown";
    } catch (const std::invalid_argument& e) {
      for (const std::string& f : {std::string("'tokens'"), "holds " + std::to_string(value),
                                   "position " + std::to_string(pos), std::string("V = 9")})
        EXPECT_THAT(e.what(), HasSubstr(f));
    }
    EXPECT_TRUE(llmk_test::bitwise_equal("out", out.host(), hp.out));
    return;
  }
  call();
  const std::vector<float> got = out.host();
  std::vector<float> want(got.size());
  const std::size_t C = std::size_t(s.C);
  for (std::size_t i = 0; i < want.size(); ++i) {
    const std::size_t p = i / C, c = i % C, t = p % std::size_t(s.T);
    const std::size_t token = std::size_t(hp.tokens[p]);
    want[i] = std::int64_t(p) == pos ? got[i]  // checked below: NaN
                                     : hp.wte[token * C + c] + hp.wpe[t * C + c];
  }
  EXPECT_TRUE(llmk_test::bitwise_equal("out", got, want));
  for (std::size_t c = 0; c < C; ++c)
    EXPECT_TRUE(std::isnan(got[std::size_t(pos) * C + c])) << "channel " << c << " of the bad row";
}

std::vector<std::string> forward_impls_here() {
  std::vector<std::string> names;
  for (const llmk::ImplInfo& impl : llmk::impls<llmk::EncoderForward>())
    if (llmk::available<llmk::EncoderForward, Space>(impl.name)) names.push_back(impl.name);
  return names;
}

[[maybe_unused]] const bool registered = [] {
  const std::vector<Precision> precisions{Precision::fp32, Precision::bf16,
                                          Precision::bf16_fp32grad};
  for (const Precision p : precisions) {
    std::string pn = llmk::reference::precision_name(p);
    for (char& c : pn) if (c == '-') c = '_';
    for (const std::string& impl : impls_here()) {
      for (const enc::Shape& s : order_shapes())
        add("Order", impl + "_" + pn + "_" + s.name, [=] { check_order(impl, s, p); });
      for (const enc::Shape& s : order_shapes())
        add("Unchecked", impl + "_" + pn + "_" + s.name, [=] { check_order(impl, s, p, false); });
    }
  }
  for (const std::string& impl : impls_here()) {
    add("Unchecked", impl + "_BadTokensSkipped", [=] { check_unchecked_bad_tokens(impl, false); });
    add("Unchecked", impl + "_BadTokensSkippedOverwrite",
        [=] { check_unchecked_bad_tokens(impl, true); });
  }
  for (const std::int64_t C : {std::int64_t(4), std::int64_t(0)})
    for (const std::int64_t where : {std::int64_t(0), std::int64_t(4), std::int64_t(-1)})
      for (const int value : {-1, 9, INT_MIN})
        add("BadTokens", "C" + std::to_string(C) + "_at" + std::to_string(where < 0 ? 9 : where) +
                             "_" + (value == -1 ? "minus1" : value == 9 ? "V" : "intmin"),
            [=] { check_bad_token(C, where, value); });
  add("BadArguments", "Ranks", check_bad_ranks);
  add("Workspace", "Misaligned", check_misaligned_workspace);

  const std::pair<std::int64_t, int> bad_tokens[] = {{0, -1}, {4, 9}, {-1, INT_MIN}};
  for (const std::string& impl : forward_impls_here())
    for (const bool checked : {true, false})
      for (const auto& bad : bad_tokens) {
        const std::int64_t where = bad.first;
        const int value = bad.second;
        llmk_test::contract::add_test(
            "encoder_forward", checked ? "BadTokens" : "Unchecked",
            impl + "_at" + std::to_string(where < 0 ? 9 : where), "",
            [=] { check_forward_bad_token(impl, where, value, checked); });
      }
  return true;
}();

}  // namespace
