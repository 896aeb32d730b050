// Host-only builds: every pointer is host memory.
#include <llmk/detail/validate.hpp>

namespace llmk::detail {

MemoryKind memory_kind(const void*) { return MemoryKind::Host; }

}  // namespace llmk::detail
