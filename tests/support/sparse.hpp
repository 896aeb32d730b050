// Host memory for problems larger than the machine: anonymous mappings with
// MAP_NORESERVE, whose untouched pages read as zero and cost nothing until
// written (Linux). For the M ≥ 2³¹ tests and for size checks that must fail
// before any byte of a huge array is touched.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace llmk_test {

class SparseBuffer {
 public:
  explicit SparseBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes_ == 0) return;
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    data_ = p == MAP_FAILED ? nullptr : p;
  }
  SparseBuffer(const SparseBuffer&) = delete;
  SparseBuffer& operator=(const SparseBuffer&) = delete;
  ~SparseBuffer() {
    if (data_) munmap(data_, bytes_);
  }

  bool ok() const { return bytes_ == 0 || data_ != nullptr; }
  float* floats() const { return static_cast<float*>(data_); }
  std::size_t bytes() const { return bytes_; }

  // Asks for transparent huge pages (where the kernel gives them on request):
  // 512 times fewer page faults when gigabytes are written.
  void advise_huge_pages() const {
#ifdef MADV_HUGEPAGE
    if (data_) madvise(data_, bytes_, MADV_HUGEPAGE);
#endif
  }

  // Gives every page back (they read as zero again).
  void release() const {
    if (data_) madvise(data_, bytes_, MADV_DONTNEED);
  }

  // Pages of the mapping that are in memory (written, or read from a file).
  std::size_t resident_pages() const {
    if (!data_) return 0;
    const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> vec((bytes_ + page - 1) / page);
    if (mincore(data_, bytes_, vec.data()) != 0) return std::size_t(-1);
    std::size_t n = 0;
    for (unsigned char v : vec) n += v & 1;
    return n;
  }

 private:
  std::size_t bytes_;
  void* data_ = nullptr;
};

// /proc/meminfo's MemAvailable in bytes, or 0 if it cannot be read.
inline std::uint64_t mem_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  std::uint64_t kib = 0;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

}  // namespace llmk_test
