// How a caller describes a product to the tiled GEMM (kernels/gemm_tiled.hpp):
//
//   D (rows × cols) ⟵ op(A) · op(B),   op(A) rows × depth, op(B) depth × cols,
//
// once, or for each product of a batch. GemmForm fixes at compile time which
// operands are transposed and whether there is a batch; GemmShape gives the
// sizes, GemmOperand where each operand's matrices are (row-major, any leading
// dimension, batch strides). E.g. matmul's dweight = doutᵀ·inp is
// GemmForm<true, false> of GemmShape{OC, C, M}; attention's dk = dpreattᵀ·q·α
// per (batch b, head h) is GemmForm<true, false, true> of
// GemmShape{T, HS, T, B, NH}, q's operand {qkv, 3C, T·3C, HS}.
#pragma once

#include <llmk/types.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace llmk::kernels {

// TransA: op(A)(r, k) = A(k, r), A stored depth × rows (else rows × depth).
// TransB: op(B)(k, n) = B(n, k), B stored cols × depth (else depth × cols).
// Batched: a batch of products (else one, and no batch offsets are computed).
template <bool TransA, bool TransB, bool Batched = false>
struct GemmForm {
  static constexpr bool trans_a = TransA, trans_b = TransB, batched = Batched;
};

// A triangle of zeros (or of unwanted results) each product has, which the
// GEMM then skips a tile at a time: attention's causal mask, whose products
// would otherwise do twice the causal half's multiply-adds.
//  - a_upper: op(A)(r, k) = 0 for k < r (attention's dv = attᵀ·dout_h and
//    dk = dpreattᵀ·q): a tile of rows from m0 sums over k ≥ m0 only;
//  - a_lower: op(A)(r, k) = 0 for k > r (dq = dpreatt·k): a tile of rows up
//    to m0 + BM − 1 sums over k < m0 + BM only;
//  - d_lower: only D(r, c) with c ≤ r is wanted (datt = dout_h·vᵀ): the tiles
//    wholly above the diagonal (first column ≥ their rows' end) are not
//    computed, and D there is left as it was.
// The zeros a_upper and a_lower promise must be there within a tile of the
// diagonal (the GEMM reads them); beyond it they are never read. A team
// stages its K range alone, zeros past its end, so a range that stops
// inside a chunk reads nothing after it.
enum class Triangle { none, a_upper, a_lower, d_lower };

// The sizes of each product, and the batch: outer × inner products, (o, i)
// for o < outer, i < inner. Two levels because attention's (batch, head)
// matrices have no single stride: head h of batch b of a (B, T, 3C) qkv
// starts at b·T·3C + h·HS, and b·NH + h is no multiple of one stride.
struct GemmShape {
  index_t rows = 0, cols = 0, depth = 0;
  index_t outer = 1, inner = 1;
  Triangle triangle = Triangle::none;
};

// A row-major operand: element (i, j) of product (o, n)'s matrix at
// data[o·outer_stride + n·inner_stride + i·ld + j], ld ≥ the row length.
template <class T>
struct GemmOperand {
  T* data = nullptr;
  index_t ld = 0;
  index_t outer_stride = 0, inner_stride = 0;

  // A writable operand read as an input.
  template <class U = T, class = std::enable_if_t<!std::is_const_v<U>>>
  operator GemmOperand<const U>() const {
    return {data, ld, outer_stride, inner_stride};
  }
};

// A contiguous row-major rank-2 view (a matrix, or a block of its rows) as an
// operand of an unbatched product.
template <class View>
GemmOperand<typename View::value_type> gemm_operand(const View& v) {
  return {v.data(), index_t(v.extent(1))};
}

// std::invalid_argument unless the shape's sizes are ≥ 0 (a batch only for a
// batched form) and each operand's ld holds its row.
template <class Form, class TD, class TA, class TB>
void check_gemm(const GemmShape& s, const GemmOperand<TD>& D, const GemmOperand<TA>& A,
                const GemmOperand<TB>& B) {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("llmk::kernels::TiledGemm: " + what);
  };
  if (s.rows < 0 || s.cols < 0 || s.depth < 0 || s.outer < 0 || s.inner < 0)
    fail("sizes must be >= 0, got rows = " + std::to_string(s.rows) + ", cols = " +
         std::to_string(s.cols) + ", depth = " + std::to_string(s.depth) + ", outer = " +
         std::to_string(s.outer) + ", inner = " + std::to_string(s.inner));
  if (!Form::batched && (s.outer != 1 || s.inner != 1))
    fail("an unbatched form takes outer = inner = 1, got " + std::to_string(s.outer) + " and " +
         std::to_string(s.inner));
  auto check_ld = [&](const char* name, const index_t ld, const index_t row) {
    if (ld < row)
      fail(std::string(name) + ".ld = " + std::to_string(ld) + " is less than its row length " +
           std::to_string(row));
  };
  check_ld("D", D.ld, s.cols);
  check_ld("A", A.ld, Form::trans_a ? s.rows : s.depth);
  check_ld("B", B.ld, Form::trans_b ? s.depth : s.cols);
}

}  // namespace llmk::kernels
