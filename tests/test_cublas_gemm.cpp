// The GEMM wrapper of backends/cublas/ (gemm.hpp) on its own, both executors
// (GemmEx: cublasGemmEx / cublasGemmStridedBatchedEx; LtMatmul: cuBLASLt),
// against a float64 reference of its own loops: every op(A)·op(B) (NN, NT,
// TN, TT), one batch and strided batches (apart, or side by side within
// the rows as attention's heads), leading dimensions past the rows, α ≠ 1,
// β = 0 on a D of NaN and β = 1, float and bf16 inputs, bf16 and float
// outputs, TF32; cuBLASLt's epilogues and its algorithm cache; and
// descriptions the wrapper must refuse before it writes anything.
// Part of llmk_tests_cuda (CUDA builds with cuBLAS: tests/CMakeLists.txt).
//
// Every array lies in a larger buffer whose other elements (padding past a
// row's end, gaps between batches, a band on each side) are NaN: a GEMM that
// reads one reads NaN into its results, one that writes one changes its bits
// (both fail).
//
// Tolerances, per element of D, from the error model: with
//   scale = |α|·Σ_k |op(A)(i,k)·op(B)(k,j)| + |β·D₀(i,j)|,
// a sum of K = k products in float32 and the α and β steps are K + 2
// roundings: |D − ref| ≤ (K + 2)·u·scale, u = 2⁻²⁴ for float32 FMAs and 2⁻²³
// on the tensor cores (bf16 inputs, TF32), whose adds may truncate. bf16
// inputs are exact in the reference (the buffers hold bf16 values) and their
// products exact in float32: no more. TF32 rounds or truncates each input to
// 10 bits: + 2⁻⁹·scale (2⁻¹⁰ per factor). A bf16 D rounds to 8 significant
// bits, 2⁻⁸ relative, up to three times: the product, the sum with β·D₀
// (cuBLAS rounds the product first), and cublasGemmEx's split-K partial sums
// (it may add them in bf16): + 3·2⁻⁸·scale.
#include <backends/cublas/gemm.hpp>
#include <core/context_state.hpp>
#include <ops/matmul_backward/reference/reference.hpp>
#include <core/reference/compare.hpp>

#include <gtest/gtest.h>
#include <llmk/bf16.hpp>
#include <llmk/context.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace {

using llmk::index_t;
using llmk::backends::element_bytes;
namespace cu = llmk::backends::cublas;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kLtWorkspaceBytes = 32u << 20;  // as matmul_backward's cublaslt

// An array of float or bf16 elements in device memory, with its host copy.
class DeviceArray {
 public:
  DeviceArray(const std::vector<double>& values, cudaDataType_t type)
      : type_(type),
        uploaded_(values.size() * element_bytes(type)),
        device_("cublas_gemm_test", uploaded_.size()) {
    for (std::size_t i = 0; i < values.size(); ++i) encode(values[i], i);
    copy_to_device();
  }

  void* at(index_t element) const { return device_.data() + element * element_bytes(type_); }

  std::vector<unsigned char> bytes() const {
    std::vector<unsigned char> out(uploaded_.size());
    Kokkos::deep_copy(HostBytes(out.data(), out.size()), device_);
    return out;
  }
  double value(const std::vector<unsigned char>& bytes, index_t i) const {
    if (type_ == CUDA_R_32F) {
      float f;
      std::memcpy(&f, bytes.data() + i * 4, 4);
      return f;
    }
    llmk::bf16 h;
    std::memcpy(&h, bytes.data() + i * 2, 2);
    return float(h);
  }
  // The bytes it was made with.
  const std::vector<unsigned char>& uploaded() const { return uploaded_; }

 private:
  using HostBytes = Kokkos::View<unsigned char*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

  void encode(double v, std::size_t i) {
    if (type_ == CUDA_R_32F) {
      const float f = float(v);
      std::memcpy(uploaded_.data() + i * 4, &f, 4);
    } else {
      const llmk::bf16 h{float(v)};  // (braces: h(float(v)) would declare a function)
      std::memcpy(uploaded_.data() + i * 2, &h, 2);
    }
  }
  void copy_to_device() {
    Kokkos::deep_copy(device_, HostBytes(uploaded_.data(), uploaded_.size()));
  }

  cudaDataType_t type_;
  std::vector<unsigned char> uploaded_;
  Kokkos::View<unsigned char*, Kokkos::CudaSpace> device_;
};

// How a row-major matrix of each batch lies in its buffer.
// Batch j is batch j % per_group of group j / per_group.
struct Stored {
  index_t rows, cols, ld, stride, first;  // `first`: the first batch's first element
  index_t per_group = 1 << 30, group_stride = 0;
  index_t at(index_t batch, index_t r, index_t c) const {
    return first + batch / per_group * group_stride + batch % per_group * stride + r * ld + c;
  }
};

// grouped: 2 groups of 3 batches side by side, the groups one after the
// other, every address 16-byte aligned (one pointer-array launch);
// grouped_odd: the same with odd strides (a strided launch per group).
enum class Batches { one, apart, side_by_side, grouped, grouped_odd };
constexpr index_t kPerGroup = 3, kGroups = 2;

// Elements of NaN before and after every matrix: 32 bytes of float, 16 of
// bf16 (B is moved one element further: see MatchesFloat64Reference).
constexpr index_t kBand = 8;

// Padding past each row; batches apart (a gap after each) or side by side
// within the rows (a one-element gap), as attention's heads in (B, T, 3C).
Stored stored_layout(index_t rows, index_t cols, Batches batches, index_t batch) {
  switch (batches) {
    case Batches::one:
      return {rows, cols, cols + 3, 0, kBand};
    case Batches::apart:
      return {rows, cols, cols + 3, rows * (cols + 3) + 5, kBand};
    case Batches::side_by_side:
      break;
    case Batches::grouped:
    case Batches::grouped_odd: {
      const bool odd = batches == Batches::grouped_odd;
      const index_t stride = odd ? cols + 1 : (cols + 7) / 8 * 8;  // 8 elements: 16 bytes of bf16
      const index_t ld = kPerGroup * stride + (odd ? 2 : 8);
      const index_t group_stride = rows * ld + (odd ? 5 : 16);
      return {rows, cols, ld, stride, kBand, kPerGroup, group_stride};
    }
  }
  const index_t stride = cols + 1;
  return {rows, cols, batch * stride + 2, stride, kBand};
}

index_t buffer_size(const Stored& s, index_t batch, index_t band = kBand) {
  return s.at(batch - 1, s.rows - 1, s.cols - 1) + 1 + band;
}

bool is_grouped(Batches b) { return b == Batches::grouped || b == Batches::grouped_odd; }

// A buffer of NaN with random values of `type` at the matrix's elements:
// uniform in [-1, 1), exactly representable in `type`.
std::vector<double> random_buffer(const Stored& s, index_t batch, cudaDataType_t type,
                                  std::mt19937& rng, index_t band = kBand) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> values(std::size_t(buffer_size(s, batch, band)), kNaN);
  for (index_t j = 0; j < batch; ++j)
    for (index_t r = 0; r < s.rows; ++r)
      for (index_t c = 0; c < s.cols; ++c) {
        const float f = float(uniform(rng));
        values[std::size_t(s.at(j, r, c))] = type == CUDA_R_32F ? f : float(llmk::bf16(f));
      }
  return values;
}

// op(X)(i, k) of batch j, X stored as s.
double op_at(const std::vector<double>& x, const Stored& s, cu::Op op, index_t j, index_t i,
             index_t k) {
  return op == cu::Op::N ? x[std::size_t(s.at(j, i, k))] : x[std::size_t(s.at(j, k, i))];
}

enum class Executor { gemm_ex, lt };

// Prepares and launches g, then waits for it. A grouped GEMM gets pointer
// arrays; it must use them exactly where expected.
void run(Executor executor, llmk::Context<Kokkos::Cuda>& ctx, const cu::Gemm& g,
         bool expect_arrays = false) {
  auto& state = ctx.state();
  if (executor == Executor::gemm_ex) {
    cu::GemmEx gemm(g);
    const std::size_t count = cu::GemmPointerArrays::count(g);
    // (Kokkos has no View of void pointers: the same bytes as integers.)
    Kokkos::View<std::uintptr_t*, Kokkos::CudaSpace> device("cublas_gemm_test_pointers", count);
    cu::GemmPointerArrays arrays(reinterpret_cast<const void**>(device.data()), count);
    arrays.add(gemm);
    EXPECT_EQ(gemm.uses_pointer_arrays(), expect_arrays);
    arrays.write(state.exec());
    gemm.launch(state.resource<llmk::backends::CublasHandle>());
  } else {
    const cu::LtMatmul gemm(state.resource<llmk::backends::CublasLtHandle>(), g);
    gemm.launch(state.exec());
  }
  state.exec().fence();
}

// --- the product: every op, layout, type, α and β ------------------------

enum class Types { f32, tf32, bf16, bf16_to_f32 };  // inputs (and D) / compute

struct Case {
  Executor executor;
  cu::Op op_a, op_b;
  Types types;
  Batches batches;
  float beta;
};

cudaDataType_t input_type(Types t) {
  return t == Types::f32 || t == Types::tf32 ? CUDA_R_32F : CUDA_R_16BF;
}
cudaDataType_t output_type(Types t) { return t == Types::bf16 ? CUDA_R_16BF : CUDA_R_32F; }

// The relative tolerance of an element, over its scale (the file's comment).
double relative_tolerance(Types t, index_t k) {
  const double u = t == Types::f32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -23);
  double tol = double(k + 2) * u;
  if (t == Types::tf32) tol += std::ldexp(1.0, -9);
  if (t == Types::bf16) tol += 3 * std::ldexp(1.0, -8);
  return tol;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  const auto op = [](cu::Op o) { return o == cu::Op::N ? "N" : "T"; };
  const char* types[] = {"f32", "tf32", "bf16", "bf16_f32"};
  const char* batches[] = {"one", "apart", "side_by_side", "grouped", "grouped_odd"};
  return std::string(c.executor == Executor::gemm_ex ? "gemm_ex" : "lt") + "_" + op(c.op_a) +
         op(c.op_b) + "_" + types[int(c.types)] + "_" + batches[int(c.batches)] + "_beta" +
         (c.beta == 0.0f ? "0" : "1");
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (Executor e : {Executor::gemm_ex, Executor::lt})
    for (cu::Op a : {cu::Op::N, cu::Op::T})
      for (cu::Op b : {cu::Op::N, cu::Op::T})
        for (Types t : {Types::f32, Types::tf32, Types::bf16, Types::bf16_to_f32})
          for (Batches s : {Batches::one, Batches::apart, Batches::side_by_side, Batches::grouped,
                            Batches::grouped_odd})
            for (float beta : {0.0f, 1.0f})
              if (e == Executor::gemm_ex || !is_grouped(s))  // cuBLASLt: one group
                cases.push_back({e, a, b, t, s, beta});
  return cases;
}

class CublasGemm : public ::testing::TestWithParam<Case> {};

TEST_P(CublasGemm, MatchesFloat64Reference) {
  const Case c = GetParam();
  // Distinct m, n, k: a transposition mixed up reads the wrong elements.
  const index_t m = 37, n = 29, k = 45;
  const bool grouped = is_grouped(c.batches);
  const index_t batch = c.batches == Batches::one ? 1 : grouped ? kPerGroup * kGroups : 3;
  const float alpha = c.beta == 0.0f ? 0.75f : -1.5f;
  const cudaDataType_t in = input_type(c.types), out = output_type(c.types);
  std::mt19937 rng(20240611u);

  const Stored sa = c.op_a == cu::Op::N ? stored_layout(m, k, c.batches, batch)
                                        : stored_layout(k, m, c.batches, batch);
  const Stored sb = c.op_b == cu::Op::N ? stored_layout(k, n, c.batches, batch)
                                        : stored_layout(n, k, c.batches, batch);
  const Stored sd = stored_layout(m, n, c.batches, batch);
  const std::vector<double> a = random_buffer(sa, batch, in, rng);
  std::vector<double> b = random_buffer(sb, batch, in, rng);
  std::vector<double> d0 = random_buffer(sd, batch, out, rng);
  if (c.beta == 0.0f) d0.assign(d0.size(), kNaN);  // β = 0: D is not read
  // B one element further: 4 bytes aligned (float) or 2 (bf16), where A and
  // D are 32 or 16 (cuBLASLt's heuristic must be told). Side by side, the
  // odd batch strides misalign the later batches of every operand. Grouped
  // (aligned), B stays aligned: pointer arrays need every address aligned.
  const index_t shift = c.batches == Batches::grouped ? 0 : 1;
  b.insert(b.begin(), std::size_t(shift), kNaN);
  const DeviceArray da(a, in), db(b, in), dd(d0, out);

  cu::Gemm g;
  g.what = "test";
  g.m = m, g.n = n, g.k = k;
  g.op_a = c.op_a, g.op_b = c.op_b;
  g.a = {da.at(sa.first), sa.ld, in, sa.stride, sa.group_stride};
  g.b = {db.at(sb.first + shift), sb.ld, in, sb.stride, sb.group_stride};
  g.d = {dd.at(sd.first), sd.ld, out, sd.stride, sd.group_stride};
  g.alpha = alpha, g.beta = c.beta;
  g.compute = c.types == Types::tf32 ? cu::Compute::tf32 : cu::Compute::fp32;
  g.batch = grouped ? kPerGroup : batch;
  g.groups = grouped ? kGroups : 1;
  Kokkos::View<unsigned char*, Kokkos::CudaSpace> workspace;
  if (c.executor == Executor::lt) {
    workspace = decltype(workspace)("cublas_gemm_test_workspace", kLtWorkspaceBytes);
    g.workspace = workspace.data(), g.workspace_bytes = kLtWorkspaceBytes;
  }

  llmk::Context<Kokkos::Cuda> ctx;
  run(c.executor, ctx, g, c.batches == Batches::grouped);

  const std::vector<unsigned char> got = dd.bytes();
  std::vector<bool> in_d(d0.size(), false);
  const double rel = relative_tolerance(c.types, k);
  b.erase(b.begin(), b.begin() + shift);  // back to sb's indices
  int bad = 0;
  for (index_t j = 0; j < batch; ++j)
    for (index_t i = 0; i < m; ++i)
      for (index_t col = 0; col < n; ++col) {
        double sum = 0, scale = 0;
        for (index_t kk = 0; kk < k; ++kk) {
          const double p = op_at(a, sa, c.op_a, j, i, kk) * op_at(b, sb, c.op_b, j, kk, col);
          sum += p;
          scale += std::fabs(p);
        }
        const index_t e = sd.at(j, i, col);
        in_d[std::size_t(e)] = true;
        double ref = double(alpha) * sum;
        scale *= std::fabs(double(alpha));
        if (c.beta != 0.0f) {
          ref += double(c.beta) * d0[std::size_t(e)];
          scale += std::fabs(double(c.beta) * d0[std::size_t(e)]);
        }
        const double value = dd.value(got, e);
        const double tol = rel * scale;
        if (!(std::fabs(value - ref) <= tol) && ++bad <= 5)
          ADD_FAILURE() << "D(" << i << ", " << col << ") of batch " << j << " = " << value
                        << ", float64 reference " << ref << ", error " << std::fabs(value - ref)
                        << " > tolerance " << tol;
      }
  EXPECT_EQ(bad, 0) << "elements of D outside the tolerance";
  // Everything else in D's buffer keeps its bits.
  const std::size_t elem = element_bytes(out);
  int touched = 0;
  for (std::size_t e = 0; e < in_d.size(); ++e)
    if (!in_d[e] && std::memcmp(got.data() + e * elem, dd.uploaded().data() + e * elem, elem) != 0)
      ++touched;
  EXPECT_EQ(touched, 0) << "elements of D's buffer outside D written";
}

INSTANTIATE_TEST_SUITE_P(BothExecutors, CublasGemm, ::testing::ValuesIn(all_cases()), case_name);

// --- cuBLASLt's epilogues, its refusals, its cache ------------------------

// One batch of D = op(A)·op(B) (α = 1, β = 0) with an epilogue, in `type`
// (inputs and D; the bias vector too), laid out as matmul_backward's GEMMs
// are: contiguous rows of a multiple of 8 elements, each array 256 bytes
// into a Kokkos allocation (128-byte aligned, as one of the caller's).
struct EpilogueRun {
  static constexpr index_t m = 24, n = 40, k = 32;
  cudaDataType_t type;
  index_t band;  // elements of NaN before and after each array: 256 bytes
  cu::Op op_a;
  Stored sa, sb, sd, saux;
  std::vector<double> a, b, aux;
  DeviceArray da, db, dd, daux, dbias;
  Kokkos::View<unsigned char*, Kokkos::CudaSpace> workspace;

  EpilogueRun(cudaDataType_t t, cu::Op op, index_t aux_ld, std::mt19937& rng)
      : type(t),
        band(index_t(256 / element_bytes(t))),
        op_a(op),
        sa(op == cu::Op::N ? Stored{m, k, k, 0, band} : Stored{k, m, m, 0, band}),
        sb{k, n, n, 0, band},
        sd{m, n, n, 0, band},
        saux{m, n, aux_ld, 0, band},
        a(random_buffer(sa, 1, t, rng, band)),
        b(random_buffer(sb, 1, t, rng, band)),
        aux(random_buffer(saux, 1, t, rng, band)),
        da(a, t),
        db(b, t),
        dd(std::vector<double>(std::size_t(buffer_size(sd, 1, band)), kNaN), t),
        daux(aux, t),
        dbias(std::vector<double>(std::size_t(m + 2 * band), kNaN), t),
        workspace("cublas_gemm_test_workspace", kLtWorkspaceBytes) {}

  cu::Gemm gemm() const {
    cu::Gemm g;
    g.what = "epilogue test";
    g.m = m, g.n = n, g.k = k;
    g.op_a = op_a;
    g.a = {da.at(sa.first), sa.ld, type};
    g.b = {db.at(sb.first), sb.ld, type};
    g.d = {dd.at(sd.first), sd.ld, type};
    g.workspace = workspace.data(), g.workspace_bytes = kLtWorkspaceBytes;
    return g;
  }
  // Prepares and launches the GEMM with epilogue e, on a context of its own;
  // whether cuBLASLt ran e (else the plain product ran).
  bool run_with(const cu::Epilogue& e) const {
    cu::Gemm g = gemm();
    g.epilogues.add(e);
    llmk::Context<Kokkos::Cuda> ctx;
    const cu::LtMatmul lt(ctx.state().resource<llmk::backends::CublasLtHandle>(), g);
    lt.launch(ctx.exec());
    ctx.exec().fence();
    return lt.epilogue().kind == e.kind;
  }
  cu::Epilogue dgelu(index_t aux_ld) const {
    cu::Epilogue e;
    e.kind = cu::Epilogue::Kind::dgelu;
    e.aux = daux.at(band);
    e.aux_ld = aux_ld;
    return e;
  }
  cu::Epilogue bias_grad() const {
    cu::Epilogue e;
    e.kind = cu::Epilogue::Kind::bias_grad;
    e.bias = dbias.at(band);
    e.bias_type = type;
    return e;
  }

  double product(index_t i, index_t j, double* scale = nullptr) const {
    double sum = 0, s = 0;
    for (index_t kk = 0; kk < k; ++kk) {
      const double p = op_at(a, sa, op_a, 0, i, kk) * op_at(b, sb, cu::Op::N, 0, kk, j);
      sum += p;
      s += std::fabs(p);
    }
    if (scale) *scale = s;
    return sum;
  }

  // D against ref(i, j), by relative L2 (cuBLASLt's own gelu' is not ours):
  // the tolerances matmul_backward's cublaslt is held to.
  void expect_d(const std::function<double(index_t, index_t)>& ref) const {
    const std::vector<unsigned char> got = dd.bytes();
    double err2 = 0, ref2 = 0;
    for (index_t i = 0; i < m; ++i)
      for (index_t j = 0; j < n; ++j) {
        const double r = ref(i, j), v = dd.value(got, sd.at(0, i, j));
        err2 += (v - r) * (v - r);
        ref2 += r * r;
      }
    const double tol =
        type == CUDA_R_32F ? llmk::reference::kFloat32Tolerance : llmk::reference::kBf16Tolerance;
    EXPECT_LE(std::sqrt(err2 / ref2), tol) << "D's relative L2 error (NaN: an element not written)";
  }
};

struct EpilogueCase {
  cudaDataType_t type;
  cu::Op op_a;
};

std::string epilogue_case_name(const ::testing::TestParamInfo<EpilogueCase>& info) {
  return std::string(info.param.type == CUDA_R_32F ? "f32" : "bf16") + "_op_a_" +
         (info.param.op_a == cu::Op::N ? "N" : "T");
}

class CublasLtEpilogue : public ::testing::TestWithParam<EpilogueCase> {};

// D = gelu'(aux) ⊙ op(A)·op(B): matmul_backward's dinp GEMM is op(A) = A.
TEST_P(CublasLtEpilogue, Dgelu) {
  std::mt19937 rng(7);
  const index_t aux_ld = 48;  // past n = 40, a multiple of 8
  const EpilogueRun r(GetParam().type, GetParam().op_a, aux_ld, rng);
  const bool ran = r.run_with(r.dgelu(aux_ld));
  if (GetParam().op_a == cu::Op::N)
    ASSERT_TRUE(ran) << "cuBLASLt refused DGELU in matmul_backward's form";
  r.expect_d([&](index_t i, index_t j) {
    const double gelu =
        ran ? llmk::reference::gelu_grad(r.aux[std::size_t(r.saux.at(0, i, j))]) : 1;
    return gelu * r.product(i, j);
  });
  if (!ran) GTEST_SKIP() << "cuBLASLt refused DGELU here: the plain product checked instead";
}

// bias[i] = Σ_k op(A)(i, k): matmul_backward's dweight GEMM is op(A) = doutᵀ.
TEST_P(CublasLtEpilogue, BiasGrad) {
  std::mt19937 rng(11);
  const EpilogueRun r(GetParam().type, GetParam().op_a, EpilogueRun::n, rng);
  const bool ran = r.run_with(r.bias_grad());
  if (GetParam().op_a == cu::Op::T)
    ASSERT_TRUE(ran) << "cuBLASLt refused BGRADB in matmul_backward's form";
  r.expect_d([&](index_t i, index_t j) { return r.product(i, j); });
  if (!ran) GTEST_SKIP() << "cuBLASLt refused BGRADB here: the plain product checked instead";
  // A sum of k values of op(A), each exact: (k + 2)·2⁻²³ of Σ|op(A)|, and
  // a bf16 bias rounded up to twice (2⁻⁸ each).
  const std::vector<unsigned char> got = r.dbias.bytes();
  const double rel = double(EpilogueRun::k + 2) * std::ldexp(1.0, -23) +
                     (r.type == CUDA_R_32F ? 0.0 : 2 * std::ldexp(1.0, -8));
  for (index_t i = 0; i < EpilogueRun::m; ++i) {
    double sum = 0, scale = 0;
    for (index_t kk = 0; kk < EpilogueRun::k; ++kk) {
      const double x = op_at(r.a, r.sa, r.op_a, 0, i, kk);
      sum += x;
      scale += std::fabs(x);
    }
    EXPECT_NEAR(r.dbias.value(got, r.band + i), sum, rel * scale) << "bias[" << i << "]";
  }
  // Nothing written around it.
  for (index_t e :
       {index_t(0), r.band - 1, r.band + EpilogueRun::m, 2 * r.band + EpilogueRun::m - 1})
    EXPECT_TRUE(std::isnan(r.dbias.value(got, e))) << "bias buffer element " << e << " written";
}

INSTANTIATE_TEST_SUITE_P(MatmulForms, CublasLtEpilogue,
                         ::testing::Values(EpilogueCase{CUDA_R_32F, cu::Op::N},
                                           EpilogueCase{CUDA_R_32F, cu::Op::T},
                                           EpilogueCase{CUDA_R_16BF, cu::Op::N},
                                           EpilogueCase{CUDA_R_16BF, cu::Op::T}),
                         epilogue_case_name);

// An aux leading dimension cuBLASLt does not take (not a multiple of 8):
// refused without asking, reported, and the product runs without it.
TEST(CublasLtEpilogueRefusal, DgeluWithAuxLdNotAMultipleOf8RunsThePlainProduct) {
  std::mt19937 rng(13);
  const index_t aux_ld = 41;
  const EpilogueRun r(CUDA_R_32F, cu::Op::N, aux_ld, rng);
  EXPECT_FALSE(r.run_with(r.dgelu(aux_ld))) << "DGELU reported run with aux_ld 41";
  r.expect_d([&](index_t i, index_t j) { return r.product(i, j); });
}

// The heuristic is asked once per GEMM and alignment, per context.
TEST(CublasLtCache, OneEntryPerGemmAndAlignmentPerContext) {
  std::mt19937 rng(17);
  const EpilogueRun r(CUDA_R_32F, cu::Op::N, EpilogueRun::n, rng);
  llmk::Context<Kokkos::Cuda> ctx, other;
  auto& lt = ctx.state().resource<llmk::backends::CublasLtHandle>();
  const cu::Gemm g = r.gemm();
  { const cu::LtMatmul first(lt, g); }
  EXPECT_EQ(lt.algos.size(), 1u);
  { const cu::LtMatmul again(lt, g); }
  EXPECT_EQ(lt.algos.size(), 1u) << "the same GEMM asked the heuristic again";
  cu::Gemm shifted = g;  // D one element on: 4-byte aligned instead of 128
  shifted.d.data = r.dd.at(r.sd.first + 1);
  { const cu::LtMatmul moved(lt, shifted); }
  EXPECT_EQ(lt.algos.size(), 2u) << "another alignment reused an algorithm chosen for 128 bytes";
  EXPECT_TRUE(other.state().resource<llmk::backends::CublasLtHandle>().algos.empty());
}

// --- refusals before any write --------------------------------------------

struct BadCase {
  const char* name;
  const char* message;  // a part of what the error must say
  std::function<void(cu::Gemm&)> spoil;
};

// A valid 8×6·6×5 GEMM on float arrays (D: NaN, untouched by a refusal).
struct BadInputs {
  static constexpr index_t m = 8, n = 5, k = 6;
  DeviceArray a{std::vector<double>(std::size_t(m * k), 0.5), CUDA_R_32F};
  DeviceArray b{std::vector<double>(std::size_t(k * n), 0.25), CUDA_R_32F};
  DeviceArray d{std::vector<double>(std::size_t(4 * m * n), kNaN), CUDA_R_32F};

  cu::Gemm gemm() const {
    cu::Gemm g;
    g.what = "bad";
    g.m = m, g.n = n, g.k = k;
    g.a = {a.at(0), k, CUDA_R_32F};
    g.b = {b.at(0), n, CUDA_R_32F};
    g.d = {d.at(0), n, CUDA_R_32F};
    return g;
  }
};

std::vector<BadCase> bad_cases() {
  using K = cu::Epilogue::Kind;
  return {
      {"lda_shorter_than_row", "leading dimension of A is 5", [](cu::Gemm& g) { g.a.ld = 5; }},
      {"lda_shorter_than_transposed_row", "leading dimension of A is 6",
       [](cu::Gemm& g) { g.op_a = cu::Op::T; }},  // A stored k×m: ld ≥ m = 8
      {"ldd_shorter_than_row", "leading dimension of D", [](cu::Gemm& g) { g.d.ld = 4; }},
      {"null_a", "A is null", [](cu::Gemm& g) { g.a.data = nullptr; }},
      {"null_d", "D is null", [](cu::Gemm& g) { g.d.data = nullptr; }},
      {"zero_k", "expected ≥ 1", [](cu::Gemm& g) { g.k = 0; }},
      {"zero_batch", "batch = 0", [](cu::Gemm& g) { g.batch = 0; }},
      {"negative_stride", "batch stride of B",
       [](cu::Gemm& g) {
         g.batch = 2;
         g.b.stride = -1;
       }},
      // 2 batches of D 8×5 at a stride of 20 elements: batch 1 starts in
      // batch 0's row 4 (neither after it nor side by side).
      {"batches_of_d_overlap", "batches of D overlap",
       [](cu::Gemm& g) {
         g.batch = 2;
         g.d.stride = 20;
       }},
      {"d_stride_zero", "batches of D overlap", [](cu::Gemm& g) { g.batch = 2; }},
      // Side by side, 5 columns each at a stride of 5 in rows of 9: batch
      // 1's last column is batch 0's next row's first.
      {"d_side_by_side_past_row", "batches of D overlap",
       [](cu::Gemm& g) {
         g.batch = 2;
         g.d.ld = 9;
         g.d.stride = 5;
       }},
      {"zero_groups", "groups = 0", [](cu::Gemm& g) { g.groups = 0; }},
      {"negative_group_stride", "group stride of A",
       [](cu::Gemm& g) {
         g.groups = 2;
         g.a.group_stride = -1;
       }},
      // 2 groups of one 8×5 batch of D at a group stride of 39 elements: the
      // second group's first element is the first group's last.
      {"groups_of_d_overlap", "groups of D overlap",
       [](cu::Gemm& g) {
         g.groups = 2;
         g.d.group_stride = 39;
       }},
      {"d_meets_a", "overlaps A", [](cu::Gemm& g) { g.d.data = const_cast<void*>(g.a.data); }},
      {"float_into_bf16", "need a float32 D", [](cu::Gemm& g) { g.d.type = CUDA_R_16BF; }},
      {"mixed_inputs", "one type", [](cu::Gemm& g) { g.b.type = CUDA_R_16BF; }},
      {"half_type", "A's type", [](cu::Gemm& g) { g.a.type = CUDA_R_16F; }},
      {"tf32_with_bf16", "TF32",
       [](cu::Gemm& g) {
         g.a.type = g.b.type = CUDA_R_16BF;
         g.compute = cu::Compute::tf32;
       }},
      {"workspace_null", "workspace is null", [](cu::Gemm& g) { g.workspace_bytes = 1024; }},
      {"dgelu_without_aux", "aux (pre-activation) is null",
       [](cu::Gemm& g) {
         cu::Epilogue e;
         e.kind = K::dgelu;
         e.aux_ld = 8;
         g.epilogues.add(e);
       }},
      {"epilogue_alpha", "alpha = 1",
       [](cu::Gemm& g) {
         cu::Epilogue e;
         e.kind = K::bias_grad;
         e.bias = g.d.data;
         g.epilogues.add(e);
         g.d.data =
             static_cast<float*>(g.d.data) + 2 * BadInputs::m * BadInputs::n;  // apart from bias
         g.alpha = 2;
       }},
  };
}

class CublasGemmBadInput : public ::testing::TestWithParam<std::tuple<Executor, int>> {};

TEST_P(CublasGemmBadInput, ThrowsBeforeWriting) {
  const auto [executor, index] = GetParam();
  const BadCase bad = bad_cases()[std::size_t(index)];
  const BadInputs arrays;
  cu::Gemm g = arrays.gemm();
  bad.spoil(g);
  llmk::Context<Kokkos::Cuda> ctx;
  try {
    run(executor, ctx, g);
    ADD_FAILURE() << bad.name << ": no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("GEMM 'bad'"), std::string::npos) << what;
    EXPECT_NE(what.find(bad.message), std::string::npos)
        << "expected '" << bad.message << "' in: " << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << bad.name << ": " << e.what() << " (expected std::invalid_argument)";
  }
  EXPECT_EQ(arrays.d.bytes(), arrays.d.uploaded()) << bad.name << ": D's buffer was written";
}

// The GEMM the bad cases spoil is one both executors run.
TEST(CublasGemmBadInputBase, TheUnspoiledGemmRuns) {
  for (Executor executor : {Executor::gemm_ex, Executor::lt}) {
    const BadInputs arrays;
    llmk::Context<Kokkos::Cuda> ctx;
    run(executor, ctx, arrays.gemm());
    const std::vector<unsigned char> got = arrays.d.bytes();
    for (index_t e = 0; e < 4 * BadInputs::m * BadInputs::n; ++e) {
      const double v = arrays.d.value(got, e);
      if (e < BadInputs::m * BadInputs::n)
        EXPECT_EQ(v, 0.75) << "D element " << e;  // Σ of 6 products 0.5 · 0.25
      else
        EXPECT_TRUE(std::isnan(v)) << "element " << e << " past D written";
    }
  }
}

// An epilogue through cublasGemmEx, which runs none.
TEST(CublasGemmBadInputBase, GemmExRefusesEpilogues) {
  const BadInputs arrays;
  cu::Gemm g = arrays.gemm();
  cu::Epilogue e;
  e.kind = cu::Epilogue::Kind::dgelu;
  e.aux = arrays.a.at(0);  // m×n with aux_ld = n fits in A's m×k buffer
  e.aux_ld = BadInputs::n;
  g.epilogues.add(e);
  try {
    const cu::GemmEx gemm(g);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("runs no epilogue"), std::string::npos)
        << error.what();
  }
}

std::string bad_case_name(const ::testing::TestParamInfo<std::tuple<Executor, int>>& info) {
  const auto [executor, index] = info.param;
  return std::string(executor == Executor::gemm_ex ? "gemm_ex_" : "lt_") +
         bad_cases()[std::size_t(index)].name;
}

INSTANTIATE_TEST_SUITE_P(BothExecutors, CublasGemmBadInput,
                         ::testing::Combine(::testing::Values(Executor::gemm_ex, Executor::lt),
                                            ::testing::Range(0, int(bad_cases().size()))),
                         bad_case_name);

}  // namespace
