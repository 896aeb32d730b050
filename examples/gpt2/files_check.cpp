#include "files_check.hpp"

#include "llmc_files.hpp"
#include "train.hpp"

#include <llmk/bf16.hpp>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <vector>

namespace gpt2 {

namespace {

std::vector<char> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void spill(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

void set_header(std::vector<char>& bytes, int i, std::int32_t value) {
  std::memcpy(bytes.data() + 4 * i, &value, 4);
}

struct Checker {
  bool all = true;
  void expect(const char* what, bool ok) {
    std::printf("%-58s %s\n", what, ok ? "ok" : "FAILED");
    all = all && ok;
  }
  // read(path) must throw std::runtime_error naming path and `field`.
  void refused(const char* what, const std::string& path, const std::string& field,
               const std::function<void(const std::string&)>& read) {
    std::string message = "(nothing thrown)";
    try {
      read(path);
    } catch (const std::runtime_error& e) {
      message = e.what();
    }
    const bool ok = message.find(path) != std::string::npos &&
                    message.find(field) != std::string::npos;
    expect(what, ok);
    if (!ok) std::printf("  expected '%s' in: %s\n", field.c_str(), message.c_str());
  }
};

}  // namespace

bool files_selfcheck(const std::string& dir) {
  Checker c;
  Checkpoint ck;
  ck.maxT = 5, ck.V = 11, ck.L = 2, ck.NH = 2, ck.C = 8, ck.Vp = 16;
  Config cfg{ck.L, ck.C, ck.NH, ck.V, ck.Vp, 1, ck.maxT};
  ck.params = random_parameters(cfg, ck.maxT, 7);
  for (auto& [name, p] : ck.params)  // every value distinct from its bf16 rounding
    for (std::size_t i = 0; i < p.size(); ++i) p[i] += 1e-3f * float(i % 7) + 1.2345e-4f;

  const std::string v3 = dir + "/checkpoint_v3.bin", v5 = dir + "/checkpoint_v5.bin";
  write_checkpoint(v3, ck);
  const Checkpoint r3 = read_checkpoint(v3);
  c.expect("version 3: header and parameters read back exactly",
           r3.version == 3 && r3.maxT == 5 && r3.V == 11 && r3.L == 2 && r3.NH == 2 &&
               r3.C == 8 && r3.Vp == 16 && r3.params == ck.params);
  ck.version = 5;
  write_checkpoint(v5, ck);
  const Checkpoint r5 = read_checkpoint(v5);
  bool rounded = r5.version == 5 && r5.params.size() == ck.params.size();
  for (const auto& [name, p] : ck.params)
    for (std::size_t i = 0; i < p.size() && rounded; ++i)
      rounded = r5.params.at(name)[i] == float(llmk::bf16(p[i])) && r5.params.at(name)[i] != p[i];
  c.expect("version 5: each parameter read back as its bf16 rounding", rounded);

  const std::string tokens_path = dir + "/tokens.bin";
  std::vector<std::int32_t> tokens;
  for (std::int32_t i = 0; i < 1000; ++i) tokens.push_back((i * 7919) % 65536);
  write_tokens(tokens_path, tokens);
  c.expect("token file: 1000 tokens in [0, 65536) read back", read_tokens(tokens_path) == tokens);

  // Corruptions, one at a time, of the files above.
  const std::vector<char> good_ck = slurp(v3), good_tokens = slurp(tokens_path);
  const std::string bad = dir + "/corrupt.bin";
  const auto read_ck = [](const std::string& p) { read_checkpoint(p); };
  const auto read_tok = [](const std::string& p) { read_tokens(p); };
  struct HeaderCase {
    const char* what;
    int index;
    std::int32_t value;
    const char* field;
  };
  const HeaderCase ck_cases[] = {
      {"checkpoint: a wrong magic refused", 0, 20240520, "header[0] (magic)"},
      {"checkpoint: version 4 refused", 1, 4, "header[1] (version)"},
      {"checkpoint: maxT 0 refused", 2, 0, "header[2] (maxT)"},
      {"checkpoint: L -1 refused", 4, -1, "header[4] (L)"},
      {"checkpoint: C not a multiple of NH refused", 6, 9, "header[6] (C)"},
      {"checkpoint: Vp < V refused", 7, 10, "header[7] (Vp)"},
      {"checkpoint: a header's size unlike the parameters' refused", 4, 3, "the parameters take"},
  };
  for (const HeaderCase& k : ck_cases) {
    std::vector<char> b = good_ck;
    set_header(b, k.index, k.value);
    spill(bad, b);
    c.refused(k.what, bad, k.field, read_ck);
  }
  std::vector<char> b = good_ck;
  b.pop_back();
  spill(bad, b);
  c.refused("checkpoint: a byte short refused", bad, "the parameters take", read_ck);
  b = good_ck;
  b.push_back(0);
  spill(bad, b);
  c.refused("checkpoint: a byte over refused", bad, "the parameters take", read_ck);
  spill(bad, std::vector<char>(good_ck.begin(), good_ck.begin() + 100));
  c.refused("checkpoint: shorter than its header refused", bad, "1024-byte header", read_ck);
  c.refused("checkpoint: a missing file refused", dir + "/missing.bin", "cannot open", read_ck);

  const HeaderCase token_cases[] = {
      {"token file: a checkpoint's magic refused", 0, 20240326, "header[0] (magic)"},
      {"token file: version 2 refused", 1, 2, "header[1] (version)"},
      {"token file: a count unlike the tokens' refused", 2, 1001, "the tokens take"},
      {"token file: a negative count refused", 2, -1, "header[2] (number of tokens)"},
  };
  for (const HeaderCase& k : token_cases) {
    b = good_tokens;
    set_header(b, k.index, k.value);
    spill(bad, b);
    c.refused(k.what, bad, k.field, read_tok);
  }
  b = good_tokens;
  b.pop_back();
  spill(bad, b);
  c.refused("token file: a byte short refused", bad, "the tokens take", read_tok);
  // Shards: a glob pattern's files one after the other, then back to the first.
  std::vector<std::int32_t> shard0(100), shard1(100);
  for (std::int32_t i = 0; i < 100; ++i) shard0[std::size_t(i)] = i, shard1[std::size_t(i)] = 1000 + i;
  write_tokens(dir + "/shard_000.bin", shard0);
  write_tokens(dir + "/shard_001.bin", shard1);
  TokenStream stream(dir + "/shard_*.bin", 1, 8, 2000);  // 12 batches of 8 (+1) a shard
  std::vector<std::int32_t> in, tg;
  std::vector<std::int32_t> firsts;
  bool shifted = true;
  for (int b = 0; b < 25; ++b) {
    stream.next(in, tg);
    firsts.push_back(in[0]);
    for (std::size_t i = 0; i + 1 < in.size(); ++i) shifted = shifted && tg[i] == in[i + 1];
  }
  c.expect("shards: 2 files, in name order, each in turn, then the first again",
           stream.files().size() == 2 && firsts[0] == 0 && firsts[11] == 88 &&
               firsts[12] == 1000 && firsts[23] == 1088 && firsts[24] == 0 && shifted);
  stream.next(in, tg);
  stream.next(in, tg);
  stream.rewind();
  stream.next(in, tg);
  c.expect("shards: rewind starts at the first file's first batch", in[0] == 0);
  std::string message = "(nothing thrown)";
  try {
    TokenStream none(dir + "/none_*.bin", 1, 8, 2000);
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  c.expect("shards: a pattern without files refused, naming it",
           message.find("none_*.bin: no token file matches it") != std::string::npos);
  std::printf("%s\n", c.all ? "every file case passed" : "FAILED: a file case");
  return c.all;
}

}  // namespace gpt2
