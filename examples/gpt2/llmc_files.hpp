// llm.c's files, as its train_gpt2.cu reads and writes them, for the
// trainer: checkpoints (gpt2_124M.bin, gpt2_124M_bf16.bin) and token files
// (fineweb_train_000001.bin, tinyshakespeare_val.bin, ...). Little-endian.
//
// Checkpoint: a header of 256 int32,
//   [0] 20240326 (magic)  [1] version: 3 (float32 parameters) or 5 (bf16)
//   [2] maxT  [3] V  [4] L  [5] NH  [6] C  [7] Vp   (the rest 0)
// then the 16 parameter tensors one after the other in llm.c's order
// (wte (Vp, C), wpe (maxT, C), ln1w, ln1b, qkvw, qkvb, attprojw, attprojb,
// ln2w, ln2b, fcw, fcb, fcprojw, fcprojb, lnfw, lnfb: model.hpp's names,
// with wpe's maxT rows), 4 or 2 bytes an element, nothing after them.
//
// Token file: a header of 256 int32,
//   [0] 20240520 (magic)  [1] version 1  [2] the number of tokens
// then the tokens, uint16 each, nothing after them.
//
// Every read checks the file against its header before it returns: a bad
// file is a std::runtime_error naming the file and the field (the header's
// entry, or the parameters' or tokens' byte count).
#pragma once

#include "model.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace gpt2 {

inline constexpr std::int32_t kCheckpointMagic = 20240326;
inline constexpr std::int32_t kTokensMagic = 20240520;

struct Checkpoint {
  int version = 3;  // 3: float32 parameters, 5: bf16
  index_t maxT = 0, V = 0, L = 0, NH = 0, C = 0, Vp = 0;
  Floats params;  // the 16 tensors by name, as float (bf16 ones widened exactly)
};

// The 16 tensors' names and shapes in llm.c's order (wpe: maxT rows).
std::vector<TensorSpec> checkpoint_specs(const Checkpoint& ck);

Checkpoint read_checkpoint(const std::string& path);
// Version 5 rounds each parameter to bf16 (to nearest even). Throws
// std::invalid_argument for a tensor of the wrong size, std::runtime_error
// when the file cannot be written.
void write_checkpoint(const std::string& path, const Checkpoint& ck);

std::vector<std::int32_t> read_tokens(const std::string& path);
void write_tokens(const std::string& path, const std::vector<std::int32_t>& tokens);

}  // namespace gpt2
