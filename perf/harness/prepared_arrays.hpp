// One operation's arguments in the backend's memory for the rows of a
// precision, as op_benchmark.hpp's rows use them (its class comment below).
#pragma once

#include "description_hooks.hpp"
#include "driver.hpp"
#include "op_arrays.hpp"

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace llmk::perf {

// One operation's arguments for the rows of a precision (Op: the description
// D, or D's Variant): its arrays in the backend's memory, the outputs'
// initial values (what a row's reset restores) and their float64 reference
// (what its check compares with), from the precision's problem.
template <class D, class Op, class ExecSpace>
class PreparedArrays {
 public:
  using Spec = typename Op::Spec;

  // The run's sizes where a row computes, else none (peer:copy needs no problem).
  PreparedArrays(const typename D::Shape& s, reference::Precision p,
                 const typename D::Options& opt, bool computes)
      // (The arrays' element types are the storage's: tf32's are fp32's.)
      : full(D::sizes(computes ? s : typename D::Shape{}), storage_name(p),
             present_of<Op>(opt), has_in_place<Op>::value),
        p_(p),
        overwrites_(D::overwrites(opt)),
        initial_(Spec::args.size()) {}

  // The outputs' float64 reference, timed on the progress line `what`.
  void compute_reference(const typename D::Problem& in, const typename D::Options& opt,
                         int threads, const std::string& what) {
    const auto t0 = std::chrono::steady_clock::now();
    progress(what + " ... ", false);
    expected_ = Op::expected(in, opt, threads);
    progress(seconds_text(seconds_since(t0)));
    if constexpr (has<kept_hook, Op>) kept_ = Op::keep(in);
  }

  // The inputs uploaded (enqueued on exec: fence before `in` is freed), the
  // outputs' initial values kept. An overwritten output starts as NaN: a row
  // that reads it fails its check.
  void load(const ExecSpace& exec, const typename D::Problem& in) {
    for (std::size_t i = 0, k = 0; i < Spec::args.size(); ++i) {
      const core::op::Arg& a = Spec::args[i];
      if (!full.present(i) || full.replaced(i)) {
        k += a.output();  // (an absent output keeps its place in the outputs)
      } else if (a.int32) {
        full.upload(exec, i, full.encode_ints(int_values_of<Op>(in, i)));
      } else if (!a.output()) {
        full.upload(exec, i, full.encode(i, Op::values(in, i)));
      } else {
        initial_[i] = full.encode(
            i, overwrites_[k++] ? std::vector<float>(std::size_t(full.elements(i)),
                                                     std::numeric_limits<float>::quiet_NaN())
                                : Op::values(in, i));
      }
    }
  }

  bool checked() const { return !expected_.empty(); }

  void reset(const ExecSpace& exec) const {
    for (std::size_t i = 0; i < Spec::args.size(); ++i)
      if (Spec::args[i].output() && full.present(i)) full.upload(exec, i, initial_[i]);
    exec.fence();
  }

  // Reads the outputs back and compares each with the reference, at its
  // tolerance, but those the row leaves alone.
  CheckResult verify(const ExecSpace& exec, const std::vector<std::string>& left_alone) const {
    std::vector<reference::Comparison> cmp;
    std::string missing;
    for (std::size_t i = 0, k = 0; i < Spec::args.size(); ++i) {
      const core::op::Arg& a = Spec::args[i];
      if (!a.output()) continue;
      const bool alone =
          std::find(left_alone.begin(), left_alone.end(), a.name) != left_alone.end();
      if (alone) missing += (missing.empty() ? "" : ", ") + std::string(a.name) + " not computed";
      if (!full.present(i) || alone) {
        ++k;
        continue;
      }
      const std::vector<unsigned char> out = full.download(exec, i);
      const std::vector<std::int64_t> e = full.extents(i);
      const std::int64_t cols = e.size() == 2 ? e[1] : 0;
      const double tol = Op::tolerance(p_, k);
      const std::string what(a.name);
      const double* want = expected_[k].data();
      const std::size_t n = expected_[k].size();
      cmp.push_back(
          full.dtype(i) == DType::bf16
              ? reference::compare_bf16(what.c_str(),
                                        reinterpret_cast<const std::uint16_t*>(out.data()), want,
                                        n, cols, tol)
              : reference::compare(what.c_str(), reinterpret_cast<const float*>(out.data()),
                                   want, n, cols, tol));
      if constexpr (has<kept_hook, Op>) {
        const std::string why =
            Op::judge(*kept_, k, as_floats(out, full.dtype(i)), expected_[k], p_);
        if (!why.empty()) cmp.back().ok = false, cmp.back().message = why;
      }
      ++k;
    }
    return check_result(cmp, missing);
  }

  const OpArrays<ExecSpace, Spec> full;

 private:
  // An output's bytes as float (bf16 widened).
  static std::vector<float> as_floats(const std::vector<unsigned char>& bytes, DType dtype) {
    if (dtype == DType::bf16)
      return reference::widen_bf16(reinterpret_cast<const std::uint16_t*>(bytes.data()),
                                   bytes.size() / 2);
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }

  reference::Precision p_;
  std::vector<bool> overwrites_;
  std::vector<std::vector<unsigned char>> initial_;  // the outputs'
  std::vector<std::vector<double>> expected_;
  std::optional<kept_of<Op>> kept_;
};

}  // namespace llmk::perf
