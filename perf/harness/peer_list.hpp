// What every operation's peers.cpp does with its list of peers (a Peer has
// `backends`, `precisions`, `comparison` and `name`): those that run on a
// backend, in table order, and the one a precision's "vs" column divides by.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace llmk::perf {

template <class Peer>
std::vector<Peer> peers_on(std::vector<Peer> all, const std::string& backend) {
  std::vector<Peer> here;
  for (Peer& p : all)
    if (std::find(p.backends.begin(), p.backends.end(), backend) != p.backends.end())
      here.push_back(std::move(p));
  return here;
}

// The name of the first of `peers` marked as the comparison that runs
// `precision`, or empty.
template <class Peer>
std::string comparison_among(const std::vector<Peer>& peers, const std::string& precision) {
  for (const Peer& p : peers)
    if (p.comparison &&
        std::find(p.precisions.begin(), p.precisions.end(), precision) != p.precisions.end())
      return p.name;
  return {};
}

}  // namespace llmk::perf
