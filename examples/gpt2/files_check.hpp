// The self-check of llm.c's files (llmc_files.hpp), without a device:
// checkpoints of both versions and a token file written to a folder and read
// back (float32 exactly, bf16 as its rounding), then each corrupted one field
// at a time (the header's magic, version and sizes, a byte short, a byte
// over) and refused with an error naming the file and the field.
#pragma once

#include <string>

namespace gpt2 {

// Prints one line per case; true when all passed.
bool files_selfcheck(const std::string& dir);

}  // namespace gpt2
