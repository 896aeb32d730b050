// An operation's peers: what each is, those that run on a backend, in table
// order, and the one a precision's "vs" column divides by.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace llmk::perf {

// Another code doing the operation's work on the same buffers: llm.c's
// kernel, a vendor call. Args: the operation's PeerArgs.
template <class Args>
struct Peer {
  std::string name;
  std::vector<std::string> backends;
  std::vector<std::string> precisions;
  std::function<void(const Args&)> run;
  bool comparison = false;  // the row a precision's "vs" column divides by
  std::string description;
};

template <class P>
std::vector<P> peers_on(std::vector<P> all, const std::string& backend) {
  std::vector<P> here;
  for (P& p : all)
    if (std::find(p.backends.begin(), p.backends.end(), backend) != p.backends.end())
      here.push_back(std::move(p));
  return here;
}

// The name of the first of `peers` marked as the comparison that runs
// `precision`, or empty.
template <class P>
std::string comparison_among(const std::vector<P>& peers, const std::string& precision) {
  for (const P& p : peers)
    if (p.comparison &&
        std::find(p.precisions.begin(), p.precisions.end(), precision) != p.precisions.end())
      return p.name;
  return {};
}

}  // namespace llmk::perf
