//===- Gemm.cpp - GEMMs through cuBLAS --------------------------*- C++ -*-===//
//
// The operands come as the CPU runtime's row-major strided description.
// cuBLAS is column-major: a row-major matrix with row stride ld is the
// column-major storage of its transpose with leading dimension ld. A
// row-major C is therefore computed as C^T = B^T A^T, a column-major C as
// A B, each operand transposed or not by how it is stored.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include "zero-rt/Runtime.h"
#include "zero-rt/RuntimeCUDA.h"

#include <algorithm>
#include <vector>

using namespace zero::rt;
using namespace zero::rt::cuda;

namespace {
thread_local std::string lastError;

/// How a rows x cols matrix lies in memory for cuBLAS: column-major
/// storage of the matrix itself (`colMajor`) or of its transpose, with
/// leading dimension `ld`.
struct View {
  bool ok, colMajor;
  int64_t ld;
};

View viewOf(int64_t rows, int64_t cols, int64_t sRow, int64_t sCol) {
  if ((sCol == 1 || cols <= 1) && (rows <= 1 || sRow >= cols))
    return {true, false, std::max<int64_t>(rows <= 1 ? cols : sRow, 1)};
  if ((sRow == 1 || rows <= 1) && (cols <= 1 || sCol >= rows))
    return {true, true, std::max<int64_t>(cols <= 1 ? rows : sCol, 1)};
  return {false, false, 0};
}

struct Operand {
  char *base; ///< already offset, in bytes
  int64_t elemBytes, sb0, sb1;
  View view;
};

std::string describe(const char *name, int64_t rows, int64_t cols, int64_t sRow,
                     int64_t sCol) {
  return std::string(name) + " (" + std::to_string(rows) + " x " +
         std::to_string(cols) + ", strides " + std::to_string(sRow) + ", " +
         std::to_string(sCol) + ")";
}

struct Gemm {
  cudaDataType_t abType, cType;
  cublasComputeType_t compute;
  int64_t m, n, k;
  Operand a, b, c;
  bool accumulate;

  bool f64() const { return compute == CUBLAS_COMPUTE_64F; }

  /// alpha (1) and beta (0, or 1 to accumulate) as cuBLAS reads them: in
  /// the compute type's precision, double for CUBLAS_COMPUTE_64F.
  const void *scalar(bool one) const {
    static const float f[2] = {0.0f, 1.0f};
    static const double d[2] = {0.0, 1.0};
    if (f64())
      return &d[one];
    return &f[one];
  }

  /// cuBLAS's view of the product: a row-major C is C^T (n x m) = B^T A^T,
  /// so B comes first; a stored transpose needs no op.
  struct Order {
    bool swap;
    cublasOperation_t op1, op2;
    int64_t rows, cols, ld1, ld2;
  };
  Order order() const {
    bool cRowMajor = !c.view.colMajor;
    cublasOperation_t opA =
        (a.view.colMajor == cRowMajor) ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opB =
        (b.view.colMajor == cRowMajor) ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (cRowMajor)
      return {true, opB, opA, n, m, b.view.ld, a.view.ld};
    return {false, opA, opB, m, n, a.view.ld, b.view.ld};
  }

  /// `count` products at a, b, c advanced by the strides (in elements).
  void run(char *pa, char *pb, char *pc, int64_t count, const int64_t *stride) {
    State &s = state();
    Order o = order();
    check(cublasGemmStridedBatchedEx_64(
              s.blas, o.op1, o.op2, o.rows, o.cols, k, scalar(true),
              o.swap ? pb : pa, abType, o.ld1, o.swap ? stride[1] : stride[0],
              o.swap ? pa : pb, abType, o.ld2, o.swap ? stride[0] : stride[1],
              scalar(accumulate), pc, cType, c.view.ld, stride[2], count,
              compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx");
  }

  /// `count` products whose operands are listed in device memory: A's
  /// pointers, then B's, then C's.
  void runArrays(const void *const *arrays, int64_t count) {
    State &s = state();
    Order o = order();
    const void *const *pa = arrays, *const *pb = arrays + count;
    check(cublasGemmBatchedEx_64(
              s.blas, o.op1, o.op2, o.rows, o.cols, k, scalar(true),
              o.swap ? pb : pa, abType, o.ld1, o.swap ? pa : pb, abType, o.ld2,
              scalar(accumulate), const_cast<void *const *>(arrays + 2 * count),
              cType, c.view.ld, count, compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmBatchedEx");
  }
};

/// The device array of the batch0 x batch1 operand pointers of `ops`
/// (A's, B's, C's), copied on first use: a step's buffers sit at fixed
/// arena offsets, so every step passes the same pointers.
const void *const *operandArrays(Operand *const *ops, int64_t batch0,
                                 int64_t batch1) {
  std::vector<int64_t> key = {batch0, batch1};
  for (int t = 0; t < 3; ++t)
    key.insert(key.end(), {reinterpret_cast<int64_t>(ops[t]->base),
                           ops[t]->elemBytes, ops[t]->sb0, ops[t]->sb1});
  void *&dev = state().gemmPointers[key];
  if (!dev) {
    std::vector<const void *> host;
    for (int t = 0; t < 3; ++t)
      for (int64_t i = 0; i < batch0; ++i)
        for (int64_t j = 0; j < batch1; ++j)
          host.push_back(ops[t]->base + (i * ops[t]->sb0 + j * ops[t]->sb1) *
                                            ops[t]->elemBytes);
    size_t bytes = host.size() * sizeof(void *);
    check(cudaMalloc(&dev, bytes), "cudaMalloc");
    check(cudaMemcpy(dev, host.data(), bytes, cudaMemcpyHostToDevice),
          "cudaMemcpy");
  }
  return static_cast<const void *const *>(dev);
}

/// Whether every product's operands start on 16 bytes: cuBLAS cannot see
/// the pointers of an array call, and on an H100 it ran kernels that
/// assume such alignment (a misaligned-address fault) for bf16 operands
/// an odd number of elements apart.
bool arraysAligned(Operand *const *ops, int64_t batch0, int64_t batch1) {
  for (int t = 0; t < 3; ++t) {
    const Operand &o = *ops[t];
    if (reinterpret_cast<uintptr_t>(o.base) % 16 ||
        (batch0 > 1 && o.sb0 * o.elemBytes % 16) ||
        (batch1 > 1 && o.sb1 * o.elemBytes % 16))
      return false;
  }
  return true;
}

/// Whether the batch0 x batch1 products write disjoint Cs: one batch
/// stride spans the other's whole extent (a batched call may not write
/// one C twice; a shared C accumulates product by product).
bool distinctProducts(const Operand &c, int64_t batch0, int64_t batch1) {
  return c.sb0 > 0 && c.sb1 > 0 &&
         (c.sb0 >= c.sb1 * batch1 || c.sb1 >= c.sb0 * batch0);
}

/// A GEMM of `abType` A and B (`elemBytes` each) into C of `cType` (f64
/// for f64 operands; else f32, or A's 16-bit type).
int32_t gemm(cudaDataType_t abType, cudaDataType_t cType, int64_t elemBytes,
             int64_t batch0, int64_t batch1, int64_t m, int64_t n, int64_t k,
             int64_t a, int64_t aOff, int64_t aSB0, int64_t aSB1, int64_t aSM,
             int64_t aSK, int64_t b, int64_t bOff, int64_t bSB0, int64_t bSB1,
             int64_t bSK, int64_t bSN, int64_t c, int64_t cOff, int64_t cSB0,
             int64_t cSB1, int64_t cSM, int64_t cSN, int64_t accumulate) {
  lastError.clear();
  if (m <= 0 || n <= 0 || batch0 <= 0 || batch1 <= 0)
    return 0;
  State &s = state();
  if (!s.initialized)
    fail("zero_rt_cuda_gemm", "the CUDA runtime is not initialized");
  ensureContext();
  // With k == 0 nothing of A or B is read (C = 0, or C unchanged when
  // accumulating); the layouts only need leading dimensions cuBLAS accepts.
  View va = k > 0 ? viewOf(m, k, aSM, aSK) : View{true, false, 1};
  View vb = k > 0 ? viewOf(k, n, bSK, bSN)
                  : View{true, false, std::max<int64_t>(n, 1)};
  View vc = viewOf(m, n, cSM, cSN);
  std::string bad;
  if (!va.ok)
    bad = describe("A", m, k, aSM, aSK);
  else if (!vb.ok)
    bad = describe("B", k, n, bSK, bSN);
  else if (!vc.ok)
    bad = describe("C", m, n, cSM, cSN);
  else if (std::min({aSB0, aSB1, bSB0, bSB1, cSB0, cSB1}) < 0)
    bad = "a negative batch stride";
  if (!bad.empty()) {
    lastError = "GEMM layout not supported on CUDA: " + bad +
                "; each matrix needs a unit stride along one dimension and "
                "a stride along the other of at least that dimension's "
                "extent";
    return 1;
  }
  bool f64 = abType == CUDA_R_64F;
  int64_t cBytes = cType == CUDA_R_64F ? 8 : cType == CUDA_R_32F ? 4 : 2;
  Gemm g{abType,
         cType,
         f64                              ? CUBLAS_COMPUTE_64F
         : abType == CUDA_R_32F && s.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                          : CUBLAS_COMPUTE_32F,
         m,
         n,
         k,
         {reinterpret_cast<char *>(a) + aOff * elemBytes, elemBytes, aSB0, aSB1,
          va},
         {reinterpret_cast<char *>(b) + bOff * elemBytes, elemBytes, bSB0, bSB1,
          vb},
         {reinterpret_cast<char *>(c) + cOff * cBytes, cBytes, cSB0, cSB1, vc},
         accumulate != 0};
  Operand *ops[3] = {&g.a, &g.b, &g.c};
  cudaEvent_t begin = traceBegin(s.compute);

  // Both batch loops as one stride where every operand allows it.
  bool flat = batch0 == 1 || batch1 == 1;
  if (!flat) {
    flat = true;
    for (Operand *o : ops)
      flat = flat && o->sb0 == o->sb1 * batch1;
  }
  auto at = [](Operand *o, int64_t i, int64_t j) {
    return o->base + (i * o->sb0 + j * o->sb1) * o->elemBytes;
  };
  // Runs `count` products from (i, j) with the strides; a C that every
  // product writes in place (stride 0) goes one product at a time, in the
  // CPU runtime's order, so that accumulation adds them all.
  auto runBatch = [&](int64_t i, int64_t count, const int64_t *stride) {
    if (stride[2] == 0 && count > 1) {
      for (int64_t t = 0; t < count; ++t) {
        int64_t zero[3] = {0, 0, 0};
        g.run(at(&g.a, i, 0) + t * stride[0] * g.a.elemBytes,
              at(&g.b, i, 0) + t * stride[1] * g.b.elemBytes, at(&g.c, i, 0), 1,
              zero);
      }
      return;
    }
    g.run(at(&g.a, i, 0), at(&g.b, i, 0), at(&g.c, i, 0), count, stride);
  };
  if (flat) {
    int64_t stride[3];
    for (int t = 0; t < 3; ++t)
      stride[t] = batch1 == 1 ? ops[t]->sb0 : ops[t]->sb1;
    runBatch(0, batch0 * batch1, stride);
  } else if (distinctProducts(g.c, batch0, batch1) &&
             arraysAligned(ops, batch0, batch1)) {
    // One call for both batch loops (attention's [B, T, H, d] operands: a
    // stride per batch and head that no single stride describes).
    g.runArrays(operandArrays(ops, batch0, batch1), batch0 * batch1);
  } else {
    int64_t stride[3] = {g.a.sb1, g.b.sb1, g.c.sb1};
    for (int64_t i = 0; i < batch0; ++i)
      runBatch(i, batch1, stride);
  }
  // Untraced GEMMs build no event (names and node copied per call).
  if (begin)
    traceEnd(begin, s.compute,
             {"gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                  std::to_string(k),
              "compute", 1, 0, 0, 0, -1, traceNode(), "gemm"});
  return 0;
}
} // namespace

extern "C" int32_t
zero_rt_cuda_sgemm(int64_t batch0, int64_t batch1, int64_t m, int64_t n,
                   int64_t k, int64_t a, int64_t aOff, int64_t aSB0,
                   int64_t aSB1, int64_t aSM, int64_t aSK, int64_t b,
                   int64_t bOff, int64_t bSB0, int64_t bSB1, int64_t bSK,
                   int64_t bSN, int64_t c, int64_t cOff, int64_t cSB0,
                   int64_t cSB1, int64_t cSM, int64_t cSN, int64_t accumulate) {
  return gemm(CUDA_R_32F, CUDA_R_32F, 4, batch0, batch1, m, n, k, a, aOff, aSB0,
              aSB1, aSM, aSK, b, bOff, bSB0, bSB1, bSK, bSN, c, cOff, cSB0,
              cSB1, cSM, cSN, accumulate);
}

extern "C" int32_t
zero_rt_cuda_dgemm(int64_t batch0, int64_t batch1, int64_t m, int64_t n,
                   int64_t k, int64_t a, int64_t aOff, int64_t aSB0,
                   int64_t aSB1, int64_t aSM, int64_t aSK, int64_t b,
                   int64_t bOff, int64_t bSB0, int64_t bSB1, int64_t bSK,
                   int64_t bSN, int64_t c, int64_t cOff, int64_t cSB0,
                   int64_t cSB1, int64_t cSM, int64_t cSN, int64_t accumulate) {
  return gemm(CUDA_R_64F, CUDA_R_64F, 8, batch0, batch1, m, n, k, a, aOff, aSB0,
              aSB1, aSM, aSK, b, bOff, bSB0, bSB1, bSK, bSN, c, cOff, cSB0,
              cSB1, cSM, cSN, accumulate);
}

extern "C" int32_t zero_rt_cuda_gemm16(
    int32_t abType, int32_t cType, int64_t batch0, int64_t batch1, int64_t m,
    int64_t n, int64_t k, int64_t a, int64_t aOff, int64_t aSB0, int64_t aSB1,
    int64_t aSM, int64_t aSK, int64_t b, int64_t bOff, int64_t bSB0,
    int64_t bSB1, int64_t bSK, int64_t bSN, int64_t c, int64_t cOff,
    int64_t cSB0, int64_t cSB1, int64_t cSM, int64_t cSN, int64_t accumulate) {
  if (abType != ZERO_RT_BF16 && abType != ZERO_RT_F16) {
    lastError = "zero_rt_cuda_gemm16: element type " + std::to_string(abType) +
                " is neither bf16 nor f16";
    return 1;
  }
  if (cType != ZERO_RT_F32 && cType != abType) {
    lastError = "zero_rt_cuda_gemm16: C type " + std::to_string(cType) +
                " is neither f32 nor A's type " + std::to_string(abType);
    return 1;
  }
  cudaDataType_t ab = abType == ZERO_RT_BF16 ? CUDA_R_16BF : CUDA_R_16F;
  return gemm(ab, cType == ZERO_RT_F32 ? CUDA_R_32F : ab, 2, batch0, batch1, m,
              n, k, a, aOff, aSB0, aSB1, aSM, aSK, b, bOff, bSB0, bSB1, bSK,
              bSN, c, cOff, cSB0, cSB1, cSM, cSN, accumulate);
}

extern "C" void zero_rt_cuda_gemm_allow_tf32(int32_t allow) {
  state().tf32 = allow != 0;
}

extern "C" void zero_rt_cuda_check_gemm(int32_t status) {
  if (status != 0)
    fail("zero_rt_cuda_gemm", lastError);
}

extern "C" const char *zero_rt_cuda_last_error(void) {
  return lastError.c_str();
}
