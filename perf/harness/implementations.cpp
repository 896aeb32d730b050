#include "implementations.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace llmk::perf {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(s);
  for (std::string part; std::getline(ss, part, sep);)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::vector<std::string> select_names(const std::string& list,
                                      const std::vector<std::string>& known) {
  const std::vector<std::string> wanted = split(list, ',');
  std::vector<std::string> out;
  for (const std::string& name : known)
    if (list == "all" || std::find(wanted.begin(), wanted.end(), name) != wanted.end())
      out.push_back(name);
  return out;
}

CLI::Validator list_validator(const std::vector<std::string>& known, const std::string& what,
                              const std::string& type_name) {
  return CLI::Validator(
      [known, what](std::string& list) -> std::string {
        if (list == "all") return {};
        const std::vector<std::string> parts = split(list, ',');
        if (parts.empty()) return "no " + what + " named";
        for (const std::string& name : parts)
          if (std::find(known.begin(), known.end(), name) == known.end())
            return "'" + name + "' is not a " + what + " (" + join(known) + ", all)";
        return {};
      },
      "NAMES|all", type_name);
}

const ImplInfo& Implementations::info(const std::string& name) const {
  for (const ImplInfo& info : infos_)
    if (info.name == name) return info;
  throw std::logic_error("llmk-perf: no implementation '" + name + "'");
}

bool Implementations::known(const std::string& name) const {
  if (name == "auto") return true;
  return std::any_of(infos_.begin(), infos_.end(),
                     [&name](const ImplInfo& info) { return info.name == name; });
}

const Implementations::Backend* Implementations::backend(const std::string& space) const {
  for (const Backend& b : backends_)
    if (b.space == space) return &b;
  return nullptr;
}

std::vector<std::string> Implementations::available(const std::string& space) const {
  const Backend* b = backend(space);
  return b ? b->names : std::vector<std::string>{};
}

bool Implementations::available(const std::string& space, const std::string& name) const {
  const Backend* b = backend(space);
  if (!b) return false;
  if (name == "auto") return b->auto_available;
  return std::find(b->names.begin(), b->names.end(), name) != b->names.end();
}

std::string Implementations::by_backend() const {
  std::vector<std::pair<std::string, std::string>> groups;  // names → backends
  for (const Backend& b : backends_) {
    const std::string list = join(b.names);
    auto same = std::find_if(groups.begin(), groups.end(),
                             [&list](const auto& g) { return g.first == list; });
    if (same != groups.end()) same->second += ", " + b.flag;
    else groups.emplace_back(list, b.flag);
  }
  std::string out;
  for (const auto& [names, backends] : groups)
    out += (out.empty() ? "" : "; ") + std::string("on ") + backends + ": " + names;
  return out;
}

std::vector<std::string> Implementations::elsewhere() const {
  std::vector<std::string> out;
  for (const ImplInfo& info : infos_) {
    const bool here = std::any_of(backends_.begin(), backends_.end(), [&info](const Backend& b) {
      return std::find(b.names.begin(), b.names.end(), info.name) != b.names.end();
    });
    if (!here) out.push_back(info.name + (info.compiled ? "" : " (not compiled)"));
  }
  return out;
}

std::string Implementations::option_help() const {
  const std::vector<std::string> missing = elsewhere();
  return "comma list of llmk implementations, or 'all' (every one available on "
         "--backend). This build: " +
         by_backend() + "; and 'auto', the first of those" +
         (missing.empty() ? std::string() : "; not here: " + join(missing));
}

CLI::Validator Implementations::validator() const {
  return CLI::Validator(
      [this](std::string& list) -> std::string {
        if (list == "all") return {};
        const std::vector<std::string> parts = split(list, ',');
        if (parts.empty()) return "no implementation named";
        for (const std::string& name : parts)
          if (!known(name)) return "'" + name + "' is not an llmk implementation";
        return {};
      },
      "NAMES|all", "IMPLS");
}

std::vector<std::string> Implementations::select(const std::string& list,
                                                 const std::string& space) const {
  if (list == "all") return available(space);
  std::vector<std::string> names;
  for (const std::string& name : split(list, ',')) {
    if (!available(space, name))
      throw std::invalid_argument("implementation '" + name + "' is not available on backend " +
                                  space + " (available: " + join(available(space)) + ")");
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

}  // namespace llmk::perf
