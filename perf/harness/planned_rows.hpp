// The rows an operation's benchmark plans for one precision, decided before
// anything is allocated, and their making, written once for every
// operation: each llmk implementation asked for ("auto" resolved, for its
// note; one that does not run the precision is a row that says why where
// --impl named it, left out under --impl all), then, with peers, peer:copy
// (harness/copy_peer.hpp) and each peer that runs the precision (a Peer has
// `name`, `precisions` and `description`), in table order.
#pragma once

#include "implementations.hpp"
#include "reference_io.hpp"
#include "suite.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace llmk::perf {

template <class Peer>
struct PlannedRow {
  std::string name, kind, skip;  // kind: "impl" or "peer"; skip: why it does not run
  std::string impl;              // implementation rows: the name passed (maybe "auto")
  std::string resolved;          // ... and what it is here
  bool copy = false;             // peer:copy
  const Peer* peer = nullptr;    // the peer, or null
};

template <class Peer>
struct RowPlanRules {
  // --impl named the implementations (not "all"): keep those that do not run
  // the precision, as rows that say why.
  bool listed = false;
  bool copy_row = true;  // peer:copy among the peers
  // What "auto" is for a precision ("" or std::invalid_argument: none runs it).
  std::function<std::string(const std::string& precision)> auto_impl;
  // Whether implementation `impl` runs the precision (its info declares it).
  std::function<bool(const std::string& impl, const std::string& precision)> runs;
  // Why a peer cannot run this call ("" where it can); none: all can.
  std::function<std::string(const Peer&)> peer_skip;
};

// The usual rules: "auto" from the operation's query, an implementation runs
// what its info declares.
template <class Peer, class AutoImpl>
RowPlanRules<Peer> declared_rules(const Implementations& impls, bool listed, AutoImpl auto_impl) {
  RowPlanRules<Peer> rules;
  rules.listed = listed;
  rules.auto_impl = auto_impl;
  rules.runs = [&impls](const std::string& impl, const std::string& precision) {
    return declares(impls.info(impl), precision);
  };
  return rules;
}

template <class Peer>
std::vector<PlannedRow<Peer>> plan_rows(const std::string& precision, const std::string& backend,
                                        const std::vector<std::string>& impls,
                                        const std::vector<Peer>& peers, bool run_peers,
                                        const RowPlanRules<Peer>& rules) {
  std::vector<PlannedRow<Peer>> rows;
  for (const std::string& name : impls) {
    PlannedRow<Peer> r;
    r.name = r.impl = name;
    r.kind = "impl";
    try {
      r.resolved = name == "auto" ? rules.auto_impl(precision) : name;
    } catch (const std::invalid_argument&) {
      r.resolved.clear();
    }
    // (llmk::auto_impl answers "" where none runs the math mode: tf32 on the host.)
    if (r.resolved.empty()) r.skip = "no implementation runs " + precision + " on " + backend;
    if (r.skip.empty() && rules.runs && !rules.runs(r.resolved, precision))
      r.skip = "does not run " + precision;
    if (!r.skip.empty() && !rules.listed) continue;  // --impl all: only what runs
    rows.push_back(std::move(r));
  }
  if (!run_peers) return rows;
  if (rules.copy_row) {
    PlannedRow<Peer> copy;
    copy.name = "peer:copy";
    copy.kind = "peer";
    copy.copy = true;
    rows.push_back(std::move(copy));
  }
  for (const Peer& peer : peers) {
    if (std::find(peer.precisions.begin(), peer.precisions.end(), precision) ==
        peer.precisions.end())
      continue;
    PlannedRow<Peer> r;
    r.name = "peer:" + peer.name;
    r.kind = "peer";
    r.peer = &peer;
    if (rules.peer_skip) r.skip = rules.peer_skip(peer);
    rows.push_back(std::move(r));
  }
  return rows;
}

// The rows of a plan, in its order, into `rows`: a skipped one as it is
// (name, kind, precision and why), peer:copy from copy(), the others with
// name, kind, precision and a peer's description (or "auto is X here") set,
// then make(row, plan) for the rest (bytes, reset, verify, run, run_part).
template <class Peer, class Copy, class Make>
void add_planned_rows(std::vector<Row>& rows, const std::vector<PlannedRow<Peer>>& planned,
                      const std::string& precision, Copy&& copy, Make&& make) {
  for (const PlannedRow<Peer>& plan : planned) {
    if (plan.copy && plan.skip.empty()) {
      rows.push_back(copy());
      continue;
    }
    Row row;
    row.name = plan.name;
    row.kind = plan.kind;
    row.precision = precision;
    row.skip = plan.skip;
    if (row.skip.empty()) {
      if (plan.peer) {
        row.note = plan.peer->description;
      } else if (plan.impl == "auto") {
        row.note = "auto is " + plan.resolved + " here";
      }
      make(row, plan);
    }
    rows.push_back(std::move(row));
  }
}

// Appends `note` to a row's note, "; " between.
inline void add_note(Row& row, const std::string& note) {
  row.note += (row.note.empty() ? "" : "; ") + note;
}

}  // namespace llmk::perf
