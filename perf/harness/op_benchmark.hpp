// A declared operation's llmk-perf subcommand, written once: per precision,
// the rows planned (planned_rows.hpp), the host problem and its float64
// reference, the arguments in the backend's memory (op_arrays.hpp), each
// row's reset, check, call and probe, then run_rows. The operation describes
// itself in a struct D (perf/<op>/benchmark.cpp):
//
//   using Spec;        its declaration (src/ops/<op>/spec.hpp): arguments, precisions
//   using Options;     llmk-perf's options (sizes, impls, precisions, flags)
//   using CallOptions; the library's options struct
//   using Shape, Problem;  the reference's shape and host problem
//   using Peer;        perf::Peer<its PeerArgs> (peers.hpp)
//   title, unit        "gelu backward"; "row" or "sequence" (what probes take parts of)
//   using Tag;         its tag in llmk's generic queries (llmk/operation.hpp: impls<Tag>(), ...)
//   shape(opt)         the run's shape (std::invalid_argument for sizes that overflow)
//   sizes(shape)       its sizes by symbol (Spec's extents)
//   units(shape), part(sizes, n)   the units, and the sizes of the first n of them
//   header(suite, shape, opt, sizes_text)  params, derived, flags, notes
//   bytes(shape, precision, opt)   what a call must move (GB/s, peer:copy)
//   make(shape, precision, opt)    the host problem
//   values(problem, i), int_values(problem, i)   argument i's host values
//   expected(problem, opt, threads)  every output's float64 reference, in order
//   tolerance(precision, k)        output k's
//   overwrites(opt)    per output: overwritten (starts as NaN) or accumulated
//   call_options(impl, opt), call(ctx, arrays, call_options)
//   peers(backend, opt), peer_args(arrays, precision, opt)
//   help               the subcommand's line of help (its name is Spec's)
//   add_options(app, opt)  its sizes (add_size), add_selection_options<D>, its flags
// and where it needs them:
//   present(opt)       per argument, whether the run passes it (default: all)
//   in_place           true: an output that may replace an input does
//   using Kept; keep(problem), judge(kept, k, out, expected_k, precision)
//                      what the check keeps of the problem, and output k's
//                      own test ("" or why it fails) beside the relative L2
#pragma once

#include "copy_peer.hpp"
#include "driver.hpp"
#include "op_arrays.hpp"
#include "peer_list.hpp"
#include "planned_rows.hpp"
#include "reference_io.hpp"
#include "subcommand.hpp"

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstring>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace llmk::perf {

// Refuses sizes whose product overflows 64 bits (the library would refuse
// them too, but the host problem is made first): "sizes too large: B·T·C ...".
inline void check_product(std::initializer_list<std::int64_t> factors, const std::string& what) {
  std::int64_t product = 1;
  for (const std::int64_t f : factors) {
    if (f > 0 && product > std::numeric_limits<std::int64_t>::max() / f)
      throw std::invalid_argument("sizes too large: " + what + " overflows 64 bits");
    product *= f;
  }
}

// Argument i's int32 values (D::int_values, where the operation has int32 arguments).
template <class D, class = void>
struct has_int_values : std::false_type {};
template <class D>
struct has_int_values<D, std::void_t<decltype(D::int_values(
                             std::declval<const typename D::Problem&>(), std::size_t(0)))>>
    : std::true_type {};
template <class D>
const std::vector<std::int32_t>& int_values_of(const typename D::Problem& p, std::size_t i) {
  if constexpr (has_int_values<D>::value) {
    return D::int_values(p, i);
  } else {
    (void)p;
    throw std::logic_error("llmk-perf: argument " + std::to_string(i) + " is int32 but " +
                           std::string(D::title) + " has no int_values()");
  }
}

// The optional members of D (above), or their defaults.
template <class D, class = void>
struct has_present : std::false_type {};
template <class D>
struct has_present<D, std::void_t<decltype(D::present(std::declval<const typename D::Options&>()))>>
    : std::true_type {};
template <class D>
std::vector<bool> present_of(const typename D::Options& opt) {
  if constexpr (has_present<D>::value) {
    return D::present(opt);
  } else {
    (void)opt;
    return {};
  }
}
template <class D, class = void>
struct has_in_place : std::false_type {};
template <class D>
struct has_in_place<D, std::void_t<decltype(D::in_place)>> : std::bool_constant<D::in_place> {};
template <class D, class = void>
struct has_judge : std::false_type {};
template <class D>
struct has_judge<D, std::void_t<typename D::Kept>> : std::true_type {};

// The operation's implementations on every backend of this build.
template <class D>
const Implementations& implementations_of() {
  using Tag = typename D::Tag;
  static const Implementations impls(llmk::impls<Tag>(), [](auto space, const std::string& name) {
    return llmk::available<Tag, typename decltype(space)::type>(name);
  });
  return impls;
}

// --impl and --precision.
template <class D>
void add_selection_options(CLI::App& app, typename D::Options& opt) {
  const Implementations& impls = implementations_of<D>();
  app.add_option("--impl", opt.impls, impls.option_help())
      ->capture_default_str()
      ->check(impls.validator());
  const std::vector<std::string>& names = llmk::precisions<typename D::Tag>();
  app.add_option("--precision", opt.precisions,
                 "comma list of " + join(names) +
                     ", or 'all': each implementation and peer gets a row for each of them it runs")
      ->capture_default_str()
      ->check(list_validator(names, "precision", "PRECISIONS"));
}

template <class D>
class OpBenchmark {
 public:
  using Options = typename D::Options;
  using Peer = typename D::Peer;
  using Planned = PlannedRow<Peer>;

  explicit OpBenchmark(const Options& opt) : opt_(opt) {}

  template <class ExecSpace>
  Suite suite(const perf::Options& hopt) {
    const typename D::Shape s = D::shape(opt_);
    const std::string backend = ExecSpace::name();
    impls_ = implementations_of<D>().select(opt_.impls, backend);
    peers_ = D::peers(backend, opt_);
    Suite suite;
    suite.title = D::title;
    suite.units = D::units(s);
    suite.unit_name = D::unit;
    for (const core::op::Arg& a : D::Spec::args)
      if (a.output()) suite.error_columns.emplace_back(a.name);
    suite.default_precision = "fp32";
    suite.gflops_column = false;
    suite.gbs_column = true;
    suite.ceiling_label = "copy";
    suite.vs_column = false;
    std::string sizes;
    for (reference::Precision p : select_precisions(opt_.precisions, llmk::precisions<typename D::Tag>())) {
      const std::string name = reference::precision_name(p);
      suite.precisions.push_back(name);
      char mb[64];
      std::snprintf(mb, sizeof mb, "%s %.4g MB", name.c_str(), D::bytes(s, p, opt_) * 1e-6);
      sizes += (sizes.empty() ? "" : ", ") + std::string(mb);
      if (!hopt.peers) continue;
      suite.ceilings.emplace_back(name, "peer:copy");
      const std::string peer = comparison_among(peers_, name);
      if (!peer.empty()) {
        suite.comparisons.emplace_back(name, "peer:" + peer);
        suite.vs_column = true;
      }
    }
    D::header(suite, s, opt_, sizes);
    return suite;
  }

  template <class ExecSpace>
  bool run_precision(const Env<ExecSpace>& env, const std::string& name, Suite& suite,
                     std::vector<Record>& records) {
    reference::Precision p;
    if (!reference::parse_precision(name, p))
      throw std::logic_error("llmk-perf: the reference knows no precision '" + name + "'");
    const auto rules = declared_rules<Peer>(
        implementations_of<D>(), opt_.impls != "all", [](const std::string& precision) {
          return llmk::auto_impl<typename D::Tag, ExecSpace>(precision);
        });
    const std::vector<Planned> planned =
        plan_rows(name, ExecSpace::name(), impls_, peers_, env.opt.peers, rules);
    if (planned.empty()) {
      const std::string line = name + ": no implementation or peer runs it on " + ExecSpace::name();
      progress(line);
      suite.notes.push_back(line);
      return false;
    }
    return run_planned(env, suite, p, planned, records);
  }

 private:
  using Spec = typename D::Spec;
  template <class T, class = void>
  struct KeptOf {
    using type = bool;
  };
  template <class T>
  struct KeptOf<T, std::void_t<typename T::Kept>> {
    using type = typename T::Kept;
  };
  using Kept = typename KeptOf<D>::type;

  // An output's bytes as float (bf16 widened).
  static std::vector<float> as_floats(const std::vector<unsigned char>& bytes, DType dtype) {
    if (dtype == DType::bf16)
      return reference::widen_bf16(reinterpret_cast<const std::uint16_t*>(bytes.data()),
                                   bytes.size() / 2);
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }

  // The rows of one precision: its problem and reference, its arrays, the
  // rows, run and freed. Returns whether a row failed.
  template <class ExecSpace>
  bool run_planned(const Env<ExecSpace>& env, const Suite& suite, reference::Precision p,
                   const std::vector<Planned>& planned, std::vector<Record>& records) {
    const ExecSpace& exec = env.exec;
    Context<ExecSpace>& ctx = env.ctx;
    const typename D::Shape s = D::shape(opt_);
    const std::string pname = reference::precision_name(p);
    const double bytes = D::bytes(s, p, opt_);
    Suite group = suite;  // the header's fields; its rows are this precision's
    // Only rows that compute need the problem (peer:copy needs none).
    const bool computes = any_computes(planned);
    const OpArrays<ExecSpace, Spec> full(D::sizes(computes ? s : typename D::Shape{}), pname,
                                         present_of<D>(opt_), has_in_place<D>::value);
    std::vector<std::vector<double>> expected;
    std::optional<Kept> kept;
    std::vector<std::vector<unsigned char>> initial(Spec::args.size());  // the outputs'
    const std::vector<bool> overwrites = D::overwrites(opt_);
    if (computes) {
      auto t0 = std::chrono::steady_clock::now();
      progress(pname + ": inputs ... ", false);
      std::optional<typename D::Problem> in = D::make(s, p, opt_);
      progress(seconds_text(seconds_since(t0)));
      if (env.opt.check) {
        t0 = std::chrono::steady_clock::now();
        progress(pname + ": float64 reference ... ", false);
        expected = D::expected(*in, opt_, env.threads);
        progress(seconds_text(seconds_since(t0)));
        if constexpr (has_judge<D>::value) kept = D::keep(*in);
      }
      // An overwritten output starts as NaN: a row that reads it fails its check.
      for (std::size_t i = 0, k = 0; i < Spec::args.size(); ++i) {
        const core::op::Arg& a = Spec::args[i];
        if (!full.present(i) || full.replaced(i)) {
          k += a.output();  // (an absent output keeps its place in the outputs)
        } else if (a.int32) {
          full.upload(exec, i, full.encode_ints(int_values_of<D>(*in, i)));
        } else if (!a.output()) {
          full.upload(exec, i, full.encode(i, D::values(*in, i)));
        } else {
          initial[i] = full.encode(
              i, overwrites[k++] ? std::vector<float>(std::size_t(full.elements(i)),
                                                      std::numeric_limits<float>::quiet_NaN())
                                 : D::values(*in, i));
        }
      }
      exec.fence();  // the uploads' host arrays are freed with `in`
    }
    auto reset = [&, exec] {
      for (std::size_t i = 0; i < Spec::args.size(); ++i)
        if (Spec::args[i].output() && full.present(i)) full.upload(exec, i, initial[i]);
      exec.fence();
    };
    // Reads the outputs back and compares each with the reference, at its tolerance.
    auto verify = [&, exec] {
      std::vector<reference::Comparison> cmp;
      for (std::size_t i = 0, k = 0; i < Spec::args.size(); ++i) {
        const core::op::Arg& a = Spec::args[i];
        if (!a.output()) continue;
        if (!full.present(i)) {
          ++k;
          continue;
        }
        const std::vector<unsigned char> out = full.download(exec, i);
        const std::vector<std::int64_t> e = full.extents(i);
        const std::int64_t cols = e.size() == 2 ? e[1] : 0;
        const double tol = D::tolerance(p, k);
        const std::string what(a.name);
        const double* want = expected[k].data();
        const std::size_t n = expected[k].size();
        cmp.push_back(
            full.dtype(i) == DType::bf16
                ? reference::compare_bf16(what.c_str(),
                                          reinterpret_cast<const std::uint16_t*>(out.data()), want,
                                          n, cols, tol)
                : reference::compare(what.c_str(), reinterpret_cast<const float*>(out.data()),
                                     want, n, cols, tol));
        if constexpr (has_judge<D>::value) {
          const std::string why = D::judge(*kept, k, as_floats(out, full.dtype(i)), expected[k], p);
          if (!why.empty()) cmp.back().ok = false, cmp.back().message = why;
        }
        ++k;
      }
      return check_result(cmp);
    };
    const auto copy = [&, exec] { return copy_row(exec, bytes, D::units(s), pname); };
    add_planned_rows(group.rows, planned, pname, copy, [&](Row& row, const Planned& plan) {
      row.bytes = bytes;
      if (computes) row.reset = reset;
      if (!expected.empty()) row.verify = verify;
      const auto part = [full, s](std::int64_t n) { return full.part(D::part(D::sizes(s), n)); };
      if (!plan.peer) {  // an implementation, from the registry
        const typename D::CallOptions options = D::call_options(plan.impl, opt_);
        row.run = [&ctx, full, options] { D::call(ctx, full, options); };
        row.run_part = [&ctx, part, options](std::int64_t n) { D::call(ctx, part(n), options); };
        if (!implementations_of<D>().info(plan.resolved).deterministic)
          add_note(row, "not bitwise deterministic");
      } else {
        const auto run = plan.peer->run;
        row.run = [run, args = D::peer_args(full, pname, opt_)] { run(args); };
        row.run_part = [run, part, pname, this](std::int64_t n) {
          run(D::peer_args(part(n), pname, opt_));
        };
      }
    });
    return run_rows(env.opt, exec, env.timer, group, records);
  }

  const Options& opt_;
  std::vector<std::string> impls_;
  std::vector<Peer> peers_;
};

// The operation's subcommand, named as its entry ("llmk::gelu_backward": gelu_backward).
template <class D>
Subcommand op_subcommand() {
  const std::string name(D::Spec::name);
  return subcommand_of<OpBenchmark<D>, typename D::Options>(name.substr(name.rfind(':') + 1),
                                                            D::help, D::add_options);
}

}  // namespace llmk::perf
