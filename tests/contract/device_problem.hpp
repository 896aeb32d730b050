// An operation's problem in an execution space's memory (one GuardedArray per
// argument, as the adapter's ArgSpecs say), calls through each entry point,
// the results read back, and their comparison with the float64 reference;
// and how the contract tests register themselves with GoogleTest.
#pragma once

#include "contract/operation.hpp"
#include "support/compare.hpp"

#include <gtest/gtest.h>
#include <llmk/context.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace llmk_test::contract {

// --- registration ----------------------------------------------------------------

// Every contract test: its body is a function (tests are registered from the
// adapter's lists with ::testing::RegisterTest, one fixture type for all).
class ContractTest : public ::testing::Test {
 public:
  explicit ContractTest(std::function<void()> body) : body_(std::move(body)) {}
  void TestBody() override { body_(); }

 private:
  std::function<void()> body_;
};

// Registers "<op>/<aspect>.<name>"; `description` is what gtest prints as the
// test's parameter.
inline void add_test(const std::string& op, const std::string& aspect, const std::string& name,
                     const std::string& description, std::function<void()> body,
                     const char* file = __FILE__, int line = __LINE__) {
  ::testing::RegisterTest((op + "/" + aspect).c_str(), name.c_str(), nullptr,
                          description.c_str(), file, line,
                          [body]() -> ContractTest* { return new ContractTest(body); });
}

// --- views and pointers ------------------------------------------------------------

// An unmanaged view of `data` with the given element type and extents (1 to
// 4), as the API's (Const)TensorRef: the conversion a user's typed view goes through.
template <class Space>
llmk::TensorRef<Space> out_view(void* data, llmk::DType dtype, const std::vector<std::int64_t>& e) {
  return dtype == llmk::DType::f32 ? typed_view<Space, float>(data, e)
                                   : typed_view<Space, llmk::bf16>(data, e);
}
template <class Space>
llmk::ConstTensorRef<Space> in_view(const void* data, llmk::DType dtype,
                                    const std::vector<std::int64_t>& e) {
  return dtype == llmk::DType::f32 ? typed_const_view<Space, float>(data, e)
                                   : typed_const_view<Space, llmk::bf16>(data, e);
}

// Op's calls, with the int32 arguments apart where it has them
// (operation.hpp).
template <class Op, class Target, class Space>
void call_views(Target& target, const std::vector<llmk::TensorRef<Space>>& outs,
                const std::vector<llmk::ConstTensorRef<Space>>& ins,
                const std::vector<IntArg>& ints, const std::vector<std::int64_t>& dims,
                const typename Op::Options& options) {
  if constexpr (has_int_args<Op>::value)
    Op::call(target, outs, ins, ints, dims, options);
  else
    (void)ints, Op::call(target, outs, ins, options);
}
template <class Op, class Target>
void call_pointers(Target& target, const std::vector<llmk::BufferRef>& outs,
                   const std::vector<llmk::ConstBufferRef>& ins,
                   const std::vector<const std::int32_t*>& ints,
                   const std::vector<std::int64_t>& dims, const typename Op::Options& options) {
  if constexpr (has_int_args<Op>::value)
    Op::call_raw(target, outs, ins, ints, dims, options);
  else
    (void)ints, Op::call_raw(target, outs, ins, dims, options);
}

// Calls the operation through `entry` with argument i at data[i] as specs[i]
// says (extents, element type; absent: an output an empty view, an input no
// argument, either nullptr through raw pointers), on `ctx` or, without one,
// on `exec`'s implicit context; then fences (unless fence = false: only
// enqueued).
template <class Op, class Space>
void call_with(Entry entry, const std::vector<ArgSpec>& specs, const std::vector<void*>& data,
               const std::vector<std::int64_t>& dims, const typename Op::Options& options,
               llmk::Context<Space>* ctx = nullptr, const Space& exec = Space(),
               bool fence = true) {
  if (entry == Entry::RawPointers) {
    std::vector<llmk::BufferRef> outs;
    std::vector<llmk::ConstBufferRef> ins;
    std::vector<const std::int32_t*> ints;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].int32) {
        ints.push_back(specs[i].present ? static_cast<const std::int32_t*>(data[i]) : nullptr);
        continue;
      }
      const llmk::BufferRef b =
          specs[i].present ? llmk::BufferRef(data[i], specs[i].dtype) : llmk::BufferRef(nullptr);
      if (specs[i].output)
        outs.push_back(b);
      else
        ins.push_back(b);
    }
    if (ctx)
      call_pointers<Op>(*ctx, outs, ins, ints, dims, options);
    else
      call_pointers<Op>(exec, outs, ins, ints, dims, options);
  } else {
    std::vector<llmk::TensorRef<Space>> outs;
    std::vector<llmk::ConstTensorRef<Space>> ins;
    std::vector<IntArg> ints;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const ArgSpec& s = specs[i];
      // An absent output: an empty view (whose data pointer lies between two
      // guards); an absent input: none (llmk's default TensorRef).
      const std::vector<std::int64_t> e =
          !s.present ? std::vector<std::int64_t>{0}
                     : entry == Entry::Rank3Views ? s.rank3 : s.rank2;
      if (s.int32)
        ints.push_back(s.present ? IntArg{static_cast<const std::int32_t*>(data[i]), e} : IntArg{});
      else if (s.output)
        outs.push_back(out_view<Space>(data[i], s.dtype, e));
      else if (s.present)
        ins.push_back(in_view<Space>(data[i], s.dtype, e));
      else
        ins.emplace_back();
    }
    if (ctx)
      call_views<Op>(*ctx, outs, ins, ints, dims, options);
    else
      call_views<Op>(exec, outs, ins, ints, dims, options);
  }
  if (fence) (ctx ? ctx->exec() : exec).fence();
}

inline std::vector<std::int64_t> dim_values(const std::vector<Dim>& dims) {
  std::vector<std::int64_t> v;
  for (const Dim& d : dims) v.push_back(d.value);
  return v;
}

// --- a problem on the device --------------------------------------------------------

// Op's problem p in Space's memory, each argument between guard bands,
// alignments as its ArgSpec says. (Allocates: make it on the thread that
// initialized Kokkos.)
template <class Op, class Space>
class DeviceProblem {
 public:
  using Problem = typename Op::Problem;

  explicit DeviceProblem(const Problem& p)
      : specs_(Op::args(p.shape, p.precision)), dims_(dim_values(Op::dims(p.shape))) {
    arrays_.reserve(specs_.size());
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      if (specs_[i].int32)
        arrays_.emplace_back(specs_[i].name, int_values_of<Op>(p, i), specs_[i].alignment);
      else
        arrays_.emplace_back(specs_[i].name, Op::values(p, i), specs_[i].alignment,
                             specs_[i].dtype);
    }
  }

  const std::vector<ArgSpec>& specs() const { return specs_; }
  const GuardedArray<Space>& array(std::size_t i) const { return arrays_[i]; }
  const std::vector<std::int64_t>& dims() const { return dims_; }
  // Every argument's interior.
  std::vector<void*> data() const {
    std::vector<void*> v;
    for (const GuardedArray<Space>& a : arrays_) v.push_back(a.raw());
    return v;
  }

  // The outputs back to p's initial values, enqueued on exec (any thread).
  void reset_outputs(const Space& exec, const Problem& p) const {
    for (std::size_t i = 0; i < specs_.size(); ++i)
      if (specs_[i].output) arrays_[i].upload(exec, Op::values(p, i));
  }

  void call(Entry entry, const typename Op::Options& options, llmk::Context<Space>* ctx = nullptr,
            const Space& exec = Space(), bool fence = true) const {
    call_with<Op, Space>(entry, specs_, data(), dims_, options, ctx, exec, fence);
  }
  // The same with the arguments of zero elements as null pointers (raw entry).
  void call_with_null_empties(const typename Op::Options& options) const {
    std::vector<void*> d = data();
    for (std::size_t i = 0; i < specs_.size(); ++i)
      if (specs_[i].elements() == 0) d[i] = nullptr;
    call_with<Op, Space>(Entry::RawPointers, specs_, d, dims_, options);
  }

  // The outputs into `out` (after fencing exec). Fails if a guard band changed
  // or an input is not bitwise what p holds.
  ::testing::AssertionResult download(const Problem& p, Outputs& out,
                                      const Space& exec = Space()) const {
    out.clear();
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      if (specs_[i].int32) {  // (an input)
        std::vector<std::int32_t> v;
        auto ok = arrays_[i].download(specs_[i].name.c_str(), v);
        if (ok) ok = bitwise_equal(("input " + specs_[i].name).c_str(), v, int_values_of<Op>(p, i));
        if (!ok) return ok;
        continue;
      }
      std::vector<float> v;
      const auto ok = arrays_[i].download(specs_[i].name.c_str(), v, exec);
      if (!ok) return ok;
      if (specs_[i].output) {
        out.push_back(std::move(v));
        continue;
      }
      const std::string what = "input " + specs_[i].name;
      const auto same = bitwise_equal(what.c_str(), v, Op::values(p, i));
      if (!same) return same;
    }
    return ::testing::AssertionSuccess();
  }

 private:
  std::vector<ArgSpec> specs_;
  std::vector<std::int64_t> dims_;
  std::vector<GuardedArray<Space>> arrays_;
};

// --- comparisons --------------------------------------------------------------------

// An adapter that compares its outputs its own way has Op::matches
// (operation.hpp).
template <class Op, class = void>
struct has_own_comparison : std::false_type {};
template <class Op>
struct has_own_comparison<Op, std::void_t<decltype(Op::matches(
                                  std::declval<const typename Op::Problem&>(), std::size_t(0),
                                  std::declval<const std::vector<float>&>(),
                                  std::declval<const std::vector<double>&>(), 1.0))>>
    : std::true_type {};

// Every output within Op's tolerance (per precision and output) of the
// float64 reference, NaN and ±Inf where it has them (or as Op::matches says,
// for the problem p: it needs p); bf16 outputs also rounded once
// (support/compare.hpp) where `check_rounding` (the implementation's info
// promises it).
template <class Op>
void expect_matches_reference(const std::vector<ArgSpec>& specs, const Outputs& r,
                              const std::vector<std::vector<double>>& ref, Precision precision,
                              bool check_rounding, const typename Op::Problem* p = nullptr) {
  const std::vector<std::size_t> outs = output_indices(specs);
  ASSERT_EQ(r.size(), outs.size());
  ASSERT_EQ(ref.size(), outs.size());
  for (std::size_t k = 0; k < outs.size(); ++k) {
    const ArgSpec& s = specs[outs[k]];
    if constexpr (has_own_comparison<Op>::value) {
      ASSERT_NE(p, nullptr) << Op::name() << " compares its outputs with its problem's help";
      EXPECT_TRUE(Op::matches(*p, k, r[k], ref[k], 1.0));
    } else {
      (void)p;
      EXPECT_TRUE(matches_reference(s.name.c_str(), r[k], ref[k], s.cols(), Op::tolerance(precision, k)));
    }
    if (check_rounding && s.dtype == llmk::DType::bf16)
      EXPECT_TRUE(rounded_once_to_bf16(s.name.c_str(), r[k], ref[k], s.cols()));
  }
}

// An adapter whose outputs' float32 errors are bounded element by element has
//   static std::vector<std::vector<double>> float32_error_bounds(
//       const Problem&, const Overwrites&, const std::vector<std::vector<double>>& ref);
// per output a bound for each element (support/compare.hpp, bf16_within_bounds).
template <class Op, class = void>
struct has_error_bounds : std::false_type {};
template <class Op>
struct has_error_bounds<Op, std::void_t<decltype(Op::float32_error_bounds(
                                std::declval<const typename Op::Problem&>(),
                                std::declval<const Overwrites&>(),
                                std::declval<const std::vector<std::vector<double>>&>()))>>
    : std::true_type {};

// The same for p's results with the updates `o` (ref: Op::reference(p, o), or
// p's with NaN where a bound allows it). Where Op bounds each element, its bf16
// outputs are checked against those bounds (bitwise where the implementation
// `rounds_once`, three roundings and no scale error where not); else as above.
template <class Op>
void expect_matches_reference(const typename Op::Problem& p, const Overwrites& o, const Outputs& r,
                              const std::vector<std::vector<double>>& ref, bool rounds_once) {
  const std::vector<ArgSpec> specs = Op::args(p.shape, p.precision);
  if constexpr (has_error_bounds<Op>::value) {
    expect_matches_reference<Op>(specs, r, ref, p.precision, false, &p);
    const std::vector<std::size_t> outs = output_indices(specs);
    if (r.size() != outs.size() || ref.size() != outs.size()) return;  // (failed above)
    bool any_bf16 = false;
    for (std::size_t i : outs) any_bf16 = any_bf16 || specs[i].dtype == llmk::DType::bf16;
    if (!any_bf16) return;
    const std::vector<std::vector<double>> bounds = Op::float32_error_bounds(p, o, ref);
    for (std::size_t k = 0; k < outs.size(); ++k) {
      const ArgSpec& s = specs[outs[k]];
      if (s.dtype != llmk::DType::bf16) continue;
      const std::vector<float> init = o[k] ? std::vector<float>{} : Op::values(p, outs[k]);
      EXPECT_TRUE(bf16_within_bounds(s.name.c_str(), r[k], ref[k], bounds[k], init, rounds_once,
                                     s.cols()));
    }
  } else {
    (void)o;
    expect_matches_reference<Op>(specs, r, ref, p.precision, rounds_once, &p);
  }
}

// Bitwise the same outputs (and llmk_test's bitwise_equal of two arrays).
using llmk_test::bitwise_equal;
inline ::testing::AssertionResult bitwise_equal(const std::vector<ArgSpec>& specs,
                                                const Outputs& actual, const Outputs& expected) {
  const std::vector<std::size_t> outs = output_indices(specs);
  if (actual.size() != outs.size() || expected.size() != outs.size())
    return ::testing::AssertionFailure() << "not every output was read back";
  for (std::size_t k = 0; k < outs.size(); ++k) {
    const auto r = llmk_test::bitwise_equal(specs[outs[k]].name.c_str(), actual[k], expected[k]);
    if (!r) return r;
  }
  return ::testing::AssertionSuccess();
}

// A result of problem p (in its precision) within the sum of the two
// results' tolerances of another result of p: twice Op's tolerance where both
// are of one precision (an implementation that does not promise bitwise
// repeatable results), or a result of precision `other` (tf32 against fp32 on
// a space without TF32). Op::matches, where the adapter has it, with scale 2
// (its operations run every precision everywhere: other is p's).
template <class Op>
::testing::AssertionResult close_to(const typename Op::Problem& p, const Outputs& actual,
                                    const Outputs& expected, Precision other) {
  const Precision precision = p.precision;
  const std::vector<ArgSpec> specs = Op::args(p.shape, precision);
  const std::vector<std::size_t> outs = output_indices(specs);
  if (actual.size() != outs.size() || expected.size() != outs.size())
    return ::testing::AssertionFailure() << "not every output was read back";
  for (std::size_t k = 0; k < outs.size(); ++k) {
    const ArgSpec& s = specs[outs[k]];
    if constexpr (has_own_comparison<Op>::value) {
      if (other != precision)
        return ::testing::AssertionFailure() << Op::name() << " has no stand-in precision";
      const auto r = Op::matches(p, k, actual[k],
                                 std::vector<double>(expected[k].begin(), expected[k].end()), 2.0);
      if (!r) return r;
    } else {
      const auto r = matches_reference(s.name.c_str(), actual[k], expected[k], s.cols(),
                                       Op::tolerance(precision, k) + Op::tolerance(other, k));
      if (!r) return r;
    }
  }
  return ::testing::AssertionSuccess();
}

template <class Op>
::testing::AssertionResult close_to(const typename Op::Problem& p, const Outputs& actual,
                                    const Outputs& expected) {
  return close_to<Op>(p, actual, expected, p.precision);
}

// Values as an array of `dtype` holds them (read back as float): bf16 ones
// rounded as GuardedArray uploads them.
inline std::vector<float> as_stored(std::vector<float> v, llmk::DType dtype) {
  if (dtype == llmk::DType::bf16)
    for (float& x : v)
      x = llmk::reference::bf16_bits_to_float(llmk::reference::float_to_bf16_bits(x));
  return v;
}

// The outputs of a problem as they start on the device: its initial values
// as stored (for results that must come back unchanged).
template <class Op>
Outputs initial_outputs(const typename Op::Problem& p) {
  Outputs v;
  const std::vector<ArgSpec> specs = Op::args(p.shape, p.precision);
  for (std::size_t i : output_indices(specs)) v.push_back(as_stored(Op::values(p, i), specs[i].dtype));
  return v;
}

// p with the outputs that `o` overwrites poisoned (an inout one never is:
// its values are what the call reads).
template <class Op>
typename Op::Problem poisoned(typename Op::Problem p, const Overwrites& o) {
  const std::vector<ArgSpec> specs = Op::args(p.shape, p.precision);
  const std::vector<std::size_t> outs = output_indices(specs);
  for (std::size_t k = 0; k < outs.size(); ++k)
    if (o[k] && !specs[outs[k]].inout) poison(Op::values(p, outs[k]));
  return p;
}

// The implementations and precisions under test on Space, and names for them.
template <class Op, class Space>
std::vector<ImplPrecision> impl_precisions_of(bool deterministic_only = false) {
  return impl_precisions(Op::template catalog<Space>(), Op::precisions(), false,
                         deterministic_only);
}
inline std::string case_name(const ImplPrecision& ip) {
  return ip.impl + "_" + precision_test_name(ip.precision);
}
inline std::string case_description(const ImplPrecision& ip) {
  return "implementation '" + ip.impl + "', precision " +
         llmk::reference::precision_name(ip.precision);
}

}  // namespace llmk_test::contract
