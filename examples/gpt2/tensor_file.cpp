#include "tensor_file.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace gpt2 {

namespace {

struct Reader {
  std::ifstream in;
  std::string path;

  void read(void* dst, std::size_t bytes, const std::string& what) {
    in.read(static_cast<char*>(dst), std::streamsize(bytes));
    if (!in) throw std::runtime_error(path + ": truncated in " + what);
  }
  template <class U>
  U scalar(const std::string& what) {
    U v;
    read(&v, sizeof v, what);
    return v;
  }
};

enum : std::uint32_t { kF32 = 0, kI32 = 1, kBf16 = 2 };

}  // namespace

TensorFile read_tensor_file(const std::string& path) {
  Reader r{std::ifstream(path, std::ios::binary), path};
  if (!r.in) throw std::runtime_error(path + ": cannot open");
  char magic[8];
  r.read(magic, 8, "the header");
  if (std::memcmp(magic, "LLMKGPT2", 8) != 0) {
    throw std::runtime_error(path + ": not a gpt2_torch.py file (no LLMKGPT2 header)");
  }
  if (const auto v = r.scalar<std::uint32_t>("the header"); v != 1) {
    throw std::runtime_error(path + ": version " + std::to_string(v) + ", expected 1");
  }
  TensorFile f;
  bool have_config = false;
  while (r.in.peek() != std::char_traits<char>::eof()) {
    const auto name_len = r.scalar<std::uint32_t>("a record's name");
    if (name_len > 256) throw std::runtime_error(path + ": a record's name is too long");
    std::string name(name_len, '\0');
    r.read(name.data(), name_len, "a record's name");
    const auto dtype = r.scalar<std::uint32_t>(name);
    const auto rank = r.scalar<std::uint32_t>(name);
    if (rank > 8) throw std::runtime_error(path + ": " + name + " has rank " + std::to_string(rank));
    std::int64_t n = 1;
    for (std::uint32_t i = 0; i < rank; ++i) n *= r.scalar<std::int64_t>(name);
    if (dtype == kI32) {
      std::vector<std::int32_t> v(static_cast<std::size_t>(n));
      r.read(v.data(), v.size() * 4, name);
      if (name == "config") {
        if (v.size() != 7) throw std::runtime_error(path + ": config needs 7 values");
        Config& c = f.inputs.cfg;
        c = Config{v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
        have_config = true;
      } else if (name == "tokens") {
        f.inputs.tokens = std::move(v);
      } else if (name == "targets") {
        f.inputs.targets = std::move(v);
      }
      continue;
    }
    std::vector<float> v(static_cast<std::size_t>(n));
    if (dtype == kF32) {
      r.read(v.data(), v.size() * 4, name);
    } else if (dtype == kBf16) {
      std::vector<std::uint16_t> bits(v.size());
      r.read(bits.data(), bits.size() * 2, name);
      for (std::size_t i = 0; i < v.size(); ++i) {
        const std::uint32_t u = std::uint32_t(bits[i]) << 16;
        std::memcpy(&v[i], &u, 4);
      }
    } else {
      throw std::runtime_error(path + ": " + name + " has unknown dtype " + std::to_string(dtype));
    }
    if (name.rfind("grad.", 0) == 0) {
      f.gradients[name] = std::vector<double>(v.begin(), v.end());
    } else if (name.rfind("time_ms.", 0) == 0) {
      if (!v.empty()) f.times_ms[name.substr(8)] = v[0];
    } else if (name == "losses") {
      f.losses.assign(v.begin(), v.end());
    } else {
      f.inputs.tensors[name] = std::move(v);
    }
  }
  if (!have_config) throw std::runtime_error(path + ": no config record");
  return f;
}

}  // namespace gpt2
