// The arguments of llmk's calls, whatever their element type.
//
// TensorRef<ExecSpace> (an output) and ConstTensorRef<ExecSpace> (an input)
// refer to a dense row-major array of float or llmk::bf16 in ExecSpace's
// memory. They convert implicitly from a rank-1 to rank-4 Kokkos::View
// (LayoutRight, or LayoutStride that happens to be dense) whose memory
// ExecSpace can access, so that the typed views of types.hpp can be passed as
// before. A default-constructed (or nullptr) reference is "no such argument"
// (no dbias, no pre_gelu). The call checks element types, extents and storage,
// and throws std::invalid_argument naming the argument when they do not fit.
//
// BufferRef / ConstBufferRef: a raw pointer with its element type, for the
// raw-pointer entries (llm.c's buffers). From float*, llmk::bf16*, nullptr,
// and (when <cuda_bf16.h> is included first) __nv_bfloat16*.
#pragma once

#include <llmk/types.hpp>

#include <cstddef>
#include <initializer_list>
#include <type_traits>

#if defined(__CUDA_BF16_TYPES_EXIST__)
#define LLMK_HAS_NV_BFLOAT16 1
#endif

namespace llmk {

template <bool Const>
struct BufferRefT {
  using pointer = std::conditional_t<Const, const void*, void*>;
  template <class T>
  using typed = std::conditional_t<Const, const T*, T*>;

  pointer data = nullptr;
  DType dtype = DType::f32;

  BufferRefT() = default;
  BufferRefT(std::nullptr_t) {}
  BufferRefT(typed<float> p) : data(p), dtype(DType::f32) {}
  BufferRefT(typed<bf16> p) : data(p), dtype(DType::bf16) {}
  BufferRefT(pointer p, DType t) : data(p), dtype(t) {}
#ifdef LLMK_HAS_NV_BFLOAT16
  BufferRefT(typed<__nv_bfloat16> p) : data(p), dtype(DType::bf16) {}
#endif
  // An output's buffer is also an input's.
  template <bool C = Const, class = std::enable_if_t<C>>
  BufferRefT(const BufferRefT<false>& b) : data(b.data), dtype(b.dtype) {}
};
using BufferRef = BufferRefT<false>;
using ConstBufferRef = BufferRefT<true>;

template <class ExecSpace, bool Const>
class TensorRefT {
 public:
  using pointer = typename BufferRefT<Const>::pointer;

  TensorRefT() = default;
  TensorRefT(std::nullptr_t) {}

  // A dense row-major array of the given extents (1 to 4 of them: rank 4 is
  // attention's (B, NH, T, T) probabilities).
  TensorRefT(BufferRefT<Const> buffer, std::initializer_list<index_t> extents)
      : data_(buffer.data), dtype_(buffer.dtype), rank_(int(extents.size())) {
    int r = 0;
    for (index_t e : extents) extents_[r++] = e;
  }

  template <class View, class = std::enable_if_t<Kokkos::is_view<View>::value>>
  TensorRefT(const View& v) : data_(v.data()), rank_(int(View::rank)) {
    using T = typename View::non_const_value_type;
    static_assert(View::rank >= 1 && View::rank <= 4, "llmk takes views of rank 1 to 4");
    static_assert(Const || !std::is_const_v<typename View::value_type>,
                  "an output of llmk must be a view of non-const elements");
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                  "the view's memory must be accessible from the call's execution space");
    static_assert(View::rank == 1 ||
                      !std::is_same_v<typename View::array_layout, Kokkos::LayoutLeft>,
                  "llmk's arrays are row-major (LayoutRight), not LayoutLeft");
    dtype_ = dtype_of<T>();
    index_t dense_stride = 1;
    for (int r = int(View::rank) - 1; r >= 0; --r) {
      extents_[r] = index_t(v.extent(r));
      if (v.extent(r) > 1 && index_t(v.stride(r)) != dense_stride) contiguous_ = false;
      dense_stride *= index_t(v.extent(r));
    }
    if (!v.span_is_contiguous()) contiguous_ = false;
  }

  // An output's reference is also an input's.
  template <bool C = Const, class = std::enable_if_t<C>>
  TensorRefT(const TensorRefT<ExecSpace, false>& t)
      : data_(t.data()),
        dtype_(t.dtype()),
        rank_(t.rank()),
        extents_{t.extent(0), t.extent(1), t.extent(2), t.extent(3)},
        contiguous_(t.contiguous()) {}

  pointer data() const { return data_; }
  DType dtype() const { return dtype_; }
  int rank() const { return rank_; }  // 0: no argument
  index_t extent(int r) const { return r < rank_ ? extents_[r] : 1; }
  index_t size() const {
    index_t n = rank_ ? 1 : 0;
    for (int r = 0; r < rank_; ++r) n *= extents_[r];
    return n;
  }
  bool empty() const { return rank_ == 0; }
  bool contiguous() const { return contiguous_; }

 private:
  pointer data_ = nullptr;
  DType dtype_ = DType::f32;
  int rank_ = 0;
  index_t extents_[4] = {0, 0, 0, 0};
  bool contiguous_ = true;
};

template <class ExecSpace>
using TensorRef = TensorRefT<ExecSpace, false>;
template <class ExecSpace>
using ConstTensorRef = TensorRefT<ExecSpace, true>;

namespace detail {
template <class T>
struct NoDeduce {
  using type = T;
};
}  // namespace detail
// Parameter types of the entry points that take their execution space from
// the context or instance argument (views convert to them implicitly).
template <class ExecSpace>
using Out = TensorRef<typename detail::NoDeduce<ExecSpace>::type>;
template <class ExecSpace>
using In = ConstTensorRef<typename detail::NoDeduce<ExecSpace>::type>;

}  // namespace llmk
