// What the subcommands share whose operation has one output `out` that a
// call overwrites (=, the default, as llm.c's) or accumulates into (+=,
// --accumulate-out): the forward operations and the squared norm; and
// (DinpUpdate) the backward operations' dinp. Their
// Options derive from OutUpdateOption, their descriptions from OutUpdate
// (call_options, overwrites: out first, then the outputs every call writes,
// as layer norm's mean and rstd) and, where they have no peer of their own
// but peer:copy, from NoPeers.
#pragma once

#include "op_benchmark.hpp"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace llmk::perf {

struct OutUpdateOption {
  bool accumulate_out = false;  // Update::accumulate on out (default =, as llm.c)
};

template <class CallOptions, std::size_t Outputs = 1>
struct OutUpdate {
  static std::vector<bool> overwrites(const OutUpdateOption& opt) {
    std::vector<bool> v(Outputs, true);
    v[0] = !opt.accumulate_out;
    return v;
  }
  static CallOptions call_options(const std::string& impl, const OutUpdateOption& opt) {
    CallOptions options;
    options.impl = impl;
    if (opt.accumulate_out) options.out_update = Update::accumulate;
    return options;
  }
  // "out overwritten (=)", and what becomes of out's bytes ("written").
  static std::string out_text(const OutUpdateOption& opt) {
    return opt.accumulate_out ? "out accumulated (+=)" : "out overwritten (=)";
  }
  static std::string out_bytes_text(const OutUpdateOption& opt) {
    return opt.accumulate_out ? "read and written" : "written";
  }
  // --accumulate-out: "out += <value> instead of =".
  static void add_out_update(CLI::App& app, OutUpdateOption& opt, const std::string& value) {
    app.add_flag("--accumulate-out", opt.accumulate_out,
                 "out += " + value + " instead of = (Update::accumulate)");
  }
};

// The same for the backward operations whose first output is dinp, which a
// call accumulates into (+=, the default: the residual stream's gradient) or
// overwrites (=, --overwrite-dinp, as llm.c's training): GELU's, the layer
// norm's and matmul's; their other outputs (weight gradients) accumulate.
struct DinpUpdateOption {
  bool overwrite_dinp = false;  // Update::overwrite on dinp
};

template <class CallOptions, std::size_t Outputs = 1>
struct DinpUpdate {
  static std::vector<bool> overwrites(const DinpUpdateOption& opt) {
    std::vector<bool> v(Outputs, false);
    v[0] = opt.overwrite_dinp;
    return v;
  }
  static CallOptions call_options(const std::string& impl, const DinpUpdateOption& opt) {
    CallOptions options;
    options.impl = impl;
    if (opt.overwrite_dinp) options.dinp_update = Update::overwrite;
    return options;
  }
  // "dinp overwritten (=)", and what becomes of dinp's bytes ("written").
  static std::string dinp_text(const DinpUpdateOption& opt) {
    return opt.overwrite_dinp ? "dinp overwritten (=)" : "dinp accumulated (+=)";
  }
  static std::string dinp_bytes_text(const DinpUpdateOption& opt) {
    return opt.overwrite_dinp ? "written" : "read and written";
  }
};

// No peer of the operation's own: peer:copy (every subcommand's) alone.
struct NoPeers {
  struct PeerArgs {};
  using Peer = perf::Peer<PeerArgs>;
  template <class Options>
  static std::vector<Peer> peers(const std::string&, const Options&) {
    return {};
  }
  template <class Arrays, class Options>
  static PeerArgs peer_args(const Arrays&, const std::string&, const Options&) {
    return {};
  }
};

}  // namespace llmk::perf
