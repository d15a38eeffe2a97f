/*===- Runtime.h - C ABI called by compiled steps -----------------*- C -*-===*
 *
 * Generated code calls only these functions; they are the runtime's whole
 * surface towards the compiler. All pointers travel as int64 so the
 * compiler can pass them without pointer types.
 *
 *===----------------------------------------------------------------------===*/
#ifndef ZERO_RT_RUNTIME_H
#define ZERO_RT_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this interface; a compiled step records the one it was built
 * for, and hosts refuse to run a step built for another. */
#define ZERO_RT_ABI_VERSION 5
int32_t zero_rt_abi_version(void);

/* C[i][j] = A[i][j] * B[i][j] (+ C[i][j] when `accumulate`) for i in
 * [0, batch0), j in [0, batch1), f32. Each operand is given as (aligned
 * base pointer, element offset, the two batch strides, row stride, column
 * stride); a batch stride of 0 broadcasts the operand. */
void zero_rt_sgemm(int64_t batch0, int64_t batch1, int64_t m, int64_t n,
                   int64_t k, int64_t a, int64_t aOff, int64_t aSB0,
                   int64_t aSB1, int64_t aSM, int64_t aSK, int64_t b,
                   int64_t bOff, int64_t bSB0, int64_t bSB1, int64_t bSK,
                   int64_t bSN, int64_t c, int64_t cOff, int64_t cSB0,
                   int64_t cSB1, int64_t cSM, int64_t cSN, int64_t accumulate);

/* The same GEMM in f64 (A, B and C). */
void zero_rt_dgemm(int64_t batch0, int64_t batch1, int64_t m, int64_t n,
                   int64_t k, int64_t a, int64_t aOff, int64_t aSB0,
                   int64_t aSB1, int64_t aSM, int64_t aSK, int64_t b,
                   int64_t bOff, int64_t bSB0, int64_t bSB1, int64_t bSK,
                   int64_t bSN, int64_t c, int64_t cOff, int64_t cSB0,
                   int64_t cSB1, int64_t cSM, int64_t cSN, int64_t accumulate);

/* The same GEMM with A and B of `abType` (ZERO_RT_BF16 or ZERO_RT_F16)
 * and C of `cType` (ZERO_RT_F32, or `abType`): the operands are widened to
 * f32 (exactly) and multiplied in f32, so products accumulate in f32 as on
 * tensor cores; a 16-bit C gets the f32 sums (plus C's widened values when
 * accumulating) rounded once to nearest even. */
void zero_rt_gemm16(int32_t abType, int32_t cType, int64_t batch0,
                    int64_t batch1, int64_t m, int64_t n, int64_t k, int64_t a,
                    int64_t aOff, int64_t aSB0, int64_t aSB1, int64_t aSM,
                    int64_t aSK, int64_t b, int64_t bOff, int64_t bSB0,
                    int64_t bSB1, int64_t bSK, int64_t bSN, int64_t c,
                    int64_t cOff, int64_t cSB0, int64_t cSB1, int64_t cSM,
                    int64_t cSN, int64_t accumulate);

/* Collectives over the data-parallel group. `send` and `recv` are byte
 * addresses; `count` is the number of elements each rank contributes
 * (all_reduce: the whole buffer; reduce_scatter: what each rank receives;
 * all_gather: what each rank sends). Start returns a handle that wait
 * completes; `stream` orders operations on devices and is 0 on the CPU. */
enum {
  ZERO_RT_ALL_REDUCE = 0,
  ZERO_RT_REDUCE_SCATTER = 1,
  ZERO_RT_ALL_GATHER = 2,
  ZERO_RT_NUM_COLLECTIVES = 3
};
/* Element types; 16-bit sums are rounded to nearest even per addition. */
enum { ZERO_RT_F32 = 0, ZERO_RT_F64 = 1, ZERO_RT_F16 = 2, ZERO_RT_BF16 = 3 };
int64_t zero_rt_comm_start(int32_t kind, int32_t dtype, int64_t send,
                           int64_t recv, int64_t count, int64_t stream);
void zero_rt_comm_wait(int64_t handle);
int64_t zero_rt_rank(void);
int64_t zero_rt_world_size(void);

/* Memory accounting: a step reports each temporary buffer it allocates and
 * frees, with its category (the numbering of the compiler's
 * MemoryCategory). */
enum {
  ZERO_RT_MEM_PARAMETERS = 0,
  ZERO_RT_MEM_GRADIENTS = 1,
  ZERO_RT_MEM_OPTIMIZER_STATE = 2,
  ZERO_RT_MEM_ACTIVATIONS = 3,
  ZERO_RT_MEM_BUFFERS = 4,
  ZERO_RT_MEM_OTHER = 5,
  ZERO_RT_MEM_NUM_CATEGORIES = 6
};
void zero_rt_mem_alloc(int32_t category, int64_t bytes);
void zero_rt_mem_free(int32_t category, int64_t bytes);

#ifdef __cplusplus
}
#endif

#endif
