// The GEMM description's checks, its column-major view, and the
// cublasGemmEx executor (gemm.hpp). The cuBLASLt executor: gemm_lt.cpp.
#include "gemm.hpp"

#include <core/checked.hpp>  // kMaxElements

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <initializer_list>
#include <stdexcept>

namespace llmk::backends::cublas {

void Epilogues::add(const Epilogue& e) {
  if (count == int(sizeof(choices) / sizeof(choices[0])))
    throw std::logic_error("llmk: a GEMM asks for more epilogues than Epilogues holds");
  choices[count++] = e;
}

namespace {

[[noreturn]] void refuse(const Gemm& g, const std::string& why) {
  throw std::invalid_argument(std::string("llmk: GEMM '") + g.what + "': " + why);
}

bool is_element_type(cudaDataType_t t) { return t == CUDA_R_32F || t == CUDA_R_16BF; }
const char* type_name(cudaDataType_t t) {
  return t == CUDA_R_32F ? "float32" : t == CUDA_R_16BF ? "bf16" : "not float32 or bf16";
}

// An operand as it lies in memory: a row-major rows×cols matrix per batch.
struct Stored {
  const char* name;
  const void* data;
  index_t rows, cols, ld, stride;
  cudaDataType_t type;
  index_t group_stride = 0;
};

Stored stored(const char* name, const Input& x, Op op, index_t op_rows, index_t op_cols) {
  return op == Op::N
             ? Stored{name, x.data, op_rows, op_cols, x.ld, x.stride, x.type, x.group_stride}
             : Stored{name, x.data, op_cols, op_rows, x.ld, x.stride, x.type, x.group_stride};
}

// Elements from the first element of x's first batch past the last of its
// last batch in its last group (sizes are ≥ 1 here). No string is built
// unless it overflows.
index_t span(const Gemm& g, const Stored& x, index_t batch, index_t groups, index_t group_stride) {
  const auto product = [&](index_t a, index_t b, const char* what) {
    if (a != 0 && b > core::kMaxElements / a)
      refuse(g, std::string(x.name) + "'s " + what + " overflow: " + std::to_string(a) + " · " +
                    std::to_string(b) + " elements (at most 2^60 are supported)");
    return a * b;
  };
  const index_t total = product(x.rows - 1, x.ld, "rows") + x.cols +
                        product(batch - 1, x.stride, "batches") +
                        product(groups - 1, group_stride, "groups");
  if (total > core::kMaxElements)  // each term ≤ 2^60: the sum did not overflow
    refuse(g, std::string(x.name) + " spans " + std::to_string(total) +
                  " elements: at most 2^60 are supported");
  return total;
}
index_t span(const Gemm& g, const Stored& x, index_t batch) { return span(g, x, batch, 1, 0); }

void check_operand(const Gemm& g, const Stored& x) {
  if (x.data == nullptr) refuse(g, std::string(x.name) + " is null");
  if (x.ld < x.cols)
    refuse(g, "the leading dimension of " + std::string(x.name) + " is " + std::to_string(x.ld) +
                  ", less than its rows' length " + std::to_string(x.cols) + " (stored " +
                  std::to_string(x.rows) + "×" + std::to_string(x.cols) + ", row-major)");
  if (x.stride < 0)
    refuse(g, "the batch stride of " + std::string(x.name) + " is " + std::to_string(x.stride) +
                  ": expected ≥ 0");
  if (x.group_stride < 0)
    refuse(g, "the group stride of " + std::string(x.name) + " is " +
                  std::to_string(x.group_stride) + ": expected ≥ 0");
}

// Batches of D write distinct elements: each batch's elements lie past the
// previous batch's last, or the batches lie side by side within D's rows.
void check_batches_apart(const Gemm& g, const Stored& d) {
  if (g.batch == 1) return;
  const index_t one = span(g, d, 1);
  const bool after = d.stride >= one;
  const bool side_by_side =
      d.stride >= d.cols &&
      d.stride <= (d.ld - d.cols) / (g.batch - 1);  // (batch-1)·stride + n ≤ ld
  if (!after && !side_by_side)
    refuse(g, "the batches of D overlap: stride " + std::to_string(d.stride) + " with " +
                  std::to_string(g.batch) + " batches of " + std::to_string(d.rows) + "×" +
                  std::to_string(d.cols) + " (leading dimension " + std::to_string(d.ld) +
                  "); expected a stride ≥ " + std::to_string(one) +
                  ", or batches side by side within D's rows");
}

// Groups of D lie one after the other: each past the previous one's last
// element.
void check_groups_apart(const Gemm& g, const Stored& d) {
  if (g.groups == 1) return;
  const index_t group = span(g, d, g.batch);
  if (d.group_stride < group)
    refuse(g, "the groups of D overlap: group stride " + std::to_string(d.group_stride) +
                  ", where a group of " + std::to_string(g.batch) + " batches spans " +
                  std::to_string(group) + " elements");
}

// Bytes [begin, end) an array covers.
struct Bytes {
  const char* name;
  std::uintptr_t begin, end;
};

Bytes bytes(const Gemm& g, const Stored& x, index_t batch, index_t groups = 1) {
  const auto begin = reinterpret_cast<std::uintptr_t>(x.data);
  const index_t elements = span(g, x, batch, groups, x.group_stride);
  return {x.name, begin, begin + std::uintptr_t(elements) * element_bytes(x.type)};
}

void check_apart(const Gemm& g, const Bytes& out, std::initializer_list<Bytes> others) {
  for (const Bytes& x : others)
    if (x.begin < out.end && out.begin < x.end)
      refuse(g, std::string("the output ") + out.name + " overlaps " + x.name);
}

void check_epilogue(const Gemm& g, const Epilogue& e, const Bytes& a, const Bytes& b,
                    const Bytes& d) {
  if (e.kind == Epilogue::Kind::none) return;
  if (g.alpha != 1.0f)
    refuse(g,
           "an epilogue needs alpha = 1 (cuBLASLt does not say how alpha scales its extra output)");
  if (g.batch != 1) refuse(g, "epilogues are built for one batch only");
  const bool reads_bias = e.kind == Epilogue::Kind::bias ||
                          (e.kind == Epilogue::Kind::gelu_aux && e.bias != nullptr);
  if (e.kind == Epilogue::Kind::dgelu || e.kind == Epilogue::Kind::gelu_aux) {
    if (e.aux == nullptr) refuse(g, "the GELU epilogue's aux (pre-activation) is null");
    if (e.aux_ld < g.n)
      refuse(g, "the GELU epilogue's aux_ld is " + std::to_string(e.aux_ld) +
                    ", less than D's rows' length " + std::to_string(g.n));
    const Stored aux{"aux", e.aux, g.m, g.n, e.aux_ld, 0, g.d.type};
    const Bytes aux_bytes = bytes(g, aux, 1);
    check_apart(g, d, {aux_bytes});
    if (e.kind == Epilogue::Kind::gelu_aux) check_apart(g, aux_bytes, {a, b});
  } else if (e.kind == Epilogue::Kind::bias_grad) {
    if (e.bias == nullptr) refuse(g, "the bias-gradient epilogue's bias is null");
    if (!is_element_type(e.bias_type))
      refuse(g, std::string("the bias-gradient epilogue's bias type is ") + type_name(e.bias_type));
    const auto begin = reinterpret_cast<std::uintptr_t>(e.bias);
    check_apart(g, {"bias", begin, begin + std::uintptr_t(g.m) * element_bytes(e.bias_type)},
                {a, b, d});
  } else if (e.bias == nullptr) {
    refuse(g, "the bias epilogue's bias is null");
  }
  if (reads_bias) {
    if (!is_element_type(e.bias_type))
      refuse(g, std::string("the bias epilogue's bias type is ") + type_name(e.bias_type));
    const auto begin = reinterpret_cast<std::uintptr_t>(e.bias);
    check_apart(g, d, {{"bias", begin, begin + std::uintptr_t(g.n) * element_bytes(e.bias_type)}});
  }
}

}  // namespace

void check(const Gemm& g) {
  if (g.what == nullptr)
    throw std::invalid_argument("llmk: a GEMM without a name (Gemm::what is null)");
  if (g.m < 1 || g.n < 1 || g.k < 1)
    refuse(g, "sizes m = " + std::to_string(g.m) + ", n = " + std::to_string(g.n) + ", k = " +
                  std::to_string(g.k) + ": expected ≥ 1 (an empty GEMM has nothing to launch)");
  if (g.batch < 1) refuse(g, "batch = " + std::to_string(g.batch) + ": expected ≥ 1");
  if (g.groups < 1) refuse(g, "groups = " + std::to_string(g.groups) + ": expected ≥ 1");
  const auto check_type = [&](const char* name, cudaDataType_t type) {
    if (!is_element_type(type))
      refuse(g, std::string(name) + "'s type is " + type_name(type) + ": expected float32 or bf16");
  };
  check_type("A", g.a.type);
  check_type("B", g.b.type);
  check_type("D", g.d.type);
  if (g.a.type != g.b.type)
    refuse(g, std::string("A is ") + type_name(g.a.type) + " and B " + type_name(g.b.type) +
                  ": cuBLAS multiplies matrices of one type");
  if (g.a.type == CUDA_R_32F && g.d.type != CUDA_R_32F)
    refuse(g, "float32 A and B need a float32 D (cuBLAS has no GEMM of float32 into bf16)");
  if (g.compute == Compute::tf32 && g.a.type != CUDA_R_32F)
    refuse(g, "TF32 is for float32 A and B (bf16 inputs already use the tensor cores)");

  const Stored a = stored("A", g.a, g.op_a, g.m, g.k);
  const Stored b = stored("B", g.b, g.op_b, g.k, g.n);
  const Stored d{"D", g.d.data, g.m, g.n, g.d.ld, g.d.stride, g.d.type, g.d.group_stride};
  for (const Stored& x : {a, b, d}) check_operand(g, x);
  check_batches_apart(g, d);
  check_groups_apart(g, d);
  const Bytes a_bytes = bytes(g, a, g.batch, g.groups), b_bytes = bytes(g, b, g.batch, g.groups),
              d_bytes = bytes(g, d, g.batch, g.groups);
  check_apart(g, d_bytes, {a_bytes, b_bytes});
  for (int i = 0; i < g.epilogues.count; ++i)
    check_epilogue(g, g.epilogues.choices[i], a_bytes, b_bytes, d_bytes);
  if (g.workspace == nullptr && g.workspace_bytes > 0)
    refuse(g, "the workspace is null with " + std::to_string(g.workspace_bytes) + " bytes");
}

// cuBLAS is column-major. A row-major R×C matrix with leading dimension ld
// is, in the same memory, the column-major C×R matrix (its transpose) with
// the same ld. So the row-major D (m×n) = op(A)·op(B) is, column-major,
//   Dᵀ (n×m, ldd) = op(B)ᵀ · op(A)ᵀ,
// where op(B)ᵀ is B's column-major view as it is (op(B) = B) or transposed
// (op(B) = Bᵀ): cuBLAS's A is our B with our op_b, its B our A with our op_a,
// m and n swap, k stays, and each matrix keeps its leading dimension and its
// batch stride. The epilogues follow: DGELU's aux has D's layout, and our
// bias_grad, Σ_k op(A)(i, k), sums cuBLAS's B over k: cuBLASLt's BGRADB.
//   matmul_backward: dinp (M×C) ⟵ dout (M×OC) · weight (OC×C)
//                      column-major: dinpᵀ (C×M) ⟵ weightᵀ (C×OC) · doutᵀ (OC×M)
//                    dweight (OC×C) ⟵ doutᵀ (OC×M) · inp (M×C)
//                      column-major: dweightᵀ (C×OC) ⟵ inpᵀ (C×M) · dout (M×OC)
ColumnMajor column_major(const Gemm& g) {
  const auto trans = [](Op op) { return op == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; };
  ColumnMajor c;
  c.trans_a = trans(g.op_b), c.trans_b = trans(g.op_a);
  c.m = g.n, c.n = g.m, c.k = g.k;
  c.A = g.b.data, c.lda = g.b.ld, c.stride_a = g.b.stride;
  c.B = g.a.data, c.ldb = g.a.ld, c.stride_b = g.a.stride;
  c.D = g.d.data, c.ldd = g.d.ld, c.stride_d = g.d.stride;
  c.group_stride_a = g.b.group_stride, c.group_stride_b = g.a.group_stride;
  c.group_stride_d = g.d.group_stride;
  c.ab_type = g.a.type, c.d_type = g.d.type;
  return c;
}

cublasComputeType_t compute_type(Compute c) {
  return c == Compute::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

GemmEx::GemmEx(const Gemm& g)
    : what_(g.what),
      c_{},
      alpha_(g.alpha),
      beta_(g.beta),
      compute_(compute_type(g.compute)),
      batch_(g.batch),
      groups_(g.groups) {
  check(g);
  if (g.epilogues.count > 0) refuse(g, "cublasGemmEx runs no epilogue (LtMatmul runs cuBLASLt's)");
  c_ = column_major(g);
}

namespace {

const void* advance(const void* p, index_t elements, cudaDataType_t type) {
  return static_cast<const unsigned char*>(p) + elements * index_t(element_bytes(type));
}

}  // namespace

void GemmEx::launch(const CublasHandle& handle) const {
  if (batch_ == 1 && groups_ == 1) {
    check_launch(cublasGemmEx_64(handle.get(), c_.trans_a, c_.trans_b, c_.m, c_.n, c_.k, &alpha_,
                                 c_.A, c_.ab_type, c_.lda, c_.B, c_.ab_type, c_.ldb, &beta_, c_.D,
                                 c_.d_type, c_.ldd, compute_, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx", what_);
    return;
  }
  if (arrays_ != nullptr) {
    const index_t n = batch_ * groups_;
    check_launch(cublasGemmBatchedEx_64(handle.get(), c_.trans_a, c_.trans_b, c_.m, c_.n, c_.k,
                                        &alpha_, arrays_, c_.ab_type, c_.lda, arrays_ + n,
                                        c_.ab_type, c_.ldb, &beta_,
                                        const_cast<void* const*>(arrays_ + 2 * n), c_.d_type,
                                        c_.ldd, n, compute_, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmBatchedEx", what_);
    return;
  }
  for (index_t group = 0; group < groups_; ++group)
    check_launch(
        cublasGemmStridedBatchedEx_64(
            handle.get(), c_.trans_a, c_.trans_b, c_.m, c_.n, c_.k, &alpha_,
            advance(c_.A, group * c_.group_stride_a, c_.ab_type), c_.ab_type, c_.lda, c_.stride_a,
            advance(c_.B, group * c_.group_stride_b, c_.ab_type), c_.ab_type, c_.ldb, c_.stride_b,
            &beta_,
            const_cast<void*>(advance(c_.D, group * c_.group_stride_d, c_.d_type)), c_.d_type,
            c_.ldd, c_.stride_d, batch_, compute_, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx", what_);
}

std::size_t GemmPointerArrays::count(const Gemm& g) {
  return g.groups > 1 ? std::size_t(3 * g.batch * g.groups) : 0;
}

GemmPointerArrays::GemmPointerArrays(const void** device, std::size_t capacity)
    : device_(device), capacity_(capacity) {}

void GemmPointerArrays::add(GemmEx& gemm) {
  const ColumnMajor& c = gemm.c_;
  if (gemm.groups_ == 1) return;
  if (gemm.batch_ > INT32_MAX || gemm.groups_ > INT32_MAX) return;
  const std::int64_t n = gemm.batch_ * gemm.groups_;
  const auto array = [&](const void* data, index_t stride, index_t group_stride,
                         cudaDataType_t type, std::int64_t first) {
    const auto bytes = std::int64_t(element_bytes(type));
    return Array{data, stride * bytes, group_stride * bytes, first, std::int32_t(gemm.batch_),
                 std::int32_t(gemm.groups_)};
  };
  const std::int64_t first = std::int64_t(used_);
  const Array three[] = {array(c.A, c.stride_a, c.group_stride_a, c.ab_type, first),
                         array(c.B, c.stride_b, c.group_stride_b, c.ab_type, first + n),
                         array(c.D, c.stride_d, c.group_stride_d, c.d_type, first + 2 * n)};
  for (const Array& x : three)
    if (!aligned16(x.data) || x.stride % 16 != 0 || x.group_stride % 16 != 0) return;
  if (used_ + std::size_t(3 * n) > capacity_)
    throw std::logic_error(std::string("llmk: GEMM '") + gemm.what_ +
                           "': its pointer arrays do not fit in the space reserved for them");
  arrays_.insert(arrays_.end(), std::begin(three), std::end(three));
  gemm.arrays_ = device_ + used_;
  used_ += std::size_t(3 * n);
}

namespace {

// A kernel's parameters hold at most 4 KiB: up to 96 arrays a launch.
struct ArrayList {
  static constexpr int capacity = 96;
  GemmPointerArrays::Array arrays[capacity];
  int count;
};

// A thread per pointer: its array found by a walk over at most 96.
__global__ void write_pointer_arrays(const void** device, const ArrayList list,
                                     const std::int64_t first, const std::int64_t count) {
  const std::int64_t i = first + std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= first + count) return;
  int a = 0;
  while (a + 1 < list.count && list.arrays[a + 1].first <= i) ++a;
  const GemmPointerArrays::Array& x = list.arrays[a];
  const std::int64_t e = i - x.first, group = e / x.batch, j = e % x.batch;
  device[i] = static_cast<const unsigned char*>(x.data) + group * x.group_stride + j * x.stride;
}

}  // namespace

void GemmPointerArrays::write(const Kokkos::Cuda& exec) const {
  for (std::size_t begin = 0; begin < arrays_.size(); begin += ArrayList::capacity) {
    ArrayList list{};
    list.count = int(std::min<std::size_t>(ArrayList::capacity, arrays_.size() - begin));
    for (int a = 0; a < list.count; ++a) list.arrays[a] = arrays_[begin + std::size_t(a)];
    const Array& last = list.arrays[list.count - 1];
    const std::int64_t first = list.arrays[0].first;
    const std::int64_t count = last.first + std::int64_t(last.batch) * last.groups - first;
    const int threads = 256;
    const auto blocks = unsigned((count + threads - 1) / threads);
    write_pointer_arrays<<<blocks, threads, 0, exec.cuda_stream()>>>(device_, list, first, count);
    check_cuda(cudaGetLastError(), "the kernel writing GEMM pointer arrays");
  }
}

void check_launch(cublasStatus_t status, const char* call, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    check_cublas(status, (std::string(call) + " (" + what + ")").c_str());
}

}  // namespace llmk::backends::cublas
