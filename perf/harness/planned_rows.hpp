// The rows a memory-bound operation's benchmark plans for one precision
// (gelu_backward's and encoder_backward's): each llmk implementation asked
// for ("auto" resolved, for its note), then, with peers, peer:copy and each
// peer that runs the precision (a Peer has `name` and `precisions`), in
// table order.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace llmk::perf {

template <class Peer>
struct PlannedRow {
  std::string name, kind, impl, resolved;  // kind: "impl" or "peer"
  bool copy = false;                       // peer:copy (harness/copy_peer.hpp)
  const Peer* peer = nullptr;              // the peer, or null
};

// auto_impl(precision): the implementation "auto" picks.
template <class Peer, class AutoImpl>
std::vector<PlannedRow<Peer>> plan_rows(const std::string& precision,
                                        const std::vector<std::string>& impls,
                                        const std::vector<Peer>& peers, bool run_peers,
                                        AutoImpl&& auto_impl) {
  std::vector<PlannedRow<Peer>> rows;
  for (const std::string& name : impls) {
    PlannedRow<Peer> r;
    r.name = r.impl = name;
    r.kind = "impl";
    r.resolved = name == "auto" ? auto_impl(precision) : name;
    rows.push_back(std::move(r));
  }
  if (!run_peers) return rows;
  PlannedRow<Peer> copy;
  copy.name = "peer:copy";
  copy.kind = "peer";
  copy.copy = true;
  rows.push_back(std::move(copy));
  for (const Peer& peer : peers) {
    if (std::find(peer.precisions.begin(), peer.precisions.end(), precision) ==
        peer.precisions.end())
      continue;
    PlannedRow<Peer> r;
    r.name = "peer:" + peer.name;
    r.kind = "peer";
    r.peer = &peer;
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace llmk::perf
