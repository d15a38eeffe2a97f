//===- CudaRuntimeTest.cpp - the CUDA runtime on a GPU -------------------===//
//
// On a machine with a GPU (mpirun -np N with N GPUs, or alone): cuBLAS
// GEMMs against a reference loop over the same strides (f32, bf16, f16;
// transposed, padded, batched, broadcast, accumulating, unsupported
// layouts), every collective in every element type with its byte counters,
// ordering against the compute stream, kernels loaded from cubins, PTX and
// MLIR-generated host code through the mgpu* functions, the arena and the
// peak device memory, and the trace. Without a GPU it prints SKIP and
// exits 0. Exits non-zero when any rank saw a failure.
//
//===----------------------------------------------------------------------===//
#include "zero-rt/Comm.h"
#include "zero-rt/Float16.h"
#include "zero-rt/Runtime.h"
#include "zero-rt/RuntimeCUDA.h"

#include "cuda/GemmLayouts.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace zero::rt;
using namespace zero::rt::test;

namespace {
int failures = 0, checks = 0;
int64_t rank = 0, world = 1;

void expect(bool ok, const std::string &what) {
  ++checks;
  if (ok)
    return;
  ++failures;
  std::fprintf(stderr, "FAIL rank %lld: %s\n", (long long)rank, what.c_str());
}

/// Whether `nvidia-smi -L` lists a GPU; the reason when not.
bool gpuListed(std::string &why) {
  FILE *p = popen("nvidia-smi -L 2>/dev/null", "r");
  if (!p) {
    why = "nvidia-smi could not be run";
    return false;
  }
  char line[512];
  bool any = false;
  while (std::fgets(line, sizeof(line), p))
    any = any || std::strncmp(line, "GPU ", 4) == 0;
  pclose(p);
  if (!any)
    why = "nvidia-smi -L lists none";
  return any;
}

std::vector<char> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  return std::vector<char>(text.begin(), text.end());
}

/// A bump allocator over the arena, as the compiler's memory plan would
/// place buffers at fixed offsets.
struct Arena {
  int64_t base = 0, size = 0, used = 0;
  int64_t take(int64_t bytes) {
    int64_t at = (used + 255) / 256 * 256;
    if (at + bytes > size) {
      std::fprintf(stderr, "test arena too small\n");
      std::exit(2);
    }
    used = at + bytes;
    return base + at;
  }
} arena;

void toDevice(int64_t dst, const void *src, size_t bytes) {
  zero_rt_cuda_memcpy(dst, reinterpret_cast<int64_t>(src), (int64_t)bytes);
}
void toHost(void *dst, int64_t src, size_t bytes) {
  zero_rt_cuda_memcpy(reinterpret_cast<int64_t>(dst), src, (int64_t)bytes);
}

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

/// Runs one case in `type` (ZERO_RT_F32, _BF16, _F16, _F64) with C of
/// `cType` (f64 for f64, else f32 or `type`) on the device and compares
/// with a double reference over the same strides, batch by batch in order
/// (a C batch stride of 0 accumulates every batch).
void runGemm(const GemmCase &g, int32_t type, int32_t cType, std::mt19937 &rng,
             const std::string &name) {
  std::uniform_real_distribution<float> val(-1.0f, 1.0f);
  std::vector<float> A(g.sa), B(g.sb), C(g.sc);
  for (float &x : A)
    x = roundTo(val(rng), type);
  for (float &x : B)
    x = roundTo(val(rng), type);
  for (float &x : C)
    x = roundTo(val(rng), cType);
  bool f64 = type == ZERO_RT_F64;
  std::vector<char> a = encode(A, type), b = encode(B, type),
                    c = encode(C, cType);
  int64_t dA = arena.take(a.size()), dB = arena.take(b.size()),
          dC = arena.take(c.size());
  toDevice(dA, a.data(), a.size());
  toDevice(dB, b.data(), b.size());
  toDevice(dC, c.data(), c.size());
  std::vector<double> ref, bound;
  g.reference(A, B, C, ref, bound, cType);
  char shape[160];
  std::snprintf(shape, sizeof(shape),
                " (batch %lld x %lld, m %lld n %lld k %lld, acc %d)",
                (long long)g.b0, (long long)g.b1, (long long)g.m,
                (long long)g.n, (long long)g.k, int(g.accumulate));
  // A device fault ends the process at the next call: name the case first.
  if (std::getenv("ZERO_CUDA_TEST_VERBOSE"))
    std::fprintf(stderr, "running %s%s\n", name.c_str(), shape);
  int32_t rc = runCudaGemm(g, type, dA, dB, dC, cType);
  bool ok = g.isSupported();
  if (!ok) {
    expect(rc == 1 && *zero_rt_cuda_last_error(),
           name + ": an unsupported layout returns 1 with a reason" + shape);
    arena.used = 0;
    return;
  }
  expect(rc == 0, name + ": GEMM returned " + std::to_string(rc) + ": " +
                      zero_rt_cuda_last_error() + shape);
  std::vector<double> got(C.size());
  if (f64) {
    toHost(got.data(), dC, got.size() * 8);
  } else if (cType == ZERO_RT_F32) {
    std::vector<float> got32(C.size());
    toHost(got32.data(), dC, got32.size() * 4);
    got.assign(got32.begin(), got32.end());
  } else {
    std::vector<uint16_t> got16(C.size());
    toHost(got16.data(), dC, got16.size() * 2);
    for (size_t e = 0; e < got.size(); ++e)
      got[e] =
          cType == ZERO_RT_BF16 ? bf16ToFloat(got16[e]) : f16ToFloat(got16[e]);
  }
  // Accumulation of products exact in the compute type: the error is
  // bounded by a few ulps of the sum of magnitudes, whatever cuBLAS's
  // order (f32: 2^-24, f64: 2^-53).
  double tol = (f64 ? 8e-15 : 4e-6) * std::max<int64_t>(g.k, 8);
  for (size_t e = 0; e < got.size(); ++e)
    if (std::fabs(got[e] - ref[e]) > tol * (bound[e] + 1e-30) +
                                         (f64 ? 1e-15 : 1e-6) +
                                         roundingSlack(cType, ref[e])) {
      expect(false, name + ": element " + std::to_string(e) + " is " +
                        std::to_string(got[e]) + ", expected " +
                        std::to_string(ref[e]) + shape);
      arena.used = 0;
      return;
    }
  expect(true, name);
  arena.used = 0;
}

void testGemms() {
  std::mt19937 rng(11);
  // (A and B, C): f64 throughout, else f32 C, or 16 bits throughout.
  const int32_t types[][2] = {
      {ZERO_RT_F32, ZERO_RT_F32},   {ZERO_RT_BF16, ZERO_RT_F32},
      {ZERO_RT_F16, ZERO_RT_F32},   {ZERO_RT_F64, ZERO_RT_F64},
      {ZERO_RT_BF16, ZERO_RT_BF16}, {ZERO_RT_F16, ZERO_RT_F16}};
  const char *typeNames[] = {"f32", "bf16",           "f16",
                             "f64", "bf16 into bf16", "f16 into f16"};
  std::vector<GemmCase> fixed = fixedCases();
  for (int t = 0; t < 6; ++t) {
    // Random small layouts: every order, padding, broadcast batches.
    for (int trial = 0; trial < 150; ++trial)
      runGemm(randomCase(rng, 9), types[t][0], types[t][1], rng,
              std::string(typeNames[t]) + " random layout " +
                  std::to_string(trial));
    // Sizes that reach tensor-core kernels, transposes, broadcasts, every
    // batch into one C, k = 0.
    for (size_t c = 0; c < fixed.size(); ++c)
      runGemm(fixed[c], types[t][0], types[t][1], rng,
              std::string(typeNames[t]) + " fixed case " + std::to_string(c));
  }
  int64_t dummy = arena.base;
  expect(zero_rt_cuda_gemm16(ZERO_RT_F32, ZERO_RT_F32, 1, 1, 2, 2, 2, dummy, 0,
                             0, 0, 2, 1, dummy, 0, 0, 0, 2, 1, dummy, 0, 0, 0,
                             2, 1, 0) == 1,
         "gemm16 rejects an f32 operand type");
  expect(zero_rt_cuda_gemm16(ZERO_RT_BF16, ZERO_RT_F16, 1, 1, 2, 2, 2, dummy, 0,
                             0, 0, 2, 1, dummy, 0, 0, 0, 2, 1, dummy, 0, 0, 0,
                             2, 1, 0) == 1,
         "gemm16 rejects a 16-bit C of another type than A's");
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

double value(int64_t r, int64_t i) { return double((r + 1) * (i % 5 + 1)); }

size_t elemSize(int32_t dtype) {
  return dtype == ZERO_RT_F64 ? 8 : dtype == ZERO_RT_F32 ? 4 : 2;
}

std::vector<char> encode(int32_t dtype, const std::vector<double> &v) {
  std::vector<char> out(v.size() * elemSize(dtype));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == ZERO_RT_F64) {
      std::memcpy(&out[i * 8], &v[i], 8);
    } else if (dtype == ZERO_RT_F32) {
      float f = float(v[i]);
      std::memcpy(&out[i * 4], &f, 4);
    } else {
      uint16_t h = dtype == ZERO_RT_BF16 ? floatToBF16(float(v[i]))
                                         : floatToF16(float(v[i]));
      std::memcpy(&out[i * 2], &h, 2);
    }
  }
  return out;
}

std::vector<double> decode(int32_t dtype, const std::vector<char> &b) {
  size_t es = elemSize(dtype);
  std::vector<double> out(b.size() / es);
  for (size_t i = 0; i < out.size(); ++i) {
    if (dtype == ZERO_RT_F64) {
      std::memcpy(&out[i], &b[i * 8], 8);
    } else if (dtype == ZERO_RT_F32) {
      float f;
      std::memcpy(&f, &b[i * 4], 4);
      out[i] = f;
    } else {
      uint16_t h;
      std::memcpy(&h, &b[i * 2], 2);
      out[i] = dtype == ZERO_RT_BF16 ? bf16ToFloat(h) : f16ToFloat(h);
    }
  }
  return out;
}

void testCollectives() {
  const int32_t dtypes[] = {ZERO_RT_F32, ZERO_RT_F64, ZERO_RT_F16,
                            ZERO_RT_BF16};
  const char *dtypeNames[] = {"f32", "f64", "f16", "bf16"};
  const char *kindNames[] = {"all_reduce", "reduce_scatter", "all_gather"};
  const int64_t count = 1031;
  for (int d = 0; d < 4; ++d)
    for (int kind = 0; kind < 3; ++kind)
      for (int inPlace = 0; inPlace < (kind == ZERO_RT_ALL_REDUCE ? 2 : 1);
           ++inPlace) {
        int32_t dtype = dtypes[d];
        size_t es = elemSize(dtype);
        int64_t sendCount =
            kind == ZERO_RT_REDUCE_SCATTER ? count * world : count;
        int64_t recvCount = kind == ZERO_RT_ALL_GATHER ? count * world : count;
        std::vector<double> send(sendCount);
        for (int64_t i = 0; i < sendCount; ++i)
          send[i] = value(rank, i);
        int64_t dSend = arena.take(sendCount * es);
        int64_t dRecv = inPlace ? dSend : arena.take(recvCount * es);
        std::vector<char> bytes = encode(dtype, send);
        toDevice(dSend, bytes.data(), bytes.size());
        CommStats before = commStats();
        int64_t h = zero_rt_cuda_comm_start(kind, dtype, dSend, dRecv, count,
                                            /*commStream=*/kind % 2);
        zero_rt_cuda_comm_wait(h);
        std::vector<char> out(recvCount * es);
        toHost(out.data(), dRecv, out.size());
        std::vector<double> got = decode(dtype, out);
        std::string name = std::string(kindNames[kind]) + " " + dtypeNames[d] +
                           (inPlace ? " in place" : "");
        bool ok = h >= 0;
        for (int64_t i = 0; i < recvCount && ok; ++i) {
          double want = 0;
          if (kind == ZERO_RT_ALL_GATHER) {
            want = value(i / count, i % count);
          } else {
            int64_t at = kind == ZERO_RT_REDUCE_SCATTER ? rank * count + i : i;
            for (int64_t r = 0; r < world; ++r)
              want += value(r, at);
          }
          if (got[i] != want) {
            expect(false, name + ": element " + std::to_string(i) + " is " +
                              std::to_string(got[i]) + ", expected " +
                              std::to_string(want));
            ok = false;
          }
        }
        if (ok)
          expect(true, name);
        // The ring rule of Comm.h, computed here on its own.
        int64_t total = kind == ZERO_RT_ALL_REDUCE ? count : count * world;
        int64_t want = (kind == ZERO_RT_ALL_REDUCE ? 2 : 1) * total *
                       (world - 1) / world * (int64_t)es;
        const CommStats &after = commStats();
        expect(
            after.bytesSent[kind] - before.bytesSent[kind] == want &&
                after.calls[kind] - before.calls[kind] == 1,
            name + ": counted " +
                std::to_string(after.bytesSent[kind] - before.bytesSent[kind]) +
                " bytes, expected " + std::to_string(want));
        arena.used = 0;
      }

  // Ordering: the compute stream scales the buffer right before the start
  // (a GEMM with 2 I as B), and reads the result right after the wait, with
  // the host never waiting in between.
  {
    const int64_t n = 1 << 20, two = 2;
    std::vector<float> x(n), eye2(two * two, 0.0f);
    for (int64_t i = 0; i < n; ++i)
      x[i] = float(rank + 1);
    eye2[0] = eye2[3] = 2.0f;
    int64_t dX = arena.take(n * 4), dY = arena.take(n * 4), dI = arena.take(16),
            dZ = arena.take(n * 4);
    toDevice(dX, x.data(), n * 4);
    toDevice(dI, eye2.data(), 16);
    // Y = X * 2I (X seen as n/2 x 2), then Y is all-reduced into Z, then
    // Z = Z * 2I on the compute stream again.
    zero_rt_cuda_sgemm(1, 1, n / 2, 2, 2, dX, 0, 0, 0, 2, 1, dI, 0, 0, 0, 2, 1,
                       dY, 0, 0, 0, 2, 1, 0);
    int64_t h0 =
        zero_rt_cuda_comm_start(ZERO_RT_ALL_REDUCE, ZERO_RT_F32, dY, dZ, n, 0);
    // A second collective on the other stream, in flight at the same time.
    int64_t h1 =
        zero_rt_cuda_comm_start(ZERO_RT_ALL_REDUCE, ZERO_RT_F32, dX, dX, n, 1);
    zero_rt_cuda_comm_wait(h0);
    zero_rt_cuda_sgemm(1, 1, n / 2, 2, 2, dZ, 0, 0, 0, 2, 1, dI, 0, 0, 0, 2, 1,
                       dZ, 0, 0, 0, 2, 1, 0);
    zero_rt_cuda_comm_wait(h1);
    std::vector<float> z(n), x2(n);
    toHost(z.data(), dZ, n * 4);
    toHost(x2.data(), dX, n * 4);
    double sum = world * (world + 1) / 2.0;
    bool ok = true;
    for (int64_t i = 0; i < n && ok; ++i)
      ok = z[i] == float(4 * sum) && x2[i] == float(sum);
    expect(ok, "collectives ordered against the compute stream, two streams "
               "in flight");
    arena.used = 0;
  }

  // Without overlap: on the compute stream, handle -1.
  {
    zero_rt_cuda_set_overlap(0);
    std::vector<float> v(100, float(rank + 1));
    int64_t dV = arena.take(400);
    toDevice(dV, v.data(), 400);
    int64_t h = zero_rt_cuda_comm_start(ZERO_RT_ALL_REDUCE, ZERO_RT_F32, dV, dV,
                                        100, 0);
    zero_rt_cuda_comm_wait(h);
    toHost(v.data(), dV, 400);
    expect(h == -1 && v[99] == float(world * (world + 1) / 2),
           "collective without overlap");
    zero_rt_cuda_set_overlap(1);
    arena.used = 0;
  }
}

//===----------------------------------------------------------------------===//
// Kernels through the mgpu* functions
//===----------------------------------------------------------------------===//

void launchScale(void *module, const char *what) {
  void *f = mgpuModuleGetFunction(module, "zero_test_scale");
  const uint64_t n = 1000;
  std::vector<float> x(n);
  for (uint64_t i = 0; i < n; ++i)
    x[i] = float(i);
  void *d = mgpuMemAlloc(n * 4, nullptr, false);
  void *stream = mgpuStreamCreate();
  mgpuMemcpy(d, x.data(), n * 4, stream);
  float factor = 3.0f;
  uint64_t count = n;
  void *params[] = {&d, &factor, &count};
  mgpuLaunchKernel(f, (n + 127) / 128, 1, 1, 128, 1, 1, 0, stream, params,
                   nullptr, 3);
  mgpuMemcpy(x.data(), d, n * 4, stream);
  mgpuMemFree(d, stream);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  bool ok = true;
  for (uint64_t i = 0; i < n; ++i)
    ok = ok && x[i] == 3.0f * float(i);
  expect(ok, std::string("kernel launched from ") + what);
}

/// The descriptor MLIR passes for a 1-d memref.
struct MemRef1D {
  float *allocated, *aligned;
  int64_t offset, size, stride;
};

void testKernels() {
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, zero_rt_cuda_device());
  // A cubin runs on its architecture's major version, minor at least its.
  std::string cubin;
  if (prop.major == 8)
    cubin = ZERO_CUDA_TEST_DIR "/scale_sm_80.cubin";
  else if (prop.major == 9)
    cubin = ZERO_CUDA_TEST_DIR "/scale_sm_90.cubin";
  if (!cubin.empty()) {
    std::vector<char> data = readFile(cubin);
    expect(!data.empty(), "test cubin " + cubin + " exists");
    if (!data.empty()) {
      void *module = mgpuModuleLoad(data.data(), data.size());
      launchScale(module, "a cubin (mgpuModuleLoad)");
      mgpuModuleUnload(module);
    }
  } else if (rank == 0) {
    std::printf("note: no test cubin for sm_%d%d; PTX and fatbin only\n",
                prop.major, prop.minor);
  }
  std::vector<char> ptx = readFile(ZERO_CUDA_PTX);
  ptx.push_back('\0');
  void *module = mgpuModuleLoadJIT(ptx.data(), 2);
  launchScale(module, "PTX (mgpuModuleLoadJIT)");
  mgpuModuleUnload(module);

  // Fills, events and host-shared memory.
  {
    const size_t n = 999;
    void *stream = mgpuStreamCreate();
    void *d = mgpuMemAlloc(n * 4, stream, false);
    mgpuMemset16(d, 0x3c00, 2 * n, stream);
    void *event = mgpuEventCreate();
    mgpuEventRecord(event, stream);
    mgpuStreamWaitEvent(stream, event);
    mgpuEventSynchronize(event);
    mgpuEventDestroy(event);
    std::vector<uint16_t> h(2 * n);
    mgpuMemcpy(h.data(), d, n * 4, stream);
    mgpuStreamSynchronize(stream);
    expect(
        std::all_of(h.begin(), h.end(), [](uint16_t x) { return x == 0x3c00; }),
        "mgpuMemset16");
    mgpuMemset32(d, 0x40490fdb, n, stream);
    std::vector<float> f(n);
    mgpuMemcpy(f.data(), d, n * 4, stream);
    mgpuStreamSynchronize(stream);
    expect(f[0] == 3.14159274f && f[n - 1] == 3.14159274f, "mgpuMemset32");
    mgpuMemFree(d, stream);
    auto *shared = static_cast<float *>(mgpuMemAlloc(64, stream, true));
    mgpuMemset32(shared, 0x3f800000, 16, stream);
    mgpuStreamSynchronize(stream);
    expect(shared[15] == 1.0f, "host-shared mgpuMemAlloc");
    mgpuMemFree(shared, stream);
    std::vector<float> host(256);
    MemRef1D desc{host.data(), host.data(), 0, 256, 1};
    mgpuMemHostRegisterMemRef(1, &desc, 4);
    mgpuMemHostUnregisterMemRef(1, &desc, 4);
    expect(true, "mgpuMemHostRegisterMemRef / Unregister");
  }

  // Host code generated by MLIR (gpu-to-llvm), in its own library: its
  // constructor loads the fatbin through mgpuModuleLoad.
  std::string lib = ZERO_CUDA_MLIR_LIB;
  if (lib.empty()) {
    if (rank == 0)
      std::printf("note: MLIR tools were not found at build time; no "
                  "generated host code tested\n");
    return;
  }
  void *handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  expect(handle != nullptr,
         std::string("dlopen ") + lib + ": " + (handle ? "" : dlerror()));
  if (!handle)
    return;
  using Fn = void (*)(MemRef1D *, MemRef1D *, int64_t, float);
  auto fn =
      reinterpret_cast<Fn>(dlsym(handle, "_mlir_ciface_zero_cuda_mlir_scale"));
  expect(fn != nullptr, "the generated entry point exists");
  if (fn) {
    const int64_t n = 3000;
    std::vector<float> data(n), fill(n, 0.0f);
    for (int64_t i = 0; i < n; ++i)
      data[i] = float(i % 100);
    MemRef1D d{data.data(), data.data(), 0, n, 1};
    MemRef1D f{fill.data(), fill.data(), 0, n, 1};
    fn(&d, &f, n, 0.5f);
    bool ok = true;
    for (int64_t i = 0; i < n; ++i)
      ok = ok && data[i] == 0.5f * float(i % 100) && fill[i] == 0.5f;
    expect(ok, "MLIR-generated host code (alloc, memcpy, memset, events, "
               "launch, free) through the mgpu* functions");
  }
  dlclose(handle);
}

//===----------------------------------------------------------------------===//
// Arena, memory, trace
//===----------------------------------------------------------------------===//

void testTrace() {
  traceEnable();
  int64_t n = 256;
  int64_t dA = arena.take(n * n * 4), dC = arena.take(n * n * 4);
  zero_rt_cuda_sgemm(1, 1, n, n, n, dA, 0, 0, 0, n, 1, dA, 0, 0, 0, n, 1, dC, 0,
                     0, 0, n, 1, 0);
  int64_t h = zero_rt_cuda_comm_start(ZERO_RT_ALL_REDUCE, ZERO_RT_F32, dA, dA,
                                      n * n, 0);
  zero_rt_cuda_sgemm(1, 1, n, n, n, dC, 0, 0, 0, n, 1, dC, 0, 0, 0, n, 1, dC, 0,
                     0, 0, n, 1, 0);
  zero_rt_cuda_comm_wait(h);
  zero_rt_cuda_synchronize();
  std::vector<TraceEvent> events = traceEvents();
  int compute = 0, comm = 0, waits = 0;
  bool sane = true;
  for (const TraceEvent &e : events) {
    compute += e.category == "compute" && e.tid == 1;
    comm += e.category == "communication" && e.tid == 2 && e.id == h;
    waits += e.category == "wait" && e.tid == 1 && e.id == h;
    sane = sane && e.dur >= 0 && e.ts >= 0 && e.ts <= commNow();
  }
  expect(compute >= 2 && comm == 1 && waits == 1 && sane,
         "trace: " + std::to_string(compute) + " compute, " +
             std::to_string(comm) + " collective and " + std::to_string(waits) +
             " wait intervals on their streams");
  arena.used = 0;
}
} // namespace

int main(int argc, char **argv) {
  std::string why;
  int devices = 0;
  if (!gpuListed(why)) {
    std::printf("SKIP: no GPU (%s)\n", why.c_str());
    return 0;
  }
  cudaError_t rc = cudaGetDeviceCount(&devices);
  if (rc != cudaSuccess || devices == 0) {
    std::printf("SKIP: no GPU (the CUDA runtime finds none: %s)\n",
                rc == cudaSuccess ? "0 devices" : cudaGetErrorString(rc));
    return 0;
  }
  const char *size = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (!size)
    size = std::getenv("PMI_SIZE");
  std::string error;
  if (!commInit(&argc, &argv, size ? std::atoll(size) : 1, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  rank = commRank();
  world = commWorldSize();
  expect(zero_rt_cuda_abi_version() == ZERO_RT_CUDA_ABI_VERSION, "ABI version");
  // ZERO_CUDA_TEST_COMM=mpi: collectives through host memory, so that
  // several ranks may share a GPU.
  const char *backend = std::getenv("ZERO_CUDA_TEST_COMM");
  bool mpi = backend && std::string(backend) == "mpi";
  int device = zero_rt_cuda_init(2, mpi ? ZERO_RT_CUDA_COMM_MPI
                                        : ZERO_RT_CUDA_COMM_NCCL);
  expect(device >= 0 && device < devices, "a device is selected");
  if (const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK"))
    expect(device == std::atoi(local) % devices,
           "the device follows the local rank");

  // The watchdog: the last rank never joins an all-reduce; the others must
  // end the job with one error line within ZERO_RT_NCCL_TIMEOUT_S.
  if (std::getenv("ZERO_CUDA_TEST_HANG") && world > 1) {
    if (rank == world - 1)
      sleep(3600);
    int64_t buf = zero_rt_cuda_arena_init(1 << 20);
    int64_t h = zero_rt_cuda_comm_start(ZERO_RT_ALL_REDUCE, ZERO_RT_F32, buf,
                                        buf, 1024, 0);
    zero_rt_cuda_comm_wait(h);
    zero_rt_cuda_synchronize();
    std::fprintf(stderr,
                 "FAIL rank %lld: a collective completed without "
                 "the last rank\n",
                 (long long)rank);
    return 1;
  }

  const int64_t arenaBytes = 256ll << 20;
  int64_t before = zero_rt_cuda_memory_peak();
  arena.base = zero_rt_cuda_arena_init(arenaBytes);
  arena.size = arenaBytes;
  expect(arena.base != 0 && arena.base % 256 == 0 &&
             zero_rt_cuda_arena_base() == arena.base &&
             zero_rt_cuda_arena_bytes() == arenaBytes,
         "arena allocated and aligned");
  expect(zero_rt_cuda_memory_peak() - before >= arenaBytes &&
             zero_rt_cuda_memory_baseline() > 0,
         "cudaMemGetInfo peak covers the arena (" +
             std::to_string(zero_rt_cuda_memory_peak() - before) + " bytes)");

  // Claims: a step's constants are copied in only when its claim says the
  // arena changed hands or is new.
  expect(zero_rt_cuda_arena_claim(1) == 1 && zero_rt_cuda_arena_claim(1) == 0 &&
             zero_rt_cuda_arena_claim(2) == 1 &&
             zero_rt_cuda_arena_claim(1) == 1,
         "arena claims follow the owner");

  // Buffers outside the arena (a step's arguments): device memory that
  // the peak covers, usable by copies, freed on request.
  {
    const int64_t bytes = 64ll << 20;
    int64_t peak = zero_rt_cuda_memory_peak();
    int64_t buf = zero_rt_cuda_alloc(bytes);
    expect(buf != 0 && buf % 256 == 0 && zero_rt_cuda_alloc(0) == 0,
           "zero_rt_cuda_alloc returns aligned device memory");
    expect(zero_rt_cuda_memory_peak() - peak >= bytes,
           "cudaMemGetInfo peak covers the buffer");
    std::vector<float> in(1024, 3.0f), out(1024, 0.0f);
    zero_rt_cuda_memcpy(buf, reinterpret_cast<int64_t>(in.data()), 4096);
    zero_rt_cuda_memcpy(reinterpret_cast<int64_t>(out.data()), buf, 4096);
    expect(out == in, "a buffer round-trips through zero_rt_cuda_memcpy");
    zero_rt_cuda_free(buf);
  }

  testGemms();
  testCollectives();
  testKernels();
  testTrace();
  zero_rt_cuda_synchronize();
  zero_rt_cuda_finalize();

  double failed = failures;
  commAllReduceDoubles(&failed, 1);
  if (rank == 0)
    std::printf("%s: %d checks on rank 0, %d rank(s), %g failure(s) in all\n",
                failed ? "FAILED" : "PASS", checks, (int)world, failed);
  commFinalize();
  return failed ? 1 : 0;
}
