// llmk::matmul_backward's bad inputs, on the default host execution space
// (argument checks run on the host before any kernel, whatever the space):
// beside the contract's (tests/contract/bad_inputs.hpp, registered by the
// generated bad_inputs_matmul_backward.cpp with
// support/matmul_backward_adapter.hpp: GELU off and on), what is matmul's own:
// dout's rank-3 extents reported on inp, padded views, implementations not
// compiled in or not available, C or OC above an implementation's column
// limit, an implementation without the precision or without TF32, TF32 with
// bf16 inputs, device memory on a host space. Each call must throw
// std::invalid_argument whose message names the argument and what was
// expected, and leave every output bit-for-bit as it was.
#include "contract/bad_inputs.hpp"
#include "support/column_limits.hpp"
#include "support/compare.hpp"
#include "support/matmul_backward_adapter.hpp"
#include "support/matmul_forward_adapter.hpp"
#include "support/problem.hpp"
#include "support/sparse.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <llmk/matmul_backward.hpp>
#include <ops/matmul_backward/implementations.hpp>  // the implementations' limits (internal)

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace {

using llmk_test::bitwise_equal;
using llmk_test::fill_random;
using ::testing::HasSubstr;
using Host = Kokkos::DefaultHostExecutionSpace;
using Matrix = llmk::Matrix<Host>;
using Vector = llmk::Vector<Host>;
using Tensor3 = llmk::Tensor3<Host>;

// An output's memory, to compare before and after a call (its bytes: float or bf16).
struct Span {
  const char* name;
  const void* data;
  std::size_t bytes;
};
template <class View>
Span span_of(const char* name, const View& v) {
  return {name, v.data(), v.span() * sizeof(typename View::value_type)};
}
template <class T>
Span span_of(const char* name, const std::vector<T>& v) {
  return {name, v.data(), v.size() * sizeof(T)};
}

template <class View, class... Extents>
View random_view(const char* label, std::uint32_t seed, Extents... extents) {
  const View v(std::string(label), static_cast<std::size_t>(extents)...);
  std::vector<float> values(v.span());
  fill_random(values, seed);
  std::copy(values.begin(), values.end(), v.data());
  return v;
}

std::vector<float> random_vector(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  fill_random(v, seed);
  return v;
}

// `call` must throw std::invalid_argument with every one of `fragments` in its
// message, and leave `outputs` unchanged.
void expect_invalid_argument(const std::function<void()>& call,
                             const std::vector<std::string>& fragments,
                             const std::vector<Span>& outputs) {
  std::vector<std::vector<unsigned char>> before;
  for (const Span& s : outputs) {
    const auto* b = static_cast<const unsigned char*>(s.data);
    before.emplace_back(b, b + s.bytes);
  }
  try {
    call();
    ADD_FAILURE() << "no exception thrown";
  } catch (const std::invalid_argument& e) {
    for (const std::string& f : fragments) EXPECT_THAT(e.what(), HasSubstr(f));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected std::invalid_argument, got another exception: " << e.what();
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Span& s = outputs[i];
    const auto* b = static_cast<const unsigned char*>(s.data);
    std::size_t first = 0;
    while (first < s.bytes && b[first] == before[i][first]) ++first;
    EXPECT_EQ(first, s.bytes) << s.name << " changed: its byte " << first << " (of " << s.bytes
                              << ") differs";
  }
}

// B = 2, T = 3 (M = 6), C = 4, OC = 5: every extent differs from the others,
// so a message's numbers identify which extent it is about.
struct Views {
  static constexpr std::int64_t B = 2, T = 3, M = 6, C = 4, OC = 5;
  Matrix dinp = random_view<Matrix>("dinp", 1, M, C);
  Matrix dweight = random_view<Matrix>("dweight", 2, OC, C);
  Vector dbias = random_view<Vector>("dbias", 3, OC);
  Matrix dout = random_view<Matrix>("dout", 4, M, OC);
  Matrix inp = random_view<Matrix>("inp", 5, M, C);
  Matrix weight = random_view<Matrix>("weight", 6, OC, C);

  // The rank-2 entry point with any argument replaced.
  static void call(const Matrix& dinp_, const Matrix& dweight_, const Vector& dbias_,
                   const Matrix& dout_, const Matrix& inp_, const Matrix& weight_,
                   const std::string& impl = "auto") {
    llmk::MatmulBackwardOptions options;
    options.impl = impl;
    llmk::matmul_backward(Host(), dinp_, dweight_, dbias_, dout_, inp_, weight_, options);
    Host().fence();
  }
  std::vector<Span> outputs() const {
    return {span_of("dinp", dinp), span_of("dweight", dweight), span_of("dbias", dbias)};
  }

  // The tests (registered at the end).
  void Rank3DoutTimeDiffersFromInp();
  void PaddedRank2View();
  void PaddedRank3View();
  void ImplementationNotCompiledIn();
  void ImplementationNotAvailableOnTheSpace();
  void UnavailableImplementationOnEmptyProblem();
};

// dout's T differs from the activations': reported on inp, whose expected
// extents come from dout.
void Views::Rank3DoutTimeDiffersFromInp() {
  const auto dinp3 = random_view<Tensor3>("dinp", 7, B, T, C);
  const auto dout3 = random_view<Tensor3>("dout", 8, B, T + 2, OC);
  const auto inp3 = random_view<Tensor3>("inp", 9, B, T, C);
  expect_invalid_argument(
      [&] { llmk::matmul_backward(Host(), dinp3, dweight, dbias, dout3, inp3, weight); },
      {"'inp'", "(2, 3, 4)", "(2, 5, 4)", "dout"},
      {span_of("dinp", dinp3), span_of("dweight", dweight), span_of("dbias", dbias)});
}

// --- non-contiguous views ------------------------------------------------------
// llmk's view types are LayoutRight, so a strided subview (LayoutStride) does
// not convert to them: passing one is a compile error, not a run-time one; a
// subview of whole rows is contiguous and valid. A padded allocation is the
// way a non-contiguous LayoutRight view reaches the API: Kokkos pads a row of
// C = 100 floats to a multiple of its alignment.

void Views::PaddedRank2View() {
  constexpr std::int64_t Cp = 100;
  Matrix padded(Kokkos::view_alloc(std::string("dinp"), Kokkos::AllowPadding), M, Cp);
  if (padded.span_is_contiguous()) GTEST_SKIP() << "this Kokkos does not pad a row of 100 floats";
  Kokkos::deep_copy(padded, 0.5f);
  const auto dweight_ = random_view<Matrix>("dweight", 7, OC, Cp);
  const auto inp_ = random_view<Matrix>("inp", 8, M, Cp);
  const auto weight_ = random_view<Matrix>("weight", 9, OC, Cp);
  expect_invalid_argument([&] { call(padded, dweight_, dbias, dout, inp_, weight_); },
                          {"'dinp'", "(6, 100)", "not contiguous"},
                          {span_of("dinp", padded), span_of("dweight", dweight_),
                           span_of("dbias", dbias)});
}

void Views::PaddedRank3View() {
  constexpr std::int64_t Cp = 100;
  Tensor3 padded(Kokkos::view_alloc(std::string("inp"), Kokkos::AllowPadding), B, T, Cp);
  if (padded.span_is_contiguous()) GTEST_SKIP() << "this Kokkos does not pad a B×T×100 view";
  Kokkos::deep_copy(padded, 0.25f);
  const auto dinp3 = random_view<Tensor3>("dinp", 7, B, T, Cp);
  const auto dout3 = random_view<Tensor3>("dout", 8, B, T, OC);
  const auto dweight_ = random_view<Matrix>("dweight", 9, OC, Cp);
  const auto weight_ = random_view<Matrix>("weight", 10, OC, Cp);
  expect_invalid_argument(
      [&] { llmk::matmul_backward(Host(), dinp3, dweight_, dbias, dout3, padded, weight_); },
      {"'inp'", "(2, 3, 100)", "not contiguous"},
      {span_of("dinp", dinp3), span_of("dweight", dweight_), span_of("dbias", dbias)});
}

// --- implementations -----------------------------------------------------------
// The bias pass of the benchmarks refuses unknown names as the entry points do
// (the contract's ImplNames: llmk::available, matmul_backward_workspace_bytes).
void unknown_name_in_the_bias_pass() {
  llmk::Context<Host> ctx;
  const llmk::Vector<Host> dbias("dbias", 5);
  const llmk::Matrix<Host> dout("dout", 6, 5);
  EXPECT_THROW(llmk::matmul_backward_bias_pass(ctx, dbias, dout, "cuda-graphs"),
               std::invalid_argument);
}

// An implementation whose library is not part of this build (cuBLAS in a
// build without CUDA) is known by name but not available: the message says so.
void Views::ImplementationNotCompiledIn() {
  int missing = 0;
  for (const llmk::MatmulBackwardImplInfo& info : llmk::impls<llmk::MatmulBackward>()) {
    if (info.compiled) continue;
    ++missing;
    SCOPED_TRACE(info.name);
    EXPECT_FALSE((llmk::available<llmk::MatmulBackward, Host>(info.name)));
    expect_invalid_argument([&] { call(dinp, dweight, dbias, dout, inp, weight, info.name); },
                            {"implementation '" + info.name + "'", "not available",
                             "not part of this build"},
                            outputs());
  }
  if (missing == 0) GTEST_SKIP() << "every implementation is compiled into this build";
}

// Compiled in, but not for this execution space (cuBLAS on a host space of a
// CUDA build).
void Views::ImplementationNotAvailableOnTheSpace() {
  int unavailable = 0;
  for (const llmk::MatmulBackwardImplInfo& info : llmk::impls<llmk::MatmulBackward>()) {
    if (!info.compiled || llmk::available<llmk::MatmulBackward, Host>(info.name)) continue;
    ++unavailable;
    SCOPED_TRACE(info.name);
    expect_invalid_argument([&] { call(dinp, dweight, dbias, dout, inp, weight, info.name); },
                            {"'" + info.name + "'", "not available", std::string(Host::name())},
                            outputs());
  }
  if (unavailable == 0)
    GTEST_SKIP() << "every compiled implementation is available on " << Host::name();
}

// Asking for an implementation the space lacks is an error whatever the sizes:
// code that passes its tests on small or empty problems must not fail later.
void Views::UnavailableImplementationOnEmptyProblem() {
  const Matrix dinp0("dinp", M, 0), dweight0("dweight", OC, 0), inp0("inp", M, 0),
      weight0("weight", OC, 0);
  for (const llmk::MatmulBackwardImplInfo& info : llmk::impls<llmk::MatmulBackward>()) {
    if (llmk::available<llmk::MatmulBackward, Host>(info.name)) continue;
    SCOPED_TRACE(info.name);
    expect_invalid_argument([&] { call(dinp0, dweight0, dbias, dout, inp0, weight0, info.name); },
                            {"'" + info.name + "'", "not available"}, {span_of("dbias", dbias)});
  }
}

// --- sizes above an implementation's limit ---------------------------------------
// Implementations whose library counts columns in int (team's league over OC,
// KokkosBlas' BLAS) refuse C or OC above their max_cols. The arrays of such a
// call are gigabytes: they are sparse mappings (support/sparse.hpp) that the
// call must leave untouched, and refuse before it writes a page.

void column_limits_refused_before_any_write() {
  const std::vector<llmk_test::LimitedImpl> limited =
      llmk_test::impls_with_column_limits<llmk::op::matmul_backward::Implementations, Host>();
  if (limited.empty()) GTEST_SKIP() << "no implementation on " << Host::name() << " has a limit";
  for (const llmk_test::LimitedImpl& li : limited) {
    const std::int64_t big = li.max_cols + 1;
    struct Dims {
      std::int64_t C, OC;
      const char* name;
    };
    for (const Dims& dims : {Dims{1, big, "OC"}, Dims{big, 1, "C"}, Dims{0, big, "OC"}}) {
      SCOPED_TRACE(li.name + ": C=" + std::to_string(dims.C) + " OC=" + std::to_string(dims.OC));
      const std::int64_t M = 3, C = dims.C, OC = dims.OC;
      // Every array at its full size, mapped but not backed.
      llmk_test::SparseBuffer dinp(std::size_t(M * C) * 4), inp(std::size_t(M * C) * 4),
          dout(std::size_t(M * OC) * 4), weight(std::size_t(OC * C) * 4),
          dweight(std::size_t(OC * C) * 4), dbias(std::size_t(OC) * 4);
      for (const auto* b : {&dinp, &inp, &dout, &weight, &dweight, &dbias})
        if (!b->ok()) GTEST_SKIP() << "cannot map " << b->bytes() << " bytes of address space";
      // Sentinels in the first and last element of each output.
      std::vector<float> sentinels = random_vector(6, 12);
      const llmk_test::SparseBuffer* outs[] = {&dinp, &dweight, &dbias};
      for (int k = 0; k < 3; ++k) {
        const std::size_t n = outs[k]->bytes() / 4;
        if (n == 0) continue;
        if (n == 1) sentinels[2 * k] = sentinels[2 * k + 1];  // first = last
        outs[k]->floats()[0] = sentinels[2 * k];
        outs[k]->floats()[n - 1] = sentinels[2 * k + 1];
      }
      std::size_t resident[3];
      for (int k = 0; k < 3; ++k) resident[k] = outs[k]->resident_pages();
      llmk::MatmulBackwardOptions options;
      options.impl = li.name;
      try {
        llmk::matmul_backward(Host(), dinp.floats(), dweight.floats(), dbias.floats(),
                              dout.floats(), inp.floats(), weight.floats(), 1, M, C, OC, options);
        Host().fence();
        ADD_FAILURE() << "no exception thrown";
      } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), HasSubstr(std::string(dims.name) + " = " + std::to_string(big)));
        EXPECT_THAT(e.what(), HasSubstr("exceeds " + std::to_string(li.max_cols)));
        EXPECT_THAT(e.what(), HasSubstr("'" + li.name + "'"));
      }
      for (int k = 0; k < 3; ++k) {
        const char* names[] = {"dinp", "dweight", "dbias"};
        const std::size_t n = outs[k]->bytes() / 4;
        EXPECT_EQ(outs[k]->resident_pages(), resident[k]) << names[k] << ": pages were written";
        if (n == 0) continue;
        EXPECT_TRUE(bitwise_equal(names[k], outs[k]->floats(), &sentinels[2 * k], 1));
        EXPECT_TRUE(bitwise_equal(names[k], outs[k]->floats() + n - 1, &sentinels[2 * k + 1], 1));
      }
    }
  }
}

// --- element types, precisions and math modes ------------------------------------
// The same problem (B = 2, T = 3, C = 4, OC = 5) with every array in float and
// in bf16: a call mixing them the wrong way must throw naming the argument.

template <class View, class... Extents>
View random_bf16_view(const char* label, std::uint32_t seed, Extents... extents) {
  const View v(std::string(label), static_cast<std::size_t>(extents)...);
  std::vector<float> values(v.span());
  fill_random(values, seed);
  for (std::size_t i = 0; i < values.size(); ++i)
    v.data()[i] = llmk::bf16::from_bits(llmk::reference::float_to_bf16_bits(values[i]));
  return v;
}

struct TypedViews : Views {
  using Matrix16 = llmk::Matrix<Host, llmk::bf16>;
  using Vector16 = llmk::Vector<Host, llmk::bf16>;
  using Tensor16 = llmk::Tensor3<Host, llmk::bf16>;
  Matrix pre_gelu = random_view<Matrix>("pre_gelu", 7, M, C);
  Matrix16 dinp16 = random_bf16_view<Matrix16>("dinp", 11, M, C);
  Matrix16 dweight16 = random_bf16_view<Matrix16>("dweight", 12, OC, C);
  Vector16 dbias16 = random_bf16_view<Vector16>("dbias", 13, OC);
  Matrix16 dout16 = random_bf16_view<Matrix16>("dout", 14, M, OC);
  Matrix16 inp16 = random_bf16_view<Matrix16>("inp", 15, M, C);
  Matrix16 weight16 = random_bf16_view<Matrix16>("weight", 16, OC, C);
  Matrix16 pre_gelu16 = random_bf16_view<Matrix16>("pre_gelu", 17, M, C);

  static llmk::MatmulBackwardOptions with(const std::string& impl, llmk::Math math) {
    llmk::MatmulBackwardOptions options;
    options.impl = impl;
    options.math = math;
    return options;
  }
  std::vector<Span> outputs16() const {
    return {span_of("dinp", dinp16), span_of("dweight", dweight16), span_of("dbias", dbias16)};
  }

  void ImplementationWithoutThePrecision();
  void Tf32OfAnImplementationWithoutIt();
  void Tf32WithBf16Inputs();
};

// An implementation asked for a configuration its info does not declare.
void TypedViews::ImplementationWithoutThePrecision() {
  int tested = 0;
  for (const llmk::MatmulBackwardImplInfo& info : llmk::impls<llmk::MatmulBackward>()) {
    if (!llmk::available<llmk::MatmulBackward, Host>(info.name)) continue;
    const auto& ps = info.precisions;
    const bool bf16 = std::find(ps.begin(), ps.end(), "bf16") != ps.end();
    const bool mixed = std::find(ps.begin(), ps.end(), "bf16-fp32grad") != ps.end();
    SCOPED_TRACE(info.name);
    if (!bf16) {
      ++tested;
      expect_invalid_argument(
          [&] {
            llmk::matmul_backward(Host(), dinp16, dweight16, dbias16, dout16, inp16, weight16,
                                  with(info.name, llmk::Math::fp32));
          },
          {"'" + info.name + "'", "does not run precision 'bf16'"}, outputs16());
    }
    if (!mixed) {
      ++tested;
      expect_invalid_argument(
          [&] {
            llmk::matmul_backward(Host(), dinp16.data(), dweight.data(), dbias.data(),
                                  dout16.data(), inp16.data(), weight16.data(), B, T, C, OC,
                                  with(info.name, llmk::Math::fp32));
          },
          {"'" + info.name + "'", "does not run precision 'bf16-fp32grad'"},
          {span_of("dinp", dinp16), span_of("dweight", dweight), span_of("dbias", dbias)});
    }
  }
  if (tested == 0) GTEST_SKIP() << "every implementation on " << Host::name() << " runs every precision";
}

// Math::tf32 of an implementation without TF32 (by its info), and of "auto"
// when none available here has it.
void TypedViews::Tf32OfAnImplementationWithoutIt() {
  bool any_tf32 = false;
  int tested = 0;
  for (const llmk::MatmulBackwardImplInfo& info : llmk::impls<llmk::MatmulBackward>()) {
    if (!llmk::available<llmk::MatmulBackward, Host>(info.name)) continue;
    any_tf32 = any_tf32 || info.tf32;
    if (info.tf32) continue;
    ++tested;
    SCOPED_TRACE(info.name);
    expect_invalid_argument(
        [&] {
          llmk::matmul_backward(Host(), dinp, dweight, dbias, dout, inp, weight,
                                with(info.name, llmk::Math::tf32));
        },
        {"'" + info.name + "'", "options.math", "TF32"}, outputs());
  }
  if (!any_tf32) {
    ++tested;
    expect_invalid_argument(
        [&] {
          llmk::matmul_backward(Host(), dinp, dweight, dbias, dout, inp, weight,
                                with("auto", llmk::Math::tf32));
        },
        {"no implementation", "options.math = Math::tf32"}, outputs());
  }
  if (tested == 0) GTEST_SKIP() << "every implementation on " << Host::name() << " has TF32";
}

// Math::tf32 with bf16 inputs: refused whatever the implementation.
void TypedViews::Tf32WithBf16Inputs() {
  std::vector<std::string> names{"auto"};
  for (const llmk::MatmulBackwardImplInfo& info : llmk::impls<llmk::MatmulBackward>())
    if (llmk::available<llmk::MatmulBackward, Host>(info.name)) names.push_back(info.name);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    expect_invalid_argument(
        [&] {
          llmk::matmul_backward(Host(), dinp16, dweight16, dbias16, dout16, inp16, weight16,
                                with(name, llmk::Math::tf32));
        },
        {"options.math", "float32 inputs", "'bf16'"}, outputs16());
    expect_invalid_argument(
        [&] {
          llmk::matmul_backward(Host(), dinp16.data(), dweight.data(), dbias.data(), dout16.data(),
                                inp16.data(), weight16.data(), pre_gelu16.data(), B, T, C, OC,
                                with(name, llmk::Math::tf32));
        },
        {"options.math", "float32 inputs", "'bf16-fp32grad'"},
        {span_of("dinp", dinp16), span_of("dweight", dweight), span_of("dbias", dbias)});
  }
}

// --- memory spaces (CUDA builds) -------------------------------------------------

#ifdef KOKKOS_ENABLE_CUDA
struct RawArrays {
  static constexpr std::int64_t B = 2, T = 3, M = 6, C = 4, OC = 5;
  std::vector<float> dinp = random_vector(M * C, 1), dweight = random_vector(OC * C, 2),
                     dbias = random_vector(OC, 3), dout = random_vector(M * OC, 4),
                     inp = random_vector(M * C, 5), weight = random_vector(OC * C, 6);

  void DevicePointerOnAHostSpace();
};

void RawArrays::DevicePointerOnAHostSpace() {
  Kokkos::View<float*, Kokkos::LayoutRight, Kokkos::CudaSpace> device_dinp("dinp", M * C);
  expect_invalid_argument(
      [&] {
        llmk::matmul_backward(Host(), device_dinp.data(), dweight.data(), dbias.data(),
                              dout.data(), inp.data(), weight.data(), B, T, C, OC);
      },
      {"'dinp'", "(6, 4)", "device memory"},
      {span_of("dweight", dweight), span_of("dbias", dbias)});
}
#endif

// Each of matmul's own as "matmul_backward/<aspect>.<name>", as the contract's.
void add(const std::string& aspect, const std::string& name, std::function<void()> body) {
  llmk_test::contract::add_test("matmul_backward", aspect, name, "", std::move(body));
}

[[maybe_unused]] const bool registered = [] {
  add("Extents", "Rank3DoutTimeDiffersFromInp", [] { Views().Rank3DoutTimeDiffersFromInp(); });
  add("Extents", "PaddedRank2View", [] { Views().PaddedRank2View(); });
  add("Extents", "PaddedRank3View", [] { Views().PaddedRank3View(); });
  add("Implementations", "UnknownNameInTheBiasPass", unknown_name_in_the_bias_pass);
  add("Implementations", "NotCompiledIn", [] { Views().ImplementationNotCompiledIn(); });
  add("Implementations", "NotAvailableOnTheSpace",
      [] { Views().ImplementationNotAvailableOnTheSpace(); });
  add("Implementations", "UnavailableOnEmptyProblem",
      [] { Views().UnavailableImplementationOnEmptyProblem(); });
  add("ColumnLimits", "CAndOCAboveMaxColsRefusedBeforeAnyWrite",
      column_limits_refused_before_any_write);
  add("Precisions", "ImplementationWithoutThePrecision",
      [] { TypedViews().ImplementationWithoutThePrecision(); });
  add("Precisions", "Tf32OfAnImplementationWithoutIt",
      [] { TypedViews().Tf32OfAnImplementationWithoutIt(); });
  add("Precisions", "Tf32WithBf16Inputs", [] { TypedViews().Tf32WithBf16Inputs(); });
#ifdef KOKKOS_ENABLE_CUDA
  add("MemorySpaces", "DevicePointerOnAHostSpace",
      [] { RawArrays().DevicePointerOnAHostSpace(); });
#endif
  return true;
}();

}  // namespace
