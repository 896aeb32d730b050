#include <core/validate.hpp>

#include <sstream>
#include <stdexcept>

namespace llmk::detail {

std::string extents_string(const ArgInfo& a) {
  std::ostringstream s;
  s << '(';
  for (int r = 0; r < a.rank; ++r) s << (r ? ", " : "") << a.extents[r];
  s << ')';
  return s.str();
}

static std::string list_string(std::initializer_list<index_t> values) {
  std::ostringstream s;
  s << '(';
  bool first = true;
  for (index_t v : values) {
    s << (first ? "" : ", ") << v;
    first = false;
  }
  s << ')';
  return s.str();
}

void expect_extents(const char* op, const ArgInfo& a, std::initializer_list<index_t> expected, const char* how) {
  bool ok = a.rank == int(expected.size());
  int r = 0;
  for (index_t e : expected) ok = ok && a.extents[r++] == e;
  if (!ok) {
    throw std::invalid_argument(std::string(op) + ": argument '" + std::string(a.name) +
                                "' has extents " + extents_string(a) + " but " + how + " = " +
                                list_string(expected) + " was expected");
  }
}

static bool overlap(const ArgInfo& a, const ArgInfo& b) {
  if (a.bytes == 0 || b.bytes == 0) return false;
  auto a0 = static_cast<const char*>(a.data), b0 = static_cast<const char*>(b.data);
  return a0 < b0 + b.bytes && b0 < a0 + a.bytes;
}

void check_storage(const char* op, const std::vector<ArgInfo>& args) {
  for (const ArgInfo& a : args) {
    if (a.data == nullptr && a.bytes != 0) {
      throw std::invalid_argument(std::string(op) + ": argument '" + std::string(a.name) +
                                  "' is a null pointer but has extents " + extents_string(a));
    }
    if (!a.contiguous) {
      throw std::invalid_argument(std::string(op) + ": argument '" + std::string(a.name) +
                                  "' with extents " + extents_string(a) +
                                  " is not contiguous; a dense row-major (LayoutRight, "
                                  "unpadded) view was expected");
    }
  }
  for (const ArgInfo& out : args) {
    if (!out.is_output) continue;
    for (const ArgInfo& other : args) {
      if (&other == &out || !overlap(out, other)) continue;
      throw std::invalid_argument(std::string(op) + ": output '" + std::string(out.name) +
                                  "' overlaps '" + other.name +
                                  "' in memory; outputs must not alias inputs or other outputs");
    }
  }
}

void check_storage(const char* op, std::initializer_list<ArgInfo> args) {
  check_storage(op, std::vector<ArgInfo>(args));
}

void check_workspace_apart(const char* op, const void* data, std::size_t bytes,
                           const Arguments& args) {
  const ArgInfo workspace{"workspace", data, bytes, 1, {index_t(bytes), 0, 0, 0}, true, false};
  for (const ArgInfo& a : args) {
    if (!overlap(workspace, a)) continue;
    throw std::invalid_argument(
        std::string(op) + ": the workspace given to the context (Context::use_workspace, " +
        std::to_string(bytes) + " bytes) overlaps argument '" + a.name + "' with extents " +
        extents_string(a) + " in memory; the workspace must be memory of its own, apart "
        "from every argument of the calls made with the context");
  }
}

}  // namespace llmk::detail
