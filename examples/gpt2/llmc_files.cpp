#include "llmc_files.hpp"

#include <llmk/bf16.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace gpt2 {

namespace {

constexpr int kHeaderInts = 256;

// The file's bytes after its header, and the header.
struct Raw {
  std::vector<std::int32_t> header = std::vector<std::int32_t>(kHeaderInts);
  std::vector<char> body;
};

Raw read_raw(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error(path + ": cannot open");
  const std::streamoff size = in.tellg();
  const std::streamoff header_bytes = kHeaderInts * std::streamoff(sizeof(std::int32_t));
  if (size < header_bytes)
    throw std::runtime_error(path + ": " + std::to_string(size) +
                             " bytes, shorter than the 1024-byte header");
  Raw r;
  in.seekg(0);
  in.read(reinterpret_cast<char*>(r.header.data()), header_bytes);
  r.body.resize(std::size_t(size - header_bytes));
  in.read(r.body.data(), std::streamsize(r.body.size()));
  if (!in) throw std::runtime_error(path + ": read failed");
  return r;
}

void write_raw(const std::string& path, const std::vector<std::int32_t>& header, const void* body,
               std::size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(header.data()),
            std::streamsize(header.size() * sizeof(std::int32_t)));
  out.write(static_cast<const char*>(body), std::streamsize(bytes));
  if (!out) throw std::runtime_error(path + ": cannot write");
}

// "path: header[i] (what) = value, expected ...".
[[noreturn]] void bad_field(const std::string& path, int i, const char* what, std::int64_t value,
                            const std::string& expected) {
  throw std::runtime_error(path + ": header[" + std::to_string(i) + "] (" + what + ") = " +
                           std::to_string(value) + ", expected " + expected);
}

}  // namespace

std::vector<TensorSpec> checkpoint_specs(const Checkpoint& ck) {
  const index_t L = ck.L, C = ck.C;
  return {{"wte", {ck.Vp, C}},           {"wpe", {ck.maxT, C}},    {"ln1w", {L, C}},
          {"ln1b", {L, C}},              {"qkvw", {L, 3 * C, C}},  {"qkvb", {L, 3 * C}},
          {"attprojw", {L, C, C}},       {"attprojb", {L, C}},     {"ln2w", {L, C}},
          {"ln2b", {L, C}},              {"fcw", {L, 4 * C, C}},   {"fcb", {L, 4 * C}},
          {"fcprojw", {L, C, 4 * C}},    {"fcprojb", {L, C}},      {"lnfw", {C}},
          {"lnfb", {C}}};
}

Checkpoint read_checkpoint(const std::string& path) {
  const Raw r = read_raw(path);
  const std::vector<std::int32_t>& h = r.header;
  if (h[0] != kCheckpointMagic)
    bad_field(path, 0, "magic", h[0], "20240326 (an llm.c GPT-2 checkpoint)");
  if (h[1] != 3 && h[1] != 5) bad_field(path, 1, "version", h[1], "3 (float32) or 5 (bf16)");
  Checkpoint ck;
  ck.version = h[1];
  const char* names[6] = {"maxT", "V", "L", "NH", "C", "Vp"};
  index_t* fields[6] = {&ck.maxT, &ck.V, &ck.L, &ck.NH, &ck.C, &ck.Vp};
  for (int i = 0; i < 6; ++i) {
    if (h[2 + i] < 1) bad_field(path, 2 + i, names[i], h[2 + i], "at least 1");
    *fields[i] = h[2 + i];
  }
  if (ck.C % ck.NH != 0)
    bad_field(path, 6, "C", ck.C, "a multiple of NH = " + std::to_string(ck.NH));
  if (ck.Vp < ck.V) bad_field(path, 7, "Vp", ck.Vp, "at least V = " + std::to_string(ck.V));
  const std::vector<TensorSpec> specs = checkpoint_specs(ck);
  std::size_t elements = 0;
  for (const TensorSpec& s : specs) elements += std::size_t(s.size());
  const std::size_t width = ck.version == 3 ? 4 : 2;
  if (r.body.size() != elements * width)
    throw std::runtime_error(path + ": the parameters take " + std::to_string(r.body.size()) +
                             " bytes after the header, expected " +
                             std::to_string(elements * width) + " (" + std::to_string(elements) +
                             " parameters of " + std::to_string(width) +
                             " bytes for this header's sizes)");
  const char* at = r.body.data();
  for (const TensorSpec& s : specs) {
    std::vector<float>& p = ck.params[s.name];
    p.resize(std::size_t(s.size()));
    if (width == 4) {
      std::copy_n(reinterpret_cast<const float*>(at), p.size(), p.data());
    } else {
      const auto* bits = reinterpret_cast<const std::uint16_t*>(at);
      for (std::size_t i = 0; i < p.size(); ++i) p[i] = float(llmk::bf16::from_bits(bits[i]));
    }
    at += p.size() * width;
  }
  return ck;
}

void write_checkpoint(const std::string& path, const Checkpoint& ck) {
  if (ck.version != 3 && ck.version != 5)
    throw std::invalid_argument("write_checkpoint: version " + std::to_string(ck.version) +
                                ", expected 3 or 5");
  std::vector<std::int32_t> h(kHeaderInts, 0);
  const index_t values[8] = {kCheckpointMagic, ck.version, ck.maxT, ck.V,
                             ck.L,             ck.NH,      ck.C,    ck.Vp};
  for (int i = 0; i < 8; ++i) h[i] = std::int32_t(values[i]);
  std::vector<char> body;
  for (const TensorSpec& s : checkpoint_specs(ck)) {
    const auto it = ck.params.find(s.name);
    if (it == ck.params.end() || index_t(it->second.size()) != s.size())
      throw std::invalid_argument("write_checkpoint: tensor " + s.name + " is missing or has " +
                                  "the wrong size (expected " + std::to_string(s.size()) + ")");
    const std::vector<float>& p = it->second;
    if (ck.version == 3) {
      const char* b = reinterpret_cast<const char*>(p.data());
      body.insert(body.end(), b, b + p.size() * 4);
    } else {
      for (const float x : p) {
        const std::uint16_t bits = llmk::bf16(x).bits;
        const char* b = reinterpret_cast<const char*>(&bits);
        body.insert(body.end(), b, b + 2);
      }
    }
  }
  write_raw(path, h, body.data(), body.size());
}

std::vector<std::int32_t> read_tokens(const std::string& path) {
  const Raw r = read_raw(path);
  const std::vector<std::int32_t>& h = r.header;
  if (h[0] != kTokensMagic) bad_field(path, 0, "magic", h[0], "20240520 (an llm.c token file)");
  if (h[1] != 1) bad_field(path, 1, "version", h[1], "1");
  if (h[2] < 0) bad_field(path, 2, "number of tokens", h[2], "at least 0");
  if (r.body.size() != std::size_t(h[2]) * 2)
    throw std::runtime_error(path + ": the tokens take " + std::to_string(r.body.size()) +
                             " bytes after the header, expected " +
                             std::to_string(std::size_t(h[2]) * 2) + " (header[2] = " +
                             std::to_string(h[2]) + " tokens of 2 bytes)");
  const auto* t = reinterpret_cast<const std::uint16_t*>(r.body.data());
  return std::vector<std::int32_t>(t, t + h[2]);
}

void write_tokens(const std::string& path, const std::vector<std::int32_t>& tokens) {
  std::vector<std::int32_t> h(kHeaderInts, 0);
  h[0] = kTokensMagic, h[1] = 1, h[2] = std::int32_t(tokens.size());
  std::vector<std::uint16_t> t(tokens.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] > 65535)
      throw std::invalid_argument("write_tokens: token " + std::to_string(i) + " = " +
                                  std::to_string(tokens[i]) + " does not fit uint16");
    t[i] = std::uint16_t(tokens[i]);
  }
  write_raw(path, h, t.data(), t.size() * 2);
}

}  // namespace gpt2
