// Host-only builds: every pointer is host memory.
#include <core/validate.hpp>

namespace llmk::detail {

MemoryKind memory_kind(const void*) { return MemoryKind::Host; }

}  // namespace llmk::detail
