// Contract (d) and (g): bad inputs are refused before any write. Each call
// must throw std::invalid_argument whose message names the argument (and,
// where it is about extents, what it has and what was expected), and leave
// every array, outputs and inputs, bitwise as it was (guard bands included);
// each bad call runs twice, with the outputs accumulated from their initial
// values and overwritten from poisoned ones. From the adapter's ArgSpecs, in
// each variant of Op::bad_input_shape() (test names end in "_<variant>"),
// int32 arguments (tokens, targets) among them, a made-up one holding random
// valid values:
//   Extents       each argument with a wrong last extent (but one whose last
//                 extent defines a size) and, where it has two, a wrong first
//                 one (but one whose first extent defines a size; the leader,
//                 whose extents fix the others', with a wrong rank), through
//                 the rank-2 entry, and its rank-3 extents with T + 1 and
//                 with B + 1
//   NullPointer   each argument that has elements, null (raw pointers)
//   Negative      each size of the raw-pointer entry, -3
//   Overflow      Op::overflows(): products past 2^60 elements (raw pointers;
//                 the arrays behind them are small: nothing may be touched)
//   Aliasing      each output sharing memory with each other argument (the
//                 same address, and overlapping by one element; only the
//                 latter where the output may be written in place of the
//                 argument), through the rank-2 and rank-3 views and the raw
//                 pointers
//   WorkspaceOverlap  the context's workspace (Context::use_workspace) in
//                 the memory of each argument (from its first byte, and from
//                 its last)
//   Accepted      what must not be refused: inputs sharing memory (in some
//                 variant, unless the adapter says that no two inputs are
//                 alike), all arguments adjacent in one buffer, the
//                 context's workspace ending where they start, and starting
//                 where they end
//   ElementTypes  in each configuration of element types: an input of another
//                 type than the first of its group ('inp' is bf16 but dout is
//                 float32), and each role in the other type where that makes
//                 no configuration ("mean and rstd bf16"), through rank-2 and
//                 rank-3 views and raw pointers; an argument of one type in
//                 every configuration outside the roles (the classifier's
//                 losses) in the other, through the views
//   ImplNames     unknown names and other operations' implementation names
//                 (the message lists the valid ones), in every function that
//                 takes a name
// and, per space (register_space_tests): unknown and foreign names on the
// space's arrays in every precision and variant, and on Cuda host memory for
// each argument.
#pragma once

#include "contract/device_problem.hpp"

#include <core/reference/random.hpp>
#include <gmock/gmock.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmk_test::contract {

// One call with something wrong: a problem's arrays, some arguments replaced
// (other extents, another element type, another address), the sizes of the
// raw-pointer entry, the entry point.
template <class Op, class Space>
class BadCall {
 public:
  BadCall(const typename Op::Problem& p, const Overwrites& o, const std::string& impl = "auto")
      : d_(p), specs_(d_.specs()), data_(d_.data()), dims_(d_.dims()),
        options_(Op::options(impl, p.precision, o)) {}

  std::vector<ArgSpec>& specs() { return specs_; }
  std::vector<void*>& data() { return data_; }
  std::vector<std::int64_t>& dims() { return dims_; }
  typename Op::Options& options() { return options_; }
  Entry entry = Entry::Rank2Views;
  // The context of the call (nullptr: the space's implicit one).
  llmk::Context<Space>* context = nullptr;

  // Argument i is a new array of `elements` elements of `dtype` (values
  // random; an int32 argument's valid, and int32 whatever `dtype`); returns it.
  const GuardedArray<Space>& replace(std::size_t i, std::int64_t elements, llmk::DType dtype) {
    const std::string label = specs_[i].name + " (replaced)";
    const std::uint32_t seed = 99 + std::uint32_t(i);
    if (specs_[i].int32) {
      extra_.push_back(std::make_unique<GuardedArray<Space>>(
          label, random_ints(elements, specs_[i].int_limit, seed), Alignment::Allocation));
    } else {
      std::vector<float> values(std::size_t(std::max<std::int64_t>(elements, 0)));
      llmk::reference::fill_random(values, seed);
      extra_.push_back(
          std::make_unique<GuardedArray<Space>>(label, values, Alignment::Allocation, dtype));
      specs_[i].dtype = dtype;
    }
    data_[i] = extra_.back()->raw();
    return *extra_.back();
  }
  // A new array of `elements` floats, not an argument yet.
  const GuardedArray<Space>& buffer(std::int64_t elements) {
    std::vector<float> values(static_cast<std::size_t>(elements));
    llmk::reference::fill_random(values, 77);
    extra_.push_back(
        std::make_unique<GuardedArray<Space>>("buffer", values, Alignment::Allocation));
    return *extra_.back();
  }

  // The call must throw std::invalid_argument with every fragment in its
  // message, and leave every array bitwise as it was.
  void expect_refused(const std::vector<std::string>& fragments) {
    const std::vector<Contents> before = snapshot();
    try {
      call();
      ADD_FAILURE() << "no exception thrown";
    } catch (const std::invalid_argument& e) {
      for (const std::string& f : fragments) EXPECT_THAT(e.what(), ::testing::HasSubstr(f));
    } catch (const std::exception& e) {
      ADD_FAILURE() << "expected std::invalid_argument, got another exception: " << e.what();
    }
    const std::vector<Contents> after = snapshot();
    for (std::size_t i = 0; i < before.size() && i < after.size(); ++i) {
      EXPECT_TRUE(bitwise_equal(name(i).c_str(), after[i].floats, before[i].floats))
          << "written by a refused call";
      EXPECT_TRUE(bitwise_equal(name(i).c_str(), after[i].ints, before[i].ints))
          << "written by a refused call";
    }
  }

  void call() const { call_with<Op, Space>(entry, specs_, data_, dims_, options_, context); }

  const DeviceProblem<Op, Space>& problem() const { return d_; }

 private:
  const GuardedArray<Space>& array(std::size_t i) const {
    return i < specs_.size() ? d_.array(i) : *extra_[i - specs_.size()];
  }
  std::string name(std::size_t i) const {
    return i < specs_.size() ? d_.specs()[i].name : "replacement " + std::to_string(i - specs_.size());
  }
  // An array's elements: floats (bf16 widened), or int32 ones.
  struct Contents {
    std::vector<float> floats;
    std::vector<std::int32_t> ints;
  };
  std::vector<Contents> snapshot() const {
    std::vector<Contents> v(specs_.size() + extra_.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      const GuardedArray<Space>& a = array(i);
      EXPECT_TRUE(a.int32() ? a.download(name(i).c_str(), v[i].ints)
                            : a.download(name(i).c_str(), v[i].floats))
          << "a guard band was written";
    }
    return v;
  }

  DeviceProblem<Op, Space> d_;
  std::vector<ArgSpec> specs_;
  std::vector<void*> data_;
  std::vector<std::int64_t> dims_;
  typename Op::Options options_;
  std::vector<std::unique_ptr<GuardedArray<Space>>> extra_;
};

// f(bad) for a fresh BadCall of `shape` (a variant of Op::bad_input_shape())
// in `precision`, with the outputs accumulated, then overwritten from
// poisoned values.
template <class Op, class Space, class F>
void for_both_updates(const typename Op::Shape& shape, Precision precision, const F& f,
                      const std::string& impl = "auto") {
  const typename Op::Problem clean = Op::make(shape, 3, precision);
  const std::size_t n_out = output_indices(Op::args(clean.shape, precision)).size();
  for (const bool overwrite : {false, true}) {
    SCOPED_TRACE(overwrite ? "outputs poisoned and overwritten" : "outputs accumulated");
    const Overwrites o(n_out, overwrite);
    BadCall<Op, Space> bad(overwrite ? poisoned<Op>(clean, o) : clean, o, impl);
    f(bad);
  }
}

inline std::int64_t product(const std::vector<std::int64_t>& e) {
  std::int64_t n = 1;
  for (std::int64_t x : e) n *= x;
  return n;
}

inline llmk::DType other_dtype(llmk::DType t) {
  return t == llmk::DType::f32 ? llmk::DType::bf16 : llmk::DType::f32;
}

// Every name an implementation of Op has, "auto" first.
template <class Op>
std::vector<std::string> valid_impl_names() {
  std::vector<std::string> names{"auto"};
  for (const llmk::ImplInfo& info : Op::template catalog<Kokkos::DefaultHostExecutionSpace>().infos)
    names.push_back(info.name);
  return names;
}

// Names that are not implementations of Op: made up, and other operations'.
template <class Op>
std::vector<std::string> invalid_impl_names() {
  const std::vector<std::string> valid = valid_impl_names<Op>();
  std::string capitalized = valid.back();
  capitalized[0] = char(std::toupper(static_cast<unsigned char>(capitalized[0])));
  std::vector<std::string> names{"no_such_impl", "", capitalized, "auto ",
                                 valid[1] + "," + valid.back(),
                                 // a NUL inside: the message must show all of it
                                 valid.back() + std::string("\0x", 2), valid.back() + "\t"};
  for (const std::string& f : Op::foreign_impls()) names.push_back(f);
  return names;
}

// A name as the message must show it: NUL as \0, other control characters \xNN.
inline std::string escaped(const std::string& name) {
  std::string out;
  char hex[8];
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == 0) {
      out += "\\0";
    } else if (c < 0x20 || c == 0x7f) {
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += ch;
    }
  }
  return out;
}

template <class Op>
std::vector<std::string> unknown_impl_fragments(const std::string& bad) {
  std::vector<std::string> f{"options.impl = '" + escaped(bad) + "'", "not an implementation"};
  for (const std::string& name : valid_impl_names<Op>()) f.push_back(name);
  return f;
}

// --- the tests ------------------------------------------------------------------------

// Which extent of an argument is wrong: the last (rank 2: C; rank 3: T + 1)
// or the first (rank 2: the rows; rank 3: B + 1).
enum class WrongExtent { Last, First };

template <class Op, class Space>
void check_extents(const typename Op::Shape& shape, std::size_t i, Entry entry, WrongExtent which) {
  for_both_updates<Op, Space>(shape, Precision::fp32, [&](BadCall<Op, Space>& bad) {
    ArgSpec& s = bad.specs()[i];
    bad.entry = entry;
    std::vector<std::int64_t>& e = entry == Entry::Rank3Views ? s.rank3 : s.rank2;
    const std::vector<std::int64_t> good = e;
    if (s.leader) {
      // A wrong rank (the leader's own extents fix the others'): the lowest
      // that neither of its forms has, the elements all in the last extent
      // (a leader of "rows" alone is (M) or (B, T): it gets (1, 1, M)).
      std::size_t rank = 1;
      while (rank == s.rank2.size() || rank == s.rank3.size()) ++rank;
      e.assign(rank, 1);
      e.back() = product(good);
    } else if (which == WrongExtent::First) {
      ++e.front();  // (M + 1, ...), (B + 1, ...)
    } else if (entry == Entry::Rank3Views) {
      ++e[1];  // (B, T + 1, ...)
    } else {
      ++e.back();
    }
    bad.replace(i, product(e), s.dtype);
    std::vector<std::string> fragments{"'" + s.name + "'", extents_string(e)};
    if (!s.leader) fragments.push_back(extents_string(good));
    bad.expect_refused(fragments);
  });
}

template <class Op, class Space>
void check_null_pointer(const typename Op::Shape& shape, std::size_t i) {
  for_both_updates<Op, Space>(shape, Precision::fp32, [&](BadCall<Op, Space>& bad) {
    bad.entry = Entry::RawPointers;
    bad.data()[i] = nullptr;
    const ArgSpec& s = bad.specs()[i];
    bad.expect_refused({"'" + s.name + "'", "null pointer", extents_string(s.rank2)});
  });
}

template <class Op, class Space>
void check_negative_dimension(const typename Op::Shape& shape, std::size_t k) {
  for_both_updates<Op, Space>(shape, Precision::fp32, [&](BadCall<Op, Space>& bad) {
    bad.entry = Entry::RawPointers;
    bad.dims()[k] = -3;
    bad.expect_refused({"dimension " + Op::dims(shape)[k].name + " = -3", "negative"});
  });
}

template <class Op, class Space>
void check_overflow(const typename Op::Shape& shape, const Overflow& overflow) {
  for (const std::string& impl : impls_under_test(Op::template catalog<Space>())) {
    SCOPED_TRACE(impl);
    for_both_updates<Op, Space>(
        shape, Precision::fp32,
        [&](BadCall<Op, Space>& bad) {
          bad.entry = Entry::RawPointers;
          bad.dims() = overflow.dims;
          bad.expect_refused({overflow.product, "overflows"});
        },
        impl);
  }
}

// Output o at the same address as argument x (but where o may be written in
// place of x: ArgSpec::in_place_of), then overlapping the last element of x,
// through each entry point (the views' and the raw pointers').
template <class Op, class Space>
void check_aliasing(const typename Op::Shape& shape, std::size_t o, std::size_t x) {
  const std::vector<ArgSpec> specs = Op::args(shape, Precision::fp32);
  const bool in_place = !specs[o].in_place_of.empty() && specs[o].in_place_of == specs[x].name;
  for (const bool partial : {false, true})
    for (const Entry entry : {Entry::Rank2Views, Entry::Rank3Views, Entry::RawPointers}) {
      if (in_place && !partial) continue;
      SCOPED_TRACE(std::string(partial ? "overlapping by one element" : "the same address") +
                   ", entry " + entry_test_name(entry));
      for_both_updates<Op, Space>(shape, Precision::fp32, [&](BadCall<Op, Space>& bad) {
        bad.entry = entry;
        const ArgSpec& so = bad.specs()[o];
        const ArgSpec& sx = bad.specs()[x];
        // Floats enough for both (an element is at most 4 bytes).
        const std::int64_t n = so.elements() + sx.elements();
        const GuardedArray<Space>& shared = bad.buffer(n);
        auto* base = static_cast<unsigned char*>(shared.raw());
        const std::size_t o_elem = so.element_bytes();
        bad.data()[x] = base;
        bad.data()[o] = partial ? base + sx.bytes() - o_elem : base;
        bad.expect_refused({"'" + so.name + "'", "'" + sx.name + "'", "overlaps"});
      });
    }
}

// The bytes of a workspace that a test gives a context: what the query says
// the call needs, and at least 64 (a workspace to overlap, also where the
// call needs none: the check does not depend on it).
template <class Op, class Space>
std::size_t test_workspace_bytes(const typename Op::Shape& shape, const typename Op::Options& o) {
  return std::max<std::size_t>(Op::template workspace_bytes<Space>(shape, o, Precision::fp32), 64);
}

// A context's workspace (Context::use_workspace) in the memory of argument x:
// from x's first byte, then from its last one (an odd address), refused
// naming x before any write (the workspace's bytes too: they lie in one of
// the call's arrays). Through the views and the raw pointers in turn.
template <class Op, class Space>
void check_workspace_overlap(const typename Op::Shape& shape, std::size_t x) {
  for (const bool partial : {false, true}) {
    SCOPED_TRACE(partial ? "from the argument's last byte" : "at the argument's address");
    for_both_updates<Op, Space>(shape, Precision::fp32, [&](BadCall<Op, Space>& bad) {
      bad.entry = partial ? Entry::RawPointers : Entry::Rank2Views;
      const ArgSpec& sx = bad.specs()[x];
      const std::size_t bytes = test_workspace_bytes<Op, Space>(shape, bad.options());
      const GuardedArray<Space>& shared = bad.buffer(sx.elements() + std::int64_t(bytes / 4) + 1);
      auto* base = static_cast<unsigned char*>(shared.raw());
      bad.data()[x] = base;
      llmk::Context<Space> ctx{Space()};
      ctx.use_workspace(partial ? base + sx.bytes() - 1 : base, bytes);
      bad.context = &ctx;
      bad.expect_refused({"workspace", "overlaps argument '" + sx.name + "'"});
    });
  }
}

// Inputs that share memory, and arguments adjacent in one buffer (and the
// context's workspace adjacent to them) are fine; returns how many pairs of
// inputs shared memory.
template <class Op, class Space>
int check_accepted(const typename Op::Shape& shape) {
  const typename Op::Problem p = Op::make(shape, 3, Precision::fp32);
  const std::vector<ArgSpec> specs = Op::args(p.shape, p.precision);
  const Overwrites none(output_indices(specs).size(), false);
  const std::vector<std::size_t> ins = input_indices(specs);
  int pairs = 0;
  for (std::size_t a = 0; a < ins.size(); ++a)
    for (std::size_t b = a + 1; b < ins.size(); ++b) {
      const ArgSpec& x = specs[ins[a]];
      const ArgSpec& y = specs[ins[b]];
      if (x.elements() == 0 || x.elements() != y.elements() || !x.same_type(y)) continue;
      ++pairs;
      SCOPED_TRACE(x.name + " and " + y.name + " in the same memory");
      BadCall<Op, Space> call(p, none);
      call.data()[ins[b]] = call.data()[ins[a]];
      EXPECT_NO_THROW(call.call());
    }
  // Every argument back to back in one float buffer (fp32: all float, or
  // int32, whose bits it holds), between two workspaces (NaN: a call must not
  // depend on what they held): the context's right before the first
  // argument, then right after the last.
  BadCall<Op, Space> call(p, none);
  const std::size_t workspace_bytes = test_workspace_bytes<Op, Space>(shape, call.options());
  const std::size_t workspace_floats = (workspace_bytes + 3) / 4;
  std::vector<float> all(workspace_floats, std::numeric_limits<float>::quiet_NaN());
  std::vector<std::size_t> offset;
  std::vector<std::vector<float>> contents;  // each argument's, as the buffer holds them
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].int32) {
      const std::vector<std::int32_t>& ints = int_values_of<Op>(p, i);
      contents.emplace_back(ints.size());
      if (!ints.empty()) std::memcpy(contents.back().data(), ints.data(), ints.size() * 4);
    } else {
      EXPECT_EQ(specs[i].dtype, llmk::DType::f32) << specs[i].name << " is not float in fp32";
      contents.push_back(Op::values(p, i));
    }
    offset.push_back(all.size());
    all.insert(all.end(), contents.back().begin(), contents.back().end());
  }
  const std::size_t after = all.size();
  all.resize(after + workspace_floats, std::numeric_limits<float>::quiet_NaN());
  const GuardedArray<Space>& buffer = call.buffer(std::int64_t(all.size()));
  float* const base = static_cast<float*>(buffer.raw());
  for (std::size_t i = 0; i < specs.size(); ++i) call.data()[i] = base + offset[i];
  for (const bool before : {true, false}) {
    SCOPED_TRACE(before ? "the workspace ending where the first argument starts"
                        : "the workspace starting where the last argument ends");
    buffer.upload(Space(), all);
    unsigned char* const workspace =
        before ? reinterpret_cast<unsigned char*>(base + workspace_floats) - workspace_bytes
               : reinterpret_cast<unsigned char*>(base + after);
    llmk::Context<Space> ctx{Space()};
    ctx.use_workspace(workspace, workspace_bytes);
    call.context = &ctx;
    EXPECT_NO_THROW(call.call()) << "adjacent arrays refused";
    std::vector<float> got;
    EXPECT_TRUE(buffer.download("buffer", got));
    const auto part = [&](std::size_t i) {
      const auto first = got.begin() + std::ptrdiff_t(offset[i]);
      return std::vector<float>(first, first + std::ptrdiff_t(contents[i].size()));
    };
    Outputs r;
    for (std::size_t i : output_indices(specs)) r.push_back(part(i));
    expect_matches_reference<Op>(specs, r, Op::reference(p, none), Precision::fp32, false, &p);
    for (std::size_t i : ins)
      EXPECT_TRUE(bitwise_equal(specs[i].name.c_str(), part(i), contents[i]));
  }
  return pairs;
}

// Whether the adapter says that no two inputs are alike (operation.hpp).
template <class Op, class = void>
struct no_two_inputs_alike : std::false_type {};
template <class Op>
struct no_two_inputs_alike<Op, std::void_t<decltype(Op::no_two_inputs_alike)>>
    : std::bool_constant<Op::no_two_inputs_alike> {};

template <class Op, class Space>
void check_accepted_in_every_variant() {
  int pairs = 0;
  for (const typename Op::Shape& shape : variant_shapes<Op>(Op::bad_input_shape())) {
    SCOPED_TRACE(shape.name);
    pairs += check_accepted<Op, Space>(shape);
  }
  if constexpr (no_two_inputs_alike<Op>::value) {
    EXPECT_EQ(pairs, 0) << "the adapter says no two inputs are alike, yet " << pairs << " were";
    std::printf("no two inputs of one type and size to share (the adapter's no_two_inputs_alike)\n");
  } else {
    EXPECT_GT(pairs, 0) << "no two inputs of the same size to share in any variant";
  }
}

// Whether these element types (one per argument, present ones) are some
// configuration's of Op.
template <class Op>
bool is_a_configuration(const typename Op::Shape& shape, const std::vector<ArgSpec>& specs) {
  for (Precision q : Op::precisions()) {
    const std::vector<ArgSpec> qs = Op::args(shape, q);
    bool same = true;
    for (std::size_t i = 0; i < specs.size(); ++i)
      same = same && (!specs[i].present || specs[i].dtype == qs[i].dtype);
    if (same) return true;
  }
  return false;
}

// One input of another element type than the first of its group.
template <class Op, class Space>
void check_group_type(const typename Op::Shape& shape, Precision precision, std::size_t leader,
                      std::size_t member, Entry entry) {
  for_both_updates<Op, Space>(shape, precision, [&](BadCall<Op, Space>& bad) {
    bad.entry = entry;
    const ArgSpec& l = bad.specs()[leader];
    const ArgSpec m = bad.specs()[member];
    bad.replace(member, m.elements(), other_dtype(m.dtype));
    bad.expect_refused({"'" + m.name + "'", llmk::dtype_name(other_dtype(m.dtype)),
                        l.name + " is " + llmk::dtype_name(l.dtype)});
  });
}

// Every argument of a role in the other element type, where no configuration
// has that: the message lists the call's types by role.
template <class Op, class Space>
void check_role_type(const typename Op::Shape& shape, Precision precision, const std::string& role,
                     Entry entry) {
  for_both_updates<Op, Space>(shape, precision, [&](BadCall<Op, Space>& bad) {
    bad.entry = entry;
    llmk::DType to = llmk::DType::f32;
    for (std::size_t i = 0; i < bad.specs().size(); ++i) {
      const ArgSpec s = bad.specs()[i];
      if (s.role != role || !s.present) continue;
      to = other_dtype(s.dtype);
      bad.replace(i, s.elements(), to);
    }
    ASSERT_FALSE(is_a_configuration<Op>(shape, bad.specs()));
    bad.expect_refused({"element types", role + " " + llmk::dtype_name(to)});
  });
}

// An argument of one element type in every configuration and outside the
// configurations' roles (ArgSpec::role empty: classifier's losses, float32
// always) in the other type: refused naming it and both types.
template <class Op, class Space>
void check_fixed_type(const typename Op::Shape& shape, Precision precision, std::size_t i,
                      Entry entry) {
  for_both_updates<Op, Space>(shape, precision, [&](BadCall<Op, Space>& bad) {
    bad.entry = entry;
    const ArgSpec s = bad.specs()[i];
    const llmk::DType to = other_dtype(s.dtype);
    bad.replace(i, s.elements(), to);
    bad.expect_refused({"'" + s.name + "'", llmk::dtype_name(to), llmk::dtype_name(s.dtype)});
  });
}

template <class Op, class Space>
void check_impl_names(const typename Op::Shape& shape) {
  for (const std::string& name : invalid_impl_names<Op>()) {
    SCOPED_TRACE("'" + name + "'");
    for_both_updates<Op, Space>(shape, Precision::fp32, [&](BadCall<Op, Space>& bad) {
      bad.options().impl = name;
      bad.expect_refused(unknown_impl_fragments<Op>(name));
    });
    // The other functions that take a name refuse it the same way.
    EXPECT_THROW(Op::template catalog<Space>().available(name), std::invalid_argument);
    const Overwrites none(output_indices(Op::args(shape, Precision::fp32)).size(), false);
    EXPECT_THROW(Op::template workspace_bytes<Space>(
                     shape, Op::options(name, Precision::fp32, none), Precision::fp32),
                 std::invalid_argument);
  }
}

// The precisions with element types of their own: the first of those that
// share them (tf32 has fp32's arrays), whose type tests stand for both.
template <class Op>
std::vector<Precision> type_configurations(const typename Op::Shape& shape) {
  std::vector<Precision> v;
  for (Precision p : Op::precisions()) {
    const std::vector<ArgSpec> ps = Op::args(shape, p);
    bool seen = false;
    for (Precision q : v) {
      const std::vector<ArgSpec> qs = Op::args(shape, q);
      bool same = true;
      for (std::size_t i = 0; i < ps.size(); ++i) same = same && ps[i].dtype == qs[i].dtype;
      seen = seen || same;
    }
    if (!seen) v.push_back(p);
  }
  return v;
}

// The bad-input tests of one variant of Op::bad_input_shape(); their names
// end in "_<variant>" (the plain variant's in nothing).
template <class Op, class Space>
void register_bad_input_tests(const std::string& variant) {
  const std::string op = Op::name();
  const typename Op::Shape shape = variant_shape<Op>(Op::bad_input_shape(), variant);
  const std::string suffix = variant.empty() ? "" : "_" + variant;
  const auto add = [&](const std::string& name, const std::string& what, std::function<void()> body) {
    add_test(op, "BadInputs", name + suffix, what + (variant.empty() ? "" : ", " + shape.name),
             std::move(body));
  };
  const std::vector<ArgSpec> specs = Op::args(shape, Precision::fp32);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const ArgSpec& s = specs[i];
    if (!s.present) continue;
    const std::string what = "argument " + s.name;
    if (!s.defines_last_extent)
      add("Extents_" + s.name + "_rank2", what,
          [=] { check_extents<Op, Space>(shape, i, Entry::Rank2Views, WrongExtent::Last); });
    if (s.rank2.size() == 2 && !s.leader && !s.defines_first_extent)
      add("Extents_" + s.name + "_rank2_rows", what,
          [=] { check_extents<Op, Space>(shape, i, Entry::Rank2Views, WrongExtent::First); });
    if (s.rank3 != s.rank2 && !s.leader) {
      add("Extents_" + s.name + "_rank3", what,
          [=] { check_extents<Op, Space>(shape, i, Entry::Rank3Views, WrongExtent::Last); });
      if (!s.defines_first_extent)
        add("Extents_" + s.name + "_rank3_batch", what,
            [=] { check_extents<Op, Space>(shape, i, Entry::Rank3Views, WrongExtent::First); });
    }
    if (s.elements() > 0 && !s.optional)
      add("NullPointer_" + s.name, what, [=] { check_null_pointer<Op, Space>(shape, i); });
  }
  const std::vector<Dim> dims = Op::dims(shape);
  for (std::size_t k = 0; k < dims.size(); ++k)
    add("NegativeDimension_" + dims[k].name, "size " + dims[k].name,
        [=] { check_negative_dimension<Op, Space>(shape, k); });
  const std::vector<Overflow> overflows = Op::overflows();
  for (std::size_t k = 0; k < overflows.size(); ++k) {
    std::string what;
    for (std::size_t j = 0; j < dims.size(); ++j)
      what += (j ? ", " : "") + dims[j].name + " = " + std::to_string(overflows[k].dims[j]);
    const std::string& bug = overflows[k].known_bug;
    add((bug.empty() ? "" : "DISABLED_") + ("Overflow_" + std::to_string(k)),
        what + (bug.empty() ? "" : " (known bug: " + bug + ")"),
        [=] { check_overflow<Op, Space>(shape, overflows[k]); });
  }
  for (std::size_t o : output_indices(specs))
    for (std::size_t x = 0; x < specs.size(); ++x) {
      if (x == o || specs[o].elements() == 0 || specs[x].elements() == 0) continue;
      if (specs[x].output && x < o) continue;  // each pair of outputs once
      add("Aliasing_" + specs[o].name + "_" + specs[x].name,
          "output " + specs[o].name + " in the memory of " + specs[x].name +
              (specs[o].in_place_of == specs[x].name ? " (overlapping only: in place is a call)"
                                                     : ""),
          [=] { check_aliasing<Op, Space>(shape, o, x); });
    }
  for (std::size_t x = 0; x < specs.size(); ++x)
    if (specs[x].elements() > 0)
      add("WorkspaceOverlap_" + specs[x].name,
          "the context's workspace in the memory of " + specs[x].name,
          [=] { check_workspace_overlap<Op, Space>(shape, x); });
  for (Precision precision : type_configurations<Op>(shape)) {
    const std::string pname = precision_test_name(precision);
    const std::vector<ArgSpec> ps = Op::args(shape, precision);
    // Groups of inputs sharing a type: each member after the first.
    for (std::size_t m = 0; m < ps.size(); ++m) {
      if (ps[m].group.empty() || !ps[m].present) continue;
      std::size_t leader = m;
      for (std::size_t j = 0; j < m && leader == m; ++j)
        if (ps[j].group == ps[m].group && ps[j].present) leader = j;
      if (leader == m) continue;
      for (const Entry entry : {Entry::Rank2Views, Entry::Rank3Views, Entry::RawPointers}) {
        if (entry == Entry::RawPointers && (ps[m].float_only || ps[leader].float_only)) continue;
        add("ElementType_" + ps[m].name + "_" + pname + "_" + entry_test_name(entry),
            "argument " + ps[m].name + " in the other type, precision " + pname,
            [=] { check_group_type<Op, Space>(shape, precision, leader, m, entry); });
      }
    }
    // Arguments of one type in every configuration, outside the roles.
    for (std::size_t i = 0; i < ps.size(); ++i) {
      if (!ps[i].role.empty() || ps[i].int32 || !ps[i].present || !ps[i].float_only) continue;
      for (const Entry entry : {Entry::Rank2Views, Entry::Rank3Views})
        add("ElementType_" + ps[i].name + "_" + pname + "_" + entry_test_name(entry),
            "argument " + ps[i].name + " in the other type, precision " + pname,
            [=] { check_fixed_type<Op, Space>(shape, precision, i, entry); });
    }
    // Roles: all their arguments in the other type, where no configuration has it.
    std::vector<std::string> roles;
    for (const ArgSpec& s : ps)
      if (s.present && !s.role.empty() &&
          std::find(roles.begin(), roles.end(), s.role) == roles.end())
        roles.push_back(s.role);
    for (const std::string& role : roles) {
      std::vector<ArgSpec> flipped = ps;
      bool float_only = false;
      for (ArgSpec& s : flipped)
        if (s.role == role) {
          s.dtype = other_dtype(s.dtype);
          float_only = float_only || s.float_only;
        }
      if (is_a_configuration<Op>(shape, flipped)) continue;
      std::string rname = role;
      for (char& ch : rname)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      for (const Entry entry : {Entry::Rank2Views, Entry::RawPointers}) {
        if (entry == Entry::RawPointers && float_only) continue;
        add("RoleType_" + rname + "_" + pname + "_" + entry_test_name(entry),
            "role " + role + " in the other type, precision " + pname,
            [=] { check_role_type<Op, Space>(shape, precision, role, entry); });
      }
    }
  }
  add("ImplNames", "unknown and other operations' implementation names",
      [=] { check_impl_names<Op, Space>(shape); });
}

template <class Op, class Space>
void register_bad_input_tests() {
  for (const std::string& variant : Op::variants()) register_bad_input_tests<Op, Space>(variant);
  add_test(Op::name(), "BadInputs", "SharedAndAdjacentMemoryAccepted", "",
           [] { check_accepted_in_every_variant<Op, Space>(); });
}

// --- per space: names refused on the space's arrays; host memory on a device ---------

template <class Op, class Space>
void check_names_on_space(Precision precision) {
  for (const typename Op::Shape& shape : variant_shapes<Op>(Op::bad_input_shape()))
    for (const std::string& name : invalid_impl_names<Op>()) {
      SCOPED_TRACE(shape.name + ": '" + name + "'");
      for_both_updates<Op, Space>(shape, precision, [&](BadCall<Op, Space>& bad) {
        bad.options().impl = name;
        bad.expect_refused(unknown_impl_fragments<Op>(name));
      });
    }
}

template <class Op, class Space>
void check_host_memory_on_device(const typename Op::Shape& shape, std::size_t i) {
  for_both_updates<Op, Space>(shape, Precision::fp32, [&](BadCall<Op, Space>& bad) {
    const ArgSpec& s = bad.specs()[i];
    std::vector<float> host(std::size_t(s.elements()), 0.5f);
    const std::vector<float> before = host;
    for (const Entry entry : {Entry::Rank2Views, Entry::RawPointers}) {
      bad.entry = entry;
      bad.data()[i] = host.data();
      bad.expect_refused({"'" + s.name + "'", "host memory"});
      EXPECT_TRUE(bitwise_equal(s.name.c_str(), host, before));
    }
  });
}

template <class Op, class Space>
void register_refusal_tests() {
  const std::string op = Op::name();
  for (Precision precision : Op::precisions())
    add_test(op, "ThrowBeforeWrite", "UnknownImpl_" + precision_test_name(precision),
             std::string("precision ") + llmk::reference::precision_name(precision),
             [=] { check_names_on_space<Op, Space>(precision); });
  if constexpr (!is_host_space<Space>) {
    for (const std::string& variant : Op::variants()) {
      const typename Op::Shape shape = variant_shape<Op>(Op::bad_input_shape(), variant);
      const std::vector<ArgSpec> specs = Op::args(shape, Precision::fp32);
      for (std::size_t i = 0; i < specs.size(); ++i)
        if (specs[i].elements() > 0)
          add_test(op, "ThrowBeforeWrite",
                   "HostMemory_" + specs[i].name + (variant.empty() ? "" : "_" + variant),
                   "argument " + specs[i].name + ", " + shape.name,
                   [=] { check_host_memory_on_device<Op, Space>(shape, i); });
    }
  }
}

}  // namespace llmk_test::contract
