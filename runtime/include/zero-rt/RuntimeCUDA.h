/*===- RuntimeCUDA.h - C ABI of the CUDA runtime ------------------*- C -*-===*
 *
 * What compiled CUDA steps and their host call besides Runtime.h (memory
 * counters, rank and world size stay there). One process drives one GPU:
 * a compute stream runs the step's kernels and GEMMs in program order, and
 * communication streams run NCCL collectives (or MPI's, staged through host
 * memory), ordered against the compute stream by events only, so the host
 * never blocks inside a step.
 *
 * Every CUDA, cuBLAS or NCCL failure prints one line naming the rank, the
 * call and the library's message, and aborts the whole job (MPI_Abort);
 * nothing returns an error code except the GEMMs' layout check. Pointers
 * travel as int64 like in Runtime.h; device addresses are unified virtual
 * addresses, so host and device pointers share one space.
 *
 * The library also exports the `mgpu*` functions that MLIR's gpu-to-llvm
 * lowering and gpu.binary translation call (module load, kernel launch,
 * streams, events, allocation, copies); they are declared at the end.
 *
 *===----------------------------------------------------------------------===*/
#ifndef ZERO_RT_RUNTIME_CUDA_H
#define ZERO_RT_RUNTIME_CUDA_H

#include "zero-rt/Runtime.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZERO_RT_CUDA_ABI_VERSION 5
int32_t zero_rt_cuda_abi_version(void);

/*--- Setup ----------------------------------------------------------------*/

/* How the collectives run: NCCL (one GPU per rank), or MPI through host
 * memory (ranks may share a GPU: the device's data is copied to the host,
 * reduced or gathered there and copied back, on the CPU runtime's
 * communication thread). */
#define ZERO_RT_CUDA_COMM_NCCL 0
#define ZERO_RT_CUDA_COMM_MPI 1

/* Selects this rank's GPU (the node-local rank, from
 * OMPI_COMM_WORLD_LOCAL_RANK or else MPI's shared-memory split, modulo the
 * devices), creates the compute stream, `numCommStreams` (>= 1)
 * communication streams and the cuBLAS handle, and with
 * ZERO_RT_CUDA_COMM_NCCL one NCCL communicator per communication stream,
 * bootstrapped over MPI_COMM_WORLD (ranks of a node sharing a GPU are an
 * error then). Call after zero::rt::commInit (MPI) and before loading a
 * step (its module constructors load kernels on the selected device).
 * Returns the device ordinal. A second call is an error. */
int32_t zero_rt_cuda_init(int32_t numCommStreams, int32_t commBackend);
/* Waits for all streams, then destroys communicators, handles, streams and
 * the arena. Call before zero::rt::commFinalize. */
void zero_rt_cuda_finalize(void);
int32_t zero_rt_cuda_device(void);
/* The streams as CUstream / cudaStream_t values. */
int64_t zero_rt_cuda_compute_stream(void);
int64_t zero_rt_cuda_comm_stream(int32_t index);
/* The host waits for the compute stream and every communication stream,
 * then checks NCCL for asynchronous errors. */
void zero_rt_cuda_synchronize(void);
/* Copies `bytes` between any two addresses (host or device) in compute
 * stream order and waits for the copy: for the host's setup and results. */
void zero_rt_cuda_memcpy(int64_t dst, int64_t src, int64_t bytes);

/*--- Device memory --------------------------------------------------------*/

/* Allocates the arena: one device block of `bytes` (256-byte aligned) that
 * compiled code offsets into by the compiler's static memory plan. Returns
 * its base address; a second call frees the previous arena first. */
int64_t zero_rt_cuda_arena_init(int64_t bytes);
/* A device buffer of `bytes` outside the arena (a step's arguments), freed
 * by zero_rt_cuda_free or at finalize; 0 for 0 bytes. A device too full is
 * an error that ends the job, naming the bytes asked and free. */
int64_t zero_rt_cuda_alloc(int64_t bytes);
void zero_rt_cuda_free(int64_t address);
int64_t zero_rt_cuda_arena_base(void);
/* The arena's base for a step that lays out `bytes` of it: compiled steps
 * call this on entry; an arena smaller than `bytes` (or none) is an error
 * that ends the job. */
int64_t zero_rt_cuda_arena(int64_t bytes);
/* Makes `owner` (a compiled step's own address for it) the arena's user
 * and returns 1 when what it left there may be gone: the arena is new, or
 * another owner claimed it since. Steps keep their constants in blocks no
 * other buffer of theirs uses and copy them in only then, not every step. */
int32_t zero_rt_cuda_arena_claim(int64_t owner);
int64_t zero_rt_cuda_arena_bytes(void);
/* The model's node (a NUL-terminated name that outlives the run, 0 for
 * none) that the launches and GEMMs queued next compute: the trace names
 * each by it. Compiled steps call this before each launch or GEMM whose
 * node differs from the last one's. */
void zero_rt_cuda_node(int64_t name);
/* Device memory in use (total - free by cudaMemGetInfo, so other processes
 * on the device count too): when initialization started, and the highest
 * value sampled since. Samples are taken at init, after the arena and each
 * mgpuMemAlloc, at every synchronize and by zero_rt_cuda_memory_sample.
 * Initialization takes all the memory the runtime itself needs (context,
 * a fixed cuBLAS workspace, NCCL's buffers, connected eagerly), so the peak
 * minus the use right after init is the program's own. */
int64_t zero_rt_cuda_memory_baseline(void);
int64_t zero_rt_cuda_memory_peak(void);
void zero_rt_cuda_memory_sample(void);

/*--- Collectives ----------------------------------------------------------*/

/* `kind`, `dtype` and `count` as zero_rt_comm_start in Runtime.h (f32, f64,
 * f16, bf16; sums). `commStream` picks the communication stream (modulo
 * their number). The communication stream first waits for everything
 * enqueued on the compute stream so far, then runs the NCCL collective;
 * the returned handle names the collective's completion. Nothing blocks
 * the host. Bytes and calls are counted like the CPU runtime's
 * (zero::rt::commStats). */
int64_t zero_rt_cuda_comm_start(int32_t kind, int32_t dtype, int64_t send,
                                int64_t recv, int64_t count,
                                int64_t commStream);
/* Makes the compute stream wait for the collective (no host blocking). A
 * handle is waited for once; -1 is ignored. */
void zero_rt_cuda_comm_wait(int64_t handle);
/* Whether collectives overlap compute (the default). When off, they run
 * on the compute stream itself and start returns -1. */
void zero_rt_cuda_set_overlap(int32_t overlap);

/*--- GEMM -----------------------------------------------------------------*/

/* The GEMMs of Runtime.h (same operands, same meaning) on the compute
 * stream through cuBLAS: zero_rt_cuda_sgemm with f32 A, B, C, accumulating
 * in f32; zero_rt_cuda_gemm16 with A and B of `abType` (ZERO_RT_BF16 or
 * ZERO_RT_F16) and C of `cType` (ZERO_RT_F32, or `abType`: the f32 sums
 * rounded to it by cuBLAS), accumulating in f32 on tensor cores;
 * zero_rt_cuda_dgemm with f64 A, B, C, accumulating in f64.
 *
 * Supported layouts: each matrix needs a unit stride along one of its two
 * dimensions and a stride along the other of at least that dimension's
 * extent (row- or column-major, possibly padded); a dimension of size 1
 * needs neither. Batch strides are free (0 broadcasts, negative strides
 * excepted); batches become one strided-batched call when a single stride
 * per operand describes them, and one call per outer batch otherwise; a C
 * that both batch loops write to the same place runs batch by batch in
 * order. Returns 0, or 1 for another layout with nothing computed and a
 * one-line reason in zero_rt_cuda_last_error. */
int32_t zero_rt_cuda_sgemm(int64_t batch0, int64_t batch1, int64_t m, int64_t n,
                           int64_t k, int64_t a, int64_t aOff, int64_t aSB0,
                           int64_t aSB1, int64_t aSM, int64_t aSK, int64_t b,
                           int64_t bOff, int64_t bSB0, int64_t bSB1,
                           int64_t bSK, int64_t bSN, int64_t c, int64_t cOff,
                           int64_t cSB0, int64_t cSB1, int64_t cSM, int64_t cSN,
                           int64_t accumulate);
int32_t zero_rt_cuda_dgemm(int64_t batch0, int64_t batch1, int64_t m, int64_t n,
                           int64_t k, int64_t a, int64_t aOff, int64_t aSB0,
                           int64_t aSB1, int64_t aSM, int64_t aSK, int64_t b,
                           int64_t bOff, int64_t bSB0, int64_t bSB1,
                           int64_t bSK, int64_t bSN, int64_t c, int64_t cOff,
                           int64_t cSB0, int64_t cSB1, int64_t cSM, int64_t cSN,
                           int64_t accumulate);
int32_t zero_rt_cuda_gemm16(int32_t abType, int32_t cType, int64_t batch0,
                            int64_t batch1, int64_t m, int64_t n, int64_t k,
                            int64_t a, int64_t aOff, int64_t aSB0, int64_t aSB1,
                            int64_t aSM, int64_t aSK, int64_t b, int64_t bOff,
                            int64_t bSB0, int64_t bSB1, int64_t bSK,
                            int64_t bSN, int64_t c, int64_t cOff, int64_t cSB0,
                            int64_t cSB1, int64_t cSM, int64_t cSN,
                            int64_t accumulate);
/* Lets f32 GEMMs use TF32 tensor cores (off by default: f32 GEMMs then
 * round like the CPU target's). */
void zero_rt_cuda_gemm_allow_tf32(int32_t allow);
/* What compiled steps do with a GEMM's status: nothing for 0, else end
 * the job with the layout error (the compiler emits only layouts the
 * GEMMs take, so this is a compiler bug, never silently wrong numbers). */
void zero_rt_cuda_check_gemm(int32_t status);
/* The last GEMM layout error of this thread ("" when none). */
const char *zero_rt_cuda_last_error(void);

/*--- MLIR's GPU runtime calls ---------------------------------------------*/

/* The functions that LLVM 22's gpu-to-llvm and gpu.binary translation emit
 * calls to, with their signatures. Pointer arguments are the CUDA driver's
 * handles. Streams: mgpuStreamCreate hands out the compute stream, so
 * generated GPU work is ordered with the GEMMs and collectives; destroying
 * it is a no-op. A null stream means the compute stream too. mgpuMemAlloc
 * allocates stream-ordered (cudaMallocAsync), or managed memory when
 * `isHostShared`. mgpuSetDefaultDevice may only name the device that init
 * chose (or choose it, before init). */
void *mgpuModuleLoad(void *data, size_t size);
void *mgpuModuleLoadJIT(void *ptx, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void mgpuLaunchClusterKernel(void *function, intptr_t clusterX,
                             intptr_t clusterY, intptr_t clusterZ,
                             intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                             intptr_t blockX, intptr_t blockY, intptr_t blockZ,
                             int32_t smem, void *stream, void **params,
                             void **extra);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream);
void mgpuMemset32(void *dst, uint32_t value, size_t count, void *stream);
void mgpuMemset16(void *dst, uint16_t value, size_t count, void *stream);
void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                               int64_t elementSizeBytes);
void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                 int64_t elementSizeBytes);
void mgpuSetDefaultDevice(int32_t device);

#ifdef __cplusplus
}
#endif

#endif
