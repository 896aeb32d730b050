// A declared operation's arguments in the backend's memory, for llmk-perf:
// one byte buffer each, in the order of its declaration (src/ops/<op>/spec.hpp),
// its element type that of its role in the run's precision, its extents from
// the run's sizes (core/op/arguments.hpp). part() is the same buffers seen
// with smaller sizes: the first rows or sequences, which the probes time.
// An absent argument (an optional one the run leaves out) has no buffer; an
// input an output replaces in place (the classifier's logits under dlogits)
// is the output's buffer.
#pragma once

#include <core/op/arguments.hpp>
#include <core/reference/bf16.hpp>
#include <llmk/tensor_ref.hpp>
#include <llmk/types.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace llmk::perf {

template <class ExecSpace, class Spec>
class OpArrays {
 public:
  using Sizes = core::op::SymbolSizes;
  using Bytes = Kokkos::View<unsigned char*, Kokkos::LayoutRight, typename ExecSpace::device_type>;

  // present[i]: whether argument i is passed (empty: all); in_place: the
  // outputs that may replace an input (Arg::in_place_of) do.
  OpArrays(const Sizes& sizes, const std::string& precision, std::vector<bool> present = {},
           bool in_place = false)
      : sizes_(sizes), present_(std::move(present)) {
    present_.resize(Spec::args.size(), true);
    for (std::size_t i = 0; i < Spec::args.size(); ++i)
      dtypes_.push_back(core::op::arg_dtype<typename Spec::Precisions>(Spec::args[i], precision));
    buffers_.resize(Spec::args.size());
    replaced_by_.assign(Spec::args.size(), -1);
    for (std::size_t o = 0; in_place && o < Spec::args.size(); ++o)
      for (std::size_t i = 0; i < Spec::args.size(); ++i)
        if (!Spec::args[o].in_place_of.empty() && Spec::args[i].name == Spec::args[o].in_place_of)
          replaced_by_[i] = int(o);
    for (std::size_t i = 0; i < Spec::args.size(); ++i) {
      if (present_[i] && replaced_by_[i] < 0)
        buffers_[i] = Bytes("llmk-perf::" + std::string(Spec::args[i].name),
                            std::size_t(elements(i)) * element_bytes(i));
    }
    for (std::size_t i = 0; i < Spec::args.size(); ++i)
      if (replaced_by_[i] >= 0) buffers_[i] = buffers_[std::size_t(replaced_by_[i])];
  }

  const Sizes& sizes() const { return sizes_; }
  std::int64_t size(std::string_view symbol) const { return sizes_[symbol]; }
  // The same buffers as a problem of other (smaller) sizes.
  OpArrays part(const Sizes& sizes) const {
    OpArrays a = *this;
    a.sizes_ = sizes;
    return a;
  }

  DType dtype(std::size_t i) const { return dtypes_[i]; }
  std::size_t element_bytes(std::size_t i) const {
    return Spec::args[i].int32 || dtypes_[i] == DType::f32 ? 4 : 2;
  }
  std::vector<std::int64_t> extents(std::size_t i) const {
    return core::op::extents_of(Spec::args[i].extents, sizes_);
  }
  std::int64_t elements(std::size_t i) const {
    std::int64_t n = 1;
    for (const std::int64_t e : extents(i)) n *= e;
    return n;
  }
  bool present(std::size_t i) const { return present_[i]; }
  // Whether input i is an output's buffer (its values are the output's initial ones).
  bool replaced(std::size_t i) const { return replaced_by_[i] >= 0; }
  void* data(std::size_t i) const { return present_[i] ? buffers_[i].data() : nullptr; }
  BufferRef out(std::size_t i) const { return BufferRef(data(i), dtype(i)); }
  ConstBufferRef in(std::size_t i) const { return ConstBufferRef(data(i), dtype(i)); }
  const std::int32_t* ints(std::size_t i) const {
    return static_cast<const std::int32_t*>(data(i));
  }

  // Host bytes of argument i from its values (float narrowed to bf16 where
  // its type is bf16: exact for a bf16 problem's values), and back.
  std::vector<unsigned char> encode(std::size_t i, const std::vector<float>& values) const {
    std::vector<unsigned char> bytes(values.size() * element_bytes(i));
    if (dtype(i) == DType::bf16) {
      const std::vector<std::uint16_t> bits = reference::narrow_to_bf16(values);
      std::memcpy(bytes.data(), bits.data(), bytes.size());
    } else {
      std::memcpy(bytes.data(), values.data(), bytes.size());
    }
    return bytes;
  }
  static std::vector<unsigned char> encode_ints(const std::vector<std::int32_t>& values) {
    std::vector<unsigned char> bytes(values.size() * sizeof(std::int32_t));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
  }
  // Bytes into argument i's buffer (all of it), enqueued on exec.
  void upload(const ExecSpace& exec, std::size_t i, const std::vector<unsigned char>& bytes) const {
    using Host = Kokkos::View<const unsigned char*, Kokkos::LayoutRight, Kokkos::HostSpace,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    Kokkos::deep_copy(exec, buffers_[i], Host(bytes.data(), bytes.size()));
  }
  // Argument i's bytes on the host (after a fence).
  std::vector<unsigned char> download(const ExecSpace& exec, std::size_t i) const {
    std::vector<unsigned char> bytes(buffers_[i].extent(0));
    using Host = Kokkos::View<unsigned char*, Kokkos::LayoutRight, Kokkos::HostSpace,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    Kokkos::deep_copy(exec, Host(bytes.data(), bytes.size()), buffers_[i]);
    exec.fence();
    return bytes;
  }

 private:
  Sizes sizes_;
  std::vector<bool> present_;
  std::vector<DType> dtypes_;
  std::vector<Bytes> buffers_;
  std::vector<int> replaced_by_;  // per input: the output whose buffer it is, or -1
};

}  // namespace llmk::perf
