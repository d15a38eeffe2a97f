// Kernels whose threads meet: warp shuffles in a loop, barriers in a loop
// over workgroup memory, and warp-wide matrix products on bf16 and f16 in
// PTX's fragment layout (each lane loads its own elements), and the
// CUDA target's attention kernels, forward and backward, on operands as
// they lie and on strided views of one projection
// (zero-gpu-map-attention, through zero-gpu-lower-kernels as a step's
// kernels go). A GPU runs their cubin;
// the host emulator runs their thread copies (zero-gpu-host-kernels) side
// by side; zero-cuda-cooperative-test checks both against plain C++. The
// two diverge_* kernels make threads part where they must meet: the
// emulator refuses them.
module attributes {gpu.container_module} {
  gpu.module @zero_coop_kernels {
    // Each warp's sum by a butterfly, both warps' through workgroup
    // memory; each thread's neighbour's value and whether it has one.
    gpu.func @warp_sum(%a: memref<64xf32>, %sums: memref<3xf32>,
                       %down: memref<64xf32>, %valid: memref<64xi32>)
        workgroup(%s: memref<2xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c5 = arith.constant 5 : index
      %c32 = arith.constant 32 : index
      %one = arith.constant 1 : i32
      %sixteen = arith.constant 16 : i32
      %width = arith.constant 32 : i32
      %t = gpu.thread_id x
      %lane = gpu.lane_id
      %w = arith.divui %t, %c32 : index
      %x = memref.load %a[%t] : memref<64xf32>
      %sum:2 = scf.for %i = %c0 to %c5 step %c1
          iter_args(%acc = %x, %offset = %sixteen) -> (f32, i32) {
        %other, %ok = gpu.shuffle xor %acc, %offset, %width : f32
        %next = arith.addf %acc, %other : f32
        %half = arith.shrui %offset, %one : i32
        scf.yield %next, %half : f32, i32
      }
      %first = arith.cmpi eq, %lane, %c0 : index
      scf.if %first {
        memref.store %sum#0, %s[%w] : memref<2xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %t0 = arith.cmpi eq, %t, %c0 : index
      scf.if %t0 {
        %s0 = memref.load %s[%c0] : memref<2xf32, #gpu.address_space<workgroup>>
        %s1 = memref.load %s[%c1] : memref<2xf32, #gpu.address_space<workgroup>>
        %both = arith.addf %s0, %s1 : f32
        %c2 = arith.constant 2 : index
        memref.store %s0, %sums[%c0] : memref<3xf32>
        memref.store %s1, %sums[%c1] : memref<3xf32>
        memref.store %both, %sums[%c2] : memref<3xf32>
      }
      %d, %dv = gpu.shuffle down %x, %one, %width : f32
      memref.store %d, %down[%t] : memref<64xf32>
      %v = arith.extui %dv : i1 to i32
      memref.store %v, %valid[%t] : memref<64xi32>
      gpu.return
    }

    // Four tiles of 32, each reversed through workgroup memory: two
    // barriers an iteration, the buffer reused.
    gpu.func @reverse_tiles(%a: memref<128xf32>, %b: memref<128xf32>)
        workgroup(%s: memref<32xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c31 = arith.constant 31 : index
      %c32 = arith.constant 32 : index
      %t = gpu.thread_id x
      %r = arith.subi %c31, %t : index
      scf.for %i = %c0 to %c4 step %c1 {
        %base = arith.muli %i, %c32 : index
        %at = arith.addi %base, %t : index
        %x = memref.load %a[%at] : memref<128xf32>
        memref.store %x, %s[%t] : memref<32xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %y = memref.load %s[%r] : memref<32xf32, #gpu.address_space<workgroup>>
        memref.store %y, %b[%at] : memref<128xf32>
        gpu.barrier
      }
      gpu.return
    }

    // D = A B + C for A 16x16, B 16x8 (row-major), C and D 16x8 f32, one
    // warp: lane l = 4g + t holds A[g + 8 (r % 2)][2t + h + 8 (r / 2)] in
    // register r, half h; B[2t + h + 8r][g]; C[g + 8r][2t + h].
    gpu.func @mma_bf16(%a: memref<16x16xbf16>, %b: memref<16x8xbf16>,
                    %c: memref<16x8xf32>, %d: memref<16x8xf32>) kernel {
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %l = gpu.lane_id
      %g = arith.divui %l, %c4 : index
      %t = arith.remui %l, %c4 : index
      %g8 = arith.addi %g, %c8 : index
      %k0 = arith.muli %t, %c2 : index
      %k0h = arith.addi %k0, %c1 : index
      %k1 = arith.addi %k0, %c8 : index
      %k1h = arith.addi %k1, %c1 : index
      %a00 = memref.load %a[%g, %k0] : memref<16x16xbf16>
      %a01 = memref.load %a[%g, %k0h] : memref<16x16xbf16>
      %a10 = memref.load %a[%g8, %k0] : memref<16x16xbf16>
      %a11 = memref.load %a[%g8, %k0h] : memref<16x16xbf16>
      %a20 = memref.load %a[%g, %k1] : memref<16x16xbf16>
      %a21 = memref.load %a[%g, %k1h] : memref<16x16xbf16>
      %a30 = memref.load %a[%g8, %k1] : memref<16x16xbf16>
      %a31 = memref.load %a[%g8, %k1h] : memref<16x16xbf16>
      %b00 = memref.load %b[%k0, %g] : memref<16x8xbf16>
      %b01 = memref.load %b[%k0h, %g] : memref<16x8xbf16>
      %b10 = memref.load %b[%k1, %g] : memref<16x8xbf16>
      %b11 = memref.load %b[%k1h, %g] : memref<16x8xbf16>
      %c00 = memref.load %c[%g, %k0] : memref<16x8xf32>
      %c01 = memref.load %c[%g, %k0h] : memref<16x8xf32>
      %c10 = memref.load %c[%g8, %k0] : memref<16x8xf32>
      %c11 = memref.load %c[%g8, %k0h] : memref<16x8xf32>
      %A = vector.from_elements %a00, %a01, %a10, %a11, %a20, %a21, %a30, %a31 : vector<4x2xbf16>
      %B = vector.from_elements %b00, %b01, %b10, %b11 : vector<2x2xbf16>
      %C = vector.from_elements %c00, %c01, %c10, %c11 : vector<2x2xf32>
      %D = nvgpu.mma.sync (%A, %B, %C) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
      %d00 = vector.extract %D[0, 0] : f32 from vector<2x2xf32>
      memref.store %d00, %d[%g, %k0] : memref<16x8xf32>
      %d01 = vector.extract %D[0, 1] : f32 from vector<2x2xf32>
      memref.store %d01, %d[%g, %k0h] : memref<16x8xf32>
      %d10 = vector.extract %D[1, 0] : f32 from vector<2x2xf32>
      memref.store %d10, %d[%g8, %k0] : memref<16x8xf32>
      %d11 = vector.extract %D[1, 1] : f32 from vector<2x2xf32>
      memref.store %d11, %d[%g8, %k0h] : memref<16x8xf32>
      gpu.return
    }
    gpu.func @mma_f16(%a: memref<16x16xf16>, %b: memref<16x8xf16>,
                    %c: memref<16x8xf32>, %d: memref<16x8xf32>) kernel {
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %l = gpu.lane_id
      %g = arith.divui %l, %c4 : index
      %t = arith.remui %l, %c4 : index
      %g8 = arith.addi %g, %c8 : index
      %k0 = arith.muli %t, %c2 : index
      %k0h = arith.addi %k0, %c1 : index
      %k1 = arith.addi %k0, %c8 : index
      %k1h = arith.addi %k1, %c1 : index
      %a00 = memref.load %a[%g, %k0] : memref<16x16xf16>
      %a01 = memref.load %a[%g, %k0h] : memref<16x16xf16>
      %a10 = memref.load %a[%g8, %k0] : memref<16x16xf16>
      %a11 = memref.load %a[%g8, %k0h] : memref<16x16xf16>
      %a20 = memref.load %a[%g, %k1] : memref<16x16xf16>
      %a21 = memref.load %a[%g, %k1h] : memref<16x16xf16>
      %a30 = memref.load %a[%g8, %k1] : memref<16x16xf16>
      %a31 = memref.load %a[%g8, %k1h] : memref<16x16xf16>
      %b00 = memref.load %b[%k0, %g] : memref<16x8xf16>
      %b01 = memref.load %b[%k0h, %g] : memref<16x8xf16>
      %b10 = memref.load %b[%k1, %g] : memref<16x8xf16>
      %b11 = memref.load %b[%k1h, %g] : memref<16x8xf16>
      %c00 = memref.load %c[%g, %k0] : memref<16x8xf32>
      %c01 = memref.load %c[%g, %k0h] : memref<16x8xf32>
      %c10 = memref.load %c[%g8, %k0] : memref<16x8xf32>
      %c11 = memref.load %c[%g8, %k0h] : memref<16x8xf32>
      %A = vector.from_elements %a00, %a01, %a10, %a11, %a20, %a21, %a30, %a31 : vector<4x2xf16>
      %B = vector.from_elements %b00, %b01, %b10, %b11 : vector<2x2xf16>
      %C = vector.from_elements %c00, %c01, %c10, %c11 : vector<2x2xf32>
      %D = nvgpu.mma.sync (%A, %B, %C) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
      %d00 = vector.extract %D[0, 0] : f32 from vector<2x2xf32>
      memref.store %d00, %d[%g, %k0] : memref<16x8xf32>
      %d01 = vector.extract %D[0, 1] : f32 from vector<2x2xf32>
      memref.store %d01, %d[%g, %k0h] : memref<16x8xf32>
      %d10 = vector.extract %D[1, 0] : f32 from vector<2x2xf32>
      memref.store %d10, %d[%g8, %k0] : memref<16x8xf32>
      %d11 = vector.extract %D[1, 1] : f32 from vector<2x2xf32>
      memref.store %d11, %d[%g8, %k0h] : memref<16x8xf32>
      gpu.return
    }

    // Half the threads of a block wait at a barrier the others never
    // reach; half the lanes of a warp at a shuffle.
    gpu.func @diverge_barrier(%a: memref<64xf32>) kernel {
      %c32 = arith.constant 32 : index
      %t = gpu.thread_id x
      %low = arith.cmpi ult, %t, %c32 : index
      scf.if %low {
        gpu.barrier
      }
      gpu.return
    }
    gpu.func @diverge_shuffle(%a: memref<32xf32>) kernel {
      %c16 = arith.constant 16 : index
      %one = arith.constant 1 : i32
      %width = arith.constant 32 : i32
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<32xf32>
      %low = arith.cmpi ult, %t, %c16 : index
      scf.if %low {
        %y, %ok = gpu.shuffle xor %x, %one, %width : f32
        memref.store %y, %a[%t] : memref<32xf32>
      }
      gpu.return
    }
  }


  // Attention as a step's kernel function holds it: causal over two query
  // blocks in bf16, and in f16 over more keys than queries, rank 3.
  func.func private @attention_causal(%q: memref<2x2x128x64xbf16>,
      %k: memref<2x2x128x64xbf16>, %v: memref<2x2x128x64xbf16>,
      %o: memref<2x2x128x64xbf16>, %l: memref<2x2x128xf32>)
      attributes {zero.kernel = "zero.attention"} {
    zero.attention %q, %k, %v into %o, %l scale 0.5 causal
      : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>,
        memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>,
        memref<2x2x128xf32>
    return
  }
  func.func private @attention_f16(%q: memref<3x64x32xf16>,
      %k: memref<3x192x32xf16>, %v: memref<3x192x32xf16>,
      %o: memref<3x64x32xf16>, %l: memref<3x64xf32>)
      attributes {zero.kernel = "zero.attention"} {
    zero.attention %q, %k, %v into %o, %l scale 0.25
      : memref<3x64x32xf16>, memref<3x192x32xf16>, memref<3x192x32xf16>,
        memref<3x64x32xf16>, memref<3x64xf32>
    return
  }

  // Their gradients from the outputs' gradients, the log-sum-exp and
  // delta (each row's dout . out).
  func.func private @attention_grad_causal(%q: memref<2x2x128x64xbf16>, %k: memref<2x2x128x64xbf16>, %v: memref<2x2x128x64xbf16>, %do: memref<2x2x128x64xbf16>, %l: memref<2x2x128xf32>, %dl: memref<2x2x128xf32>, %dq: memref<2x2x128x64xbf16>, %dk: memref<2x2x128x64xbf16>, %dv: memref<2x2x128x64xbf16>)
      attributes {zero.kernel = "zero.attention_grad"} {
    zero.attention_grad %q, %k, %v, %do, %l, %dl into %dq, %dk, %dv scale 0.5 causal
      : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>, memref<2x2x128xf32>, memref<2x2x128xf32>, memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    return
  }
  func.func private @attention_grad_f16(%q: memref<3x64x32xf16>, %k: memref<3x192x32xf16>, %v: memref<3x192x32xf16>, %do: memref<3x64x32xf16>, %l: memref<3x64xf32>, %dl: memref<3x64xf32>, %dq: memref<3x64x32xf16>, %dk: memref<3x192x32xf16>, %dv: memref<3x192x32xf16>)
      attributes {zero.kernel = "zero.attention_grad"} {
    zero.attention_grad %q, %k, %v, %do, %l, %dl into %dq, %dk, %dv scale 0.25
      : memref<3x64x32xf16>, memref<3x192x32xf16>, memref<3x192x32xf16>, memref<3x64x32xf16>, memref<3x64xf32>, memref<3x64xf32>, memref<3x64x32xf16>, memref<3x192x32xf16>, memref<3x192x32xf16>
    return
  }

  // The heads of one projection as they lie (seq_dim 1): q, k and v are
  // views of one [B, T, 3, H, D] buffer, and so are their gradients.
  func.func private @attention_heads(%q: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>,
      %k: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, %v: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>,
      %o: memref<2x128x3x32xbf16>, %l: memref<2x128x3xf32>)
      attributes {zero.kernel = "zero.attention"} {
    zero.attention %q, %k, %v into %o, %l scale 0.5 causal seq_dim 1
      : memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>, memref<2x128x3x32xbf16>, memref<2x128x3xf32>
    return
  }
  func.func private @attention_grad_heads(%q: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>, %k: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, %v: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>, %do: memref<2x128x3x32xbf16>, %l: memref<2x128x3xf32>, %dl: memref<2x128x3xf32>, %dq: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>, %dk: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, %dv: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>)
      attributes {zero.kernel = "zero.attention_grad"} {
    zero.attention_grad %q, %k, %v, %do, %l, %dl into %dq, %dk, %dv scale 0.5 causal seq_dim 1
      : memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>, memref<2x128x3x32xbf16>, memref<2x128x3xf32>, memref<2x128x3xf32>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>
    return
  }

  // The same with dropout on the probabilities: the mask drawn at the
  // step and micro-batch the host passes.
  func.func private @attention_heads_dropout(%q: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>,
      %k: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, %v: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>,
      %o: memref<2x128x3x32xbf16>, %l: memref<2x128x3xf32>, %step: i64, %mb: i64)
      attributes {zero.kernel = "zero.attention"} {
    zero.attention %q, %k, %v into %o, %l scale 0.5 causal seq_dim 1 dropout <seed = 1311768467294899695, stream = 4, keep = 15099494> scaled 1.109375 rng(%step, %mb)
      : memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>, memref<2x128x3x32xbf16>, memref<2x128x3xf32>
    return
  }
  func.func private @attention_grad_heads_dropout(%q: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>, %k: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, %v: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>, %do: memref<2x128x3x32xbf16>, %l: memref<2x128x3xf32>, %dl: memref<2x128x3xf32>, %dq: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>, %dk: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, %dv: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>, %step: i64, %mb: i64)
      attributes {zero.kernel = "zero.attention_grad"} {
    zero.attention_grad %q, %k, %v, %do, %l, %dl into %dq, %dk, %dv scale 0.5 causal seq_dim 1 dropout <seed = 1311768467294899695, stream = 4, keep = 15099494> scaled 1.109375 rng(%step, %mb)
      : memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>, memref<2x128x3x32xbf16>, memref<2x128x3xf32>, memref<2x128x3xf32>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>
    return
  }

  // Each kernel on one block: its buffers copied to the device and back.

  func.func @zero_coop_warp_sum(%h0: memref<64xf32>, %h1: memref<3xf32>, %h2: memref<64xf32>, %h3: memref<64xi32>)
      attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
    %threads = arith.constant 64 : index
    %t0 = gpu.wait async
    %d0, %a0 = gpu.alloc async [%t0] () : memref<64xf32>
    %m0 = gpu.memcpy async [%a0] %d0, %h0 : memref<64xf32>, memref<64xf32>
    %d1, %a1 = gpu.alloc async [%m0] () : memref<3xf32>
    %m1 = gpu.memcpy async [%a1] %d1, %h1 : memref<3xf32>, memref<3xf32>
    %d2, %a2 = gpu.alloc async [%m1] () : memref<64xf32>
    %m2 = gpu.memcpy async [%a2] %d2, %h2 : memref<64xf32>, memref<64xf32>
    %d3, %a3 = gpu.alloc async [%m2] () : memref<64xi32>
    %m3 = gpu.memcpy async [%a3] %d3, %h3 : memref<64xi32>, memref<64xi32>
    %l = gpu.launch_func async [%m3] @zero_coop_kernels::@warp_sum
        blocks in (%c1, %c1, %c1) threads in (%threads, %c1, %c1)
        args(%d0 : memref<64xf32>, %d1 : memref<3xf32>, %d2 : memref<64xf32>, %d3 : memref<64xi32>)
    %b0 = gpu.memcpy async [%l] %h0, %d0 : memref<64xf32>, memref<64xf32>
    %f0 = gpu.dealloc async [%b0] %d0 : memref<64xf32>
    %b1 = gpu.memcpy async [%f0] %h1, %d1 : memref<3xf32>, memref<3xf32>
    %f1 = gpu.dealloc async [%b1] %d1 : memref<3xf32>
    %b2 = gpu.memcpy async [%f1] %h2, %d2 : memref<64xf32>, memref<64xf32>
    %f2 = gpu.dealloc async [%b2] %d2 : memref<64xf32>
    %b3 = gpu.memcpy async [%f2] %h3, %d3 : memref<64xi32>, memref<64xi32>
    %f3 = gpu.dealloc async [%b3] %d3 : memref<64xi32>
    gpu.wait [%f3]
    return
  }

  func.func @zero_coop_reverse_tiles(%h0: memref<128xf32>, %h1: memref<128xf32>)
      attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
    %threads = arith.constant 32 : index
    %t0 = gpu.wait async
    %d0, %a0 = gpu.alloc async [%t0] () : memref<128xf32>
    %m0 = gpu.memcpy async [%a0] %d0, %h0 : memref<128xf32>, memref<128xf32>
    %d1, %a1 = gpu.alloc async [%m0] () : memref<128xf32>
    %m1 = gpu.memcpy async [%a1] %d1, %h1 : memref<128xf32>, memref<128xf32>
    %l = gpu.launch_func async [%m1] @zero_coop_kernels::@reverse_tiles
        blocks in (%c1, %c1, %c1) threads in (%threads, %c1, %c1)
        args(%d0 : memref<128xf32>, %d1 : memref<128xf32>)
    %b0 = gpu.memcpy async [%l] %h0, %d0 : memref<128xf32>, memref<128xf32>
    %f0 = gpu.dealloc async [%b0] %d0 : memref<128xf32>
    %b1 = gpu.memcpy async [%f0] %h1, %d1 : memref<128xf32>, memref<128xf32>
    %f1 = gpu.dealloc async [%b1] %d1 : memref<128xf32>
    gpu.wait [%f1]
    return
  }

  func.func @zero_coop_mma_bf16(%h0: memref<16x16xbf16>, %h1: memref<16x8xbf16>, %h2: memref<16x8xf32>, %h3: memref<16x8xf32>)
      attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
    %threads = arith.constant 32 : index
    %t0 = gpu.wait async
    %d0, %a0 = gpu.alloc async [%t0] () : memref<16x16xbf16>
    %m0 = gpu.memcpy async [%a0] %d0, %h0 : memref<16x16xbf16>, memref<16x16xbf16>
    %d1, %a1 = gpu.alloc async [%m0] () : memref<16x8xbf16>
    %m1 = gpu.memcpy async [%a1] %d1, %h1 : memref<16x8xbf16>, memref<16x8xbf16>
    %d2, %a2 = gpu.alloc async [%m1] () : memref<16x8xf32>
    %m2 = gpu.memcpy async [%a2] %d2, %h2 : memref<16x8xf32>, memref<16x8xf32>
    %d3, %a3 = gpu.alloc async [%m2] () : memref<16x8xf32>
    %m3 = gpu.memcpy async [%a3] %d3, %h3 : memref<16x8xf32>, memref<16x8xf32>
    %l = gpu.launch_func async [%m3] @zero_coop_kernels::@mma_bf16
        blocks in (%c1, %c1, %c1) threads in (%threads, %c1, %c1)
        args(%d0 : memref<16x16xbf16>, %d1 : memref<16x8xbf16>, %d2 : memref<16x8xf32>, %d3 : memref<16x8xf32>)
    %b0 = gpu.memcpy async [%l] %h0, %d0 : memref<16x16xbf16>, memref<16x16xbf16>
    %f0 = gpu.dealloc async [%b0] %d0 : memref<16x16xbf16>
    %b1 = gpu.memcpy async [%f0] %h1, %d1 : memref<16x8xbf16>, memref<16x8xbf16>
    %f1 = gpu.dealloc async [%b1] %d1 : memref<16x8xbf16>
    %b2 = gpu.memcpy async [%f1] %h2, %d2 : memref<16x8xf32>, memref<16x8xf32>
    %f2 = gpu.dealloc async [%b2] %d2 : memref<16x8xf32>
    %b3 = gpu.memcpy async [%f2] %h3, %d3 : memref<16x8xf32>, memref<16x8xf32>
    %f3 = gpu.dealloc async [%b3] %d3 : memref<16x8xf32>
    gpu.wait [%f3]
    return
  }

  func.func @zero_coop_mma_f16(%h0: memref<16x16xf16>, %h1: memref<16x8xf16>, %h2: memref<16x8xf32>, %h3: memref<16x8xf32>)
      attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
    %threads = arith.constant 32 : index
    %t0 = gpu.wait async
    %d0, %a0 = gpu.alloc async [%t0] () : memref<16x16xf16>
    %m0 = gpu.memcpy async [%a0] %d0, %h0 : memref<16x16xf16>, memref<16x16xf16>
    %d1, %a1 = gpu.alloc async [%m0] () : memref<16x8xf16>
    %m1 = gpu.memcpy async [%a1] %d1, %h1 : memref<16x8xf16>, memref<16x8xf16>
    %d2, %a2 = gpu.alloc async [%m1] () : memref<16x8xf32>
    %m2 = gpu.memcpy async [%a2] %d2, %h2 : memref<16x8xf32>, memref<16x8xf32>
    %d3, %a3 = gpu.alloc async [%m2] () : memref<16x8xf32>
    %m3 = gpu.memcpy async [%a3] %d3, %h3 : memref<16x8xf32>, memref<16x8xf32>
    %l = gpu.launch_func async [%m3] @zero_coop_kernels::@mma_f16
        blocks in (%c1, %c1, %c1) threads in (%threads, %c1, %c1)
        args(%d0 : memref<16x16xf16>, %d1 : memref<16x8xf16>, %d2 : memref<16x8xf32>, %d3 : memref<16x8xf32>)
    %b0 = gpu.memcpy async [%l] %h0, %d0 : memref<16x16xf16>, memref<16x16xf16>
    %f0 = gpu.dealloc async [%b0] %d0 : memref<16x16xf16>
    %b1 = gpu.memcpy async [%f0] %h1, %d1 : memref<16x8xf16>, memref<16x8xf16>
    %f1 = gpu.dealloc async [%b1] %d1 : memref<16x8xf16>
    %b2 = gpu.memcpy async [%f1] %h2, %d2 : memref<16x8xf32>, memref<16x8xf32>
    %f2 = gpu.dealloc async [%b2] %d2 : memref<16x8xf32>
    %b3 = gpu.memcpy async [%f2] %h3, %d3 : memref<16x8xf32>, memref<16x8xf32>
    %f3 = gpu.dealloc async [%b3] %d3 : memref<16x8xf32>
    gpu.wait [%f3]
    return
  }

  func.func @zero_coop_diverge_barrier(%h0: memref<64xf32>)
      attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
    %threads = arith.constant 64 : index
    %t0 = gpu.wait async
    %d0, %a0 = gpu.alloc async [%t0] () : memref<64xf32>
    %m0 = gpu.memcpy async [%a0] %d0, %h0 : memref<64xf32>, memref<64xf32>
    %l = gpu.launch_func async [%m0] @zero_coop_kernels::@diverge_barrier
        blocks in (%c1, %c1, %c1) threads in (%threads, %c1, %c1)
        args(%d0 : memref<64xf32>)
    %b0 = gpu.memcpy async [%l] %h0, %d0 : memref<64xf32>, memref<64xf32>
    %f0 = gpu.dealloc async [%b0] %d0 : memref<64xf32>
    gpu.wait [%f0]
    return
  }

  func.func @zero_coop_diverge_shuffle(%h0: memref<32xf32>)
      attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
    %threads = arith.constant 32 : index
    %t0 = gpu.wait async
    %d0, %a0 = gpu.alloc async [%t0] () : memref<32xf32>
    %m0 = gpu.memcpy async [%a0] %d0, %h0 : memref<32xf32>, memref<32xf32>
    %l = gpu.launch_func async [%m0] @zero_coop_kernels::@diverge_shuffle
        blocks in (%c1, %c1, %c1) threads in (%threads, %c1, %c1)
        args(%d0 : memref<32xf32>)
    %b0 = gpu.memcpy async [%l] %h0, %d0 : memref<32xf32>, memref<32xf32>
    %f0 = gpu.dealloc async [%b0] %d0 : memref<32xf32>
    gpu.wait [%f0]
    return
  }

  func.func @zero_coop_attention_causal(%h0: memref<2x2x128x64xbf16>, %h1: memref<2x2x128x64xbf16>, %h2: memref<2x2x128x64xbf16>, %h3: memref<2x2x128x64xbf16>, %h4: memref<2x2x128xf32>)
      attributes {llvm.emit_c_interface} {
    %t0 = gpu.wait async
    %d0, %a0 = gpu.alloc async [%t0] () : memref<2x2x128x64xbf16>
    %m0 = gpu.memcpy async [%a0] %d0, %h0 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %d1, %a1 = gpu.alloc async [%m0] () : memref<2x2x128x64xbf16>
    %m1 = gpu.memcpy async [%a1] %d1, %h1 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %d2, %a2 = gpu.alloc async [%m1] () : memref<2x2x128x64xbf16>
    %m2 = gpu.memcpy async [%a2] %d2, %h2 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %d3, %a3 = gpu.alloc async [%m2] () : memref<2x2x128x64xbf16>
    %m3 = gpu.memcpy async [%a3] %d3, %h3 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %d4, %a4 = gpu.alloc async [%m3] () : memref<2x2x128xf32>
    %m4 = gpu.memcpy async [%a4] %d4, %h4 : memref<2x2x128xf32>, memref<2x2x128xf32>
    gpu.wait [%m4]
    func.call @attention_causal(%d0, %d1, %d2, %d3, %d4) : (memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>, memref<2x2x128xf32>) -> ()
    %t1 = gpu.wait async
    %b0 = gpu.memcpy async [%t1] %h0, %d0 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %f0 = gpu.dealloc async [%b0] %d0 : memref<2x2x128x64xbf16>
    %b1 = gpu.memcpy async [%f0] %h1, %d1 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %f1 = gpu.dealloc async [%b1] %d1 : memref<2x2x128x64xbf16>
    %b2 = gpu.memcpy async [%f1] %h2, %d2 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %f2 = gpu.dealloc async [%b2] %d2 : memref<2x2x128x64xbf16>
    %b3 = gpu.memcpy async [%f2] %h3, %d3 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %f3 = gpu.dealloc async [%b3] %d3 : memref<2x2x128x64xbf16>
    %b4 = gpu.memcpy async [%f3] %h4, %d4 : memref<2x2x128xf32>, memref<2x2x128xf32>
    %f4 = gpu.dealloc async [%b4] %d4 : memref<2x2x128xf32>
    gpu.wait [%f4]
    return
  }

  func.func @zero_coop_attention_f16(%h0: memref<3x64x32xf16>, %h1: memref<3x192x32xf16>, %h2: memref<3x192x32xf16>, %h3: memref<3x64x32xf16>, %h4: memref<3x64xf32>)
      attributes {llvm.emit_c_interface} {
    %t0 = gpu.wait async
    %d0, %a0 = gpu.alloc async [%t0] () : memref<3x64x32xf16>
    %m0 = gpu.memcpy async [%a0] %d0, %h0 : memref<3x64x32xf16>, memref<3x64x32xf16>
    %d1, %a1 = gpu.alloc async [%m0] () : memref<3x192x32xf16>
    %m1 = gpu.memcpy async [%a1] %d1, %h1 : memref<3x192x32xf16>, memref<3x192x32xf16>
    %d2, %a2 = gpu.alloc async [%m1] () : memref<3x192x32xf16>
    %m2 = gpu.memcpy async [%a2] %d2, %h2 : memref<3x192x32xf16>, memref<3x192x32xf16>
    %d3, %a3 = gpu.alloc async [%m2] () : memref<3x64x32xf16>
    %m3 = gpu.memcpy async [%a3] %d3, %h3 : memref<3x64x32xf16>, memref<3x64x32xf16>
    %d4, %a4 = gpu.alloc async [%m3] () : memref<3x64xf32>
    %m4 = gpu.memcpy async [%a4] %d4, %h4 : memref<3x64xf32>, memref<3x64xf32>
    gpu.wait [%m4]
    func.call @attention_f16(%d0, %d1, %d2, %d3, %d4) : (memref<3x64x32xf16>, memref<3x192x32xf16>, memref<3x192x32xf16>, memref<3x64x32xf16>, memref<3x64xf32>) -> ()
    %t1 = gpu.wait async
    %b0 = gpu.memcpy async [%t1] %h0, %d0 : memref<3x64x32xf16>, memref<3x64x32xf16>
    %f0 = gpu.dealloc async [%b0] %d0 : memref<3x64x32xf16>
    %b1 = gpu.memcpy async [%f0] %h1, %d1 : memref<3x192x32xf16>, memref<3x192x32xf16>
    %f1 = gpu.dealloc async [%b1] %d1 : memref<3x192x32xf16>
    %b2 = gpu.memcpy async [%f1] %h2, %d2 : memref<3x192x32xf16>, memref<3x192x32xf16>
    %f2 = gpu.dealloc async [%b2] %d2 : memref<3x192x32xf16>
    %b3 = gpu.memcpy async [%f2] %h3, %d3 : memref<3x64x32xf16>, memref<3x64x32xf16>
    %f3 = gpu.dealloc async [%b3] %d3 : memref<3x64x32xf16>
    %b4 = gpu.memcpy async [%f3] %h4, %d4 : memref<3x64xf32>, memref<3x64xf32>
    %f4 = gpu.dealloc async [%b4] %d4 : memref<3x64xf32>
    gpu.wait [%f4]
    return
  }

  func.func @zero_coop_attention_grad_causal(%h0: memref<2x2x128x64xbf16>, %h1: memref<2x2x128x64xbf16>, %h2: memref<2x2x128x64xbf16>, %h3: memref<2x2x128x64xbf16>, %h4: memref<2x2x128xf32>, %h5: memref<2x2x128xf32>, %h6: memref<2x2x128x64xbf16>, %h7: memref<2x2x128x64xbf16>, %h8: memref<2x2x128x64xbf16>)
      attributes {llvm.emit_c_interface} {
    %t0 = gpu.wait async
    %d0, %a0 = gpu.alloc async [%t0] () : memref<2x2x128x64xbf16>
    %m0 = gpu.memcpy async [%a0] %d0, %h0 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %d1, %a1 = gpu.alloc async [%m0] () : memref<2x2x128x64xbf16>
    %m1 = gpu.memcpy async [%a1] %d1, %h1 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %d2, %a2 = gpu.alloc async [%m1] () : memref<2x2x128x64xbf16>
    %m2 = gpu.memcpy async [%a2] %d2, %h2 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %d3, %a3 = gpu.alloc async [%m2] () : memref<2x2x128x64xbf16>
    %m3 = gpu.memcpy async [%a3] %d3, %h3 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %d4, %a4 = gpu.alloc async [%m3] () : memref<2x2x128xf32>
    %m4 = gpu.memcpy async [%a4] %d4, %h4 : memref<2x2x128xf32>, memref<2x2x128xf32>
    %d5, %a5 = gpu.alloc async [%m4] () : memref<2x2x128xf32>
    %m5 = gpu.memcpy async [%a5] %d5, %h5 : memref<2x2x128xf32>, memref<2x2x128xf32>
    %d6, %a6 = gpu.alloc async [%m5] () : memref<2x2x128x64xbf16>
    %m6 = gpu.memcpy async [%a6] %d6, %h6 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %d7, %a7 = gpu.alloc async [%m6] () : memref<2x2x128x64xbf16>
    %m7 = gpu.memcpy async [%a7] %d7, %h7 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %d8, %a8 = gpu.alloc async [%m7] () : memref<2x2x128x64xbf16>
    %m8 = gpu.memcpy async [%a8] %d8, %h8 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    gpu.wait [%m8]
    func.call @attention_grad_causal(%d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7, %d8) : (memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>, memref<2x2x128xf32>, memref<2x2x128xf32>, memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>) -> ()
    %t1 = gpu.wait async
    %b0 = gpu.memcpy async [%t1] %h0, %d0 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %f0 = gpu.dealloc async [%b0] %d0 : memref<2x2x128x64xbf16>
    %b1 = gpu.memcpy async [%f0] %h1, %d1 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %f1 = gpu.dealloc async [%b1] %d1 : memref<2x2x128x64xbf16>
    %b2 = gpu.memcpy async [%f1] %h2, %d2 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %f2 = gpu.dealloc async [%b2] %d2 : memref<2x2x128x64xbf16>
    %b3 = gpu.memcpy async [%f2] %h3, %d3 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %f3 = gpu.dealloc async [%b3] %d3 : memref<2x2x128x64xbf16>
    %b4 = gpu.memcpy async [%f3] %h4, %d4 : memref<2x2x128xf32>, memref<2x2x128xf32>
    %f4 = gpu.dealloc async [%b4] %d4 : memref<2x2x128xf32>
    %b5 = gpu.memcpy async [%f4] %h5, %d5 : memref<2x2x128xf32>, memref<2x2x128xf32>
    %f5 = gpu.dealloc async [%b5] %d5 : memref<2x2x128xf32>
    %b6 = gpu.memcpy async [%f5] %h6, %d6 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %f6 = gpu.dealloc async [%b6] %d6 : memref<2x2x128x64xbf16>
    %b7 = gpu.memcpy async [%f6] %h7, %d7 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %f7 = gpu.dealloc async [%b7] %d7 : memref<2x2x128x64xbf16>
    %b8 = gpu.memcpy async [%f7] %h8, %d8 : memref<2x2x128x64xbf16>, memref<2x2x128x64xbf16>
    %f8 = gpu.dealloc async [%b8] %d8 : memref<2x2x128x64xbf16>
    gpu.wait [%f8]
    return
  }

  func.func @zero_coop_attention_grad_f16(%h0: memref<3x64x32xf16>, %h1: memref<3x192x32xf16>, %h2: memref<3x192x32xf16>, %h3: memref<3x64x32xf16>, %h4: memref<3x64xf32>, %h5: memref<3x64xf32>, %h6: memref<3x64x32xf16>, %h7: memref<3x192x32xf16>, %h8: memref<3x192x32xf16>)
      attributes {llvm.emit_c_interface} {
    %t0 = gpu.wait async
    %d0, %a0 = gpu.alloc async [%t0] () : memref<3x64x32xf16>
    %m0 = gpu.memcpy async [%a0] %d0, %h0 : memref<3x64x32xf16>, memref<3x64x32xf16>
    %d1, %a1 = gpu.alloc async [%m0] () : memref<3x192x32xf16>
    %m1 = gpu.memcpy async [%a1] %d1, %h1 : memref<3x192x32xf16>, memref<3x192x32xf16>
    %d2, %a2 = gpu.alloc async [%m1] () : memref<3x192x32xf16>
    %m2 = gpu.memcpy async [%a2] %d2, %h2 : memref<3x192x32xf16>, memref<3x192x32xf16>
    %d3, %a3 = gpu.alloc async [%m2] () : memref<3x64x32xf16>
    %m3 = gpu.memcpy async [%a3] %d3, %h3 : memref<3x64x32xf16>, memref<3x64x32xf16>
    %d4, %a4 = gpu.alloc async [%m3] () : memref<3x64xf32>
    %m4 = gpu.memcpy async [%a4] %d4, %h4 : memref<3x64xf32>, memref<3x64xf32>
    %d5, %a5 = gpu.alloc async [%m4] () : memref<3x64xf32>
    %m5 = gpu.memcpy async [%a5] %d5, %h5 : memref<3x64xf32>, memref<3x64xf32>
    %d6, %a6 = gpu.alloc async [%m5] () : memref<3x64x32xf16>
    %m6 = gpu.memcpy async [%a6] %d6, %h6 : memref<3x64x32xf16>, memref<3x64x32xf16>
    %d7, %a7 = gpu.alloc async [%m6] () : memref<3x192x32xf16>
    %m7 = gpu.memcpy async [%a7] %d7, %h7 : memref<3x192x32xf16>, memref<3x192x32xf16>
    %d8, %a8 = gpu.alloc async [%m7] () : memref<3x192x32xf16>
    %m8 = gpu.memcpy async [%a8] %d8, %h8 : memref<3x192x32xf16>, memref<3x192x32xf16>
    gpu.wait [%m8]
    func.call @attention_grad_f16(%d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7, %d8) : (memref<3x64x32xf16>, memref<3x192x32xf16>, memref<3x192x32xf16>, memref<3x64x32xf16>, memref<3x64xf32>, memref<3x64xf32>, memref<3x64x32xf16>, memref<3x192x32xf16>, memref<3x192x32xf16>) -> ()
    %t1 = gpu.wait async
    %b0 = gpu.memcpy async [%t1] %h0, %d0 : memref<3x64x32xf16>, memref<3x64x32xf16>
    %f0 = gpu.dealloc async [%b0] %d0 : memref<3x64x32xf16>
    %b1 = gpu.memcpy async [%f0] %h1, %d1 : memref<3x192x32xf16>, memref<3x192x32xf16>
    %f1 = gpu.dealloc async [%b1] %d1 : memref<3x192x32xf16>
    %b2 = gpu.memcpy async [%f1] %h2, %d2 : memref<3x192x32xf16>, memref<3x192x32xf16>
    %f2 = gpu.dealloc async [%b2] %d2 : memref<3x192x32xf16>
    %b3 = gpu.memcpy async [%f2] %h3, %d3 : memref<3x64x32xf16>, memref<3x64x32xf16>
    %f3 = gpu.dealloc async [%b3] %d3 : memref<3x64x32xf16>
    %b4 = gpu.memcpy async [%f3] %h4, %d4 : memref<3x64xf32>, memref<3x64xf32>
    %f4 = gpu.dealloc async [%b4] %d4 : memref<3x64xf32>
    %b5 = gpu.memcpy async [%f4] %h5, %d5 : memref<3x64xf32>, memref<3x64xf32>
    %f5 = gpu.dealloc async [%b5] %d5 : memref<3x64xf32>
    %b6 = gpu.memcpy async [%f5] %h6, %d6 : memref<3x64x32xf16>, memref<3x64x32xf16>
    %f6 = gpu.dealloc async [%b6] %d6 : memref<3x64x32xf16>
    %b7 = gpu.memcpy async [%f6] %h7, %d7 : memref<3x192x32xf16>, memref<3x192x32xf16>
    %f7 = gpu.dealloc async [%b7] %d7 : memref<3x192x32xf16>
    %b8 = gpu.memcpy async [%f7] %h8, %d8 : memref<3x192x32xf16>, memref<3x192x32xf16>
    %f8 = gpu.dealloc async [%b8] %d8 : memref<3x192x32xf16>
    gpu.wait [%f8]
    return
  }

  func.func @zero_coop_attention_heads(%h0: memref<2x128x3x3x32xbf16>, %h1: memref<2x128x3x32xbf16>, %h2: memref<2x128x3xf32>)
      attributes {llvm.emit_c_interface} {
    %t0 = gpu.wait async
    %d0, %a0 = gpu.alloc async [%t0] () : memref<2x128x3x3x32xbf16>
    %m0 = gpu.memcpy async [%a0] %d0, %h0 : memref<2x128x3x3x32xbf16>, memref<2x128x3x3x32xbf16>
    %d1, %a1 = gpu.alloc async [%m0] () : memref<2x128x3x32xbf16>
    %m1 = gpu.memcpy async [%a1] %d1, %h1 : memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>
    %d2, %a2 = gpu.alloc async [%m1] () : memref<2x128x3xf32>
    %m2 = gpu.memcpy async [%a2] %d2, %h2 : memref<2x128x3xf32>, memref<2x128x3xf32>
    gpu.wait [%m2]
    %x0 = memref.subview %d0[0, 0, 0, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>
    %x1 = memref.subview %d0[0, 0, 1, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>
    %x2 = memref.subview %d0[0, 0, 2, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>
    func.call @attention_heads(%x0, %x1, %x2, %d1, %d2) : (memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>, memref<2x128x3x32xbf16>, memref<2x128x3xf32>) -> ()
    %t1 = gpu.wait async
    %b0 = gpu.memcpy async [%t1] %h0, %d0 : memref<2x128x3x3x32xbf16>, memref<2x128x3x3x32xbf16>
    %f0 = gpu.dealloc async [%b0] %d0 : memref<2x128x3x3x32xbf16>
    %b1 = gpu.memcpy async [%f0] %h1, %d1 : memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>
    %f1 = gpu.dealloc async [%b1] %d1 : memref<2x128x3x32xbf16>
    %b2 = gpu.memcpy async [%f1] %h2, %d2 : memref<2x128x3xf32>, memref<2x128x3xf32>
    %f2 = gpu.dealloc async [%b2] %d2 : memref<2x128x3xf32>
    gpu.wait [%f2]
    return
  }

  func.func @zero_coop_attention_grad_heads(%h0: memref<2x128x3x3x32xbf16>, %h1: memref<2x128x3x32xbf16>, %h2: memref<2x128x3xf32>, %h3: memref<2x128x3xf32>, %h4: memref<2x128x3x3x32xbf16>)
      attributes {llvm.emit_c_interface} {
    %t0 = gpu.wait async
    %d0, %a0 = gpu.alloc async [%t0] () : memref<2x128x3x3x32xbf16>
    %m0 = gpu.memcpy async [%a0] %d0, %h0 : memref<2x128x3x3x32xbf16>, memref<2x128x3x3x32xbf16>
    %d1, %a1 = gpu.alloc async [%m0] () : memref<2x128x3x32xbf16>
    %m1 = gpu.memcpy async [%a1] %d1, %h1 : memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>
    %d2, %a2 = gpu.alloc async [%m1] () : memref<2x128x3xf32>
    %m2 = gpu.memcpy async [%a2] %d2, %h2 : memref<2x128x3xf32>, memref<2x128x3xf32>
    %d3, %a3 = gpu.alloc async [%m2] () : memref<2x128x3xf32>
    %m3 = gpu.memcpy async [%a3] %d3, %h3 : memref<2x128x3xf32>, memref<2x128x3xf32>
    %d4, %a4 = gpu.alloc async [%m3] () : memref<2x128x3x3x32xbf16>
    %m4 = gpu.memcpy async [%a4] %d4, %h4 : memref<2x128x3x3x32xbf16>, memref<2x128x3x3x32xbf16>
    gpu.wait [%m4]
    %x0 = memref.subview %d0[0, 0, 0, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>
    %x1 = memref.subview %d0[0, 0, 1, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>
    %x2 = memref.subview %d0[0, 0, 2, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>
    %g0 = memref.subview %d4[0, 0, 0, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>
    %g1 = memref.subview %d4[0, 0, 1, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>
    %g2 = memref.subview %d4[0, 0, 2, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>
    func.call @attention_grad_heads(%x0, %x1, %x2, %d1, %d2, %d3, %g0, %g1, %g2) : (memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>, memref<2x128x3x32xbf16>, memref<2x128x3xf32>, memref<2x128x3xf32>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>) -> ()
    %t1 = gpu.wait async
    %b0 = gpu.memcpy async [%t1] %h0, %d0 : memref<2x128x3x3x32xbf16>, memref<2x128x3x3x32xbf16>
    %f0 = gpu.dealloc async [%b0] %d0 : memref<2x128x3x3x32xbf16>
    %b1 = gpu.memcpy async [%f0] %h1, %d1 : memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>
    %f1 = gpu.dealloc async [%b1] %d1 : memref<2x128x3x32xbf16>
    %b2 = gpu.memcpy async [%f1] %h2, %d2 : memref<2x128x3xf32>, memref<2x128x3xf32>
    %f2 = gpu.dealloc async [%b2] %d2 : memref<2x128x3xf32>
    %b3 = gpu.memcpy async [%f2] %h3, %d3 : memref<2x128x3xf32>, memref<2x128x3xf32>
    %f3 = gpu.dealloc async [%b3] %d3 : memref<2x128x3xf32>
    %b4 = gpu.memcpy async [%f3] %h4, %d4 : memref<2x128x3x3x32xbf16>, memref<2x128x3x3x32xbf16>
    %f4 = gpu.dealloc async [%b4] %d4 : memref<2x128x3x3x32xbf16>
    gpu.wait [%f4]
    return
  }

  func.func @zero_coop_attention_heads_dropout(%h0: memref<2x128x3x3x32xbf16>, %h1: memref<2x128x3x32xbf16>, %h2: memref<2x128x3xf32>, %step: i64, %mb: i64)
      attributes {llvm.emit_c_interface} {
    %t0 = gpu.wait async
    %d0, %a0 = gpu.alloc async [%t0] () : memref<2x128x3x3x32xbf16>
    %m0 = gpu.memcpy async [%a0] %d0, %h0 : memref<2x128x3x3x32xbf16>, memref<2x128x3x3x32xbf16>
    %d1, %a1 = gpu.alloc async [%m0] () : memref<2x128x3x32xbf16>
    %m1 = gpu.memcpy async [%a1] %d1, %h1 : memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>
    %d2, %a2 = gpu.alloc async [%m1] () : memref<2x128x3xf32>
    %m2 = gpu.memcpy async [%a2] %d2, %h2 : memref<2x128x3xf32>, memref<2x128x3xf32>
    gpu.wait [%m2]
    %x0 = memref.subview %d0[0, 0, 0, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>
    %x1 = memref.subview %d0[0, 0, 1, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>
    %x2 = memref.subview %d0[0, 0, 2, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>
    func.call @attention_heads_dropout(%x0, %x1, %x2, %d1, %d2, %step, %mb) : (memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>, memref<2x128x3x32xbf16>, memref<2x128x3xf32>, i64, i64) -> ()
    %t1 = gpu.wait async
    %b0 = gpu.memcpy async [%t1] %h0, %d0 : memref<2x128x3x3x32xbf16>, memref<2x128x3x3x32xbf16>
    %f0 = gpu.dealloc async [%b0] %d0 : memref<2x128x3x3x32xbf16>
    %b1 = gpu.memcpy async [%f0] %h1, %d1 : memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>
    %f1 = gpu.dealloc async [%b1] %d1 : memref<2x128x3x32xbf16>
    %b2 = gpu.memcpy async [%f1] %h2, %d2 : memref<2x128x3xf32>, memref<2x128x3xf32>
    %f2 = gpu.dealloc async [%b2] %d2 : memref<2x128x3xf32>
    gpu.wait [%f2]
    return
  }

  func.func @zero_coop_attention_grad_heads_dropout(%h0: memref<2x128x3x3x32xbf16>, %h1: memref<2x128x3x32xbf16>, %h2: memref<2x128x3xf32>, %h3: memref<2x128x3xf32>, %h4: memref<2x128x3x3x32xbf16>, %step: i64, %mb: i64)
      attributes {llvm.emit_c_interface} {
    %t0 = gpu.wait async
    %d0, %a0 = gpu.alloc async [%t0] () : memref<2x128x3x3x32xbf16>
    %m0 = gpu.memcpy async [%a0] %d0, %h0 : memref<2x128x3x3x32xbf16>, memref<2x128x3x3x32xbf16>
    %d1, %a1 = gpu.alloc async [%m0] () : memref<2x128x3x32xbf16>
    %m1 = gpu.memcpy async [%a1] %d1, %h1 : memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>
    %d2, %a2 = gpu.alloc async [%m1] () : memref<2x128x3xf32>
    %m2 = gpu.memcpy async [%a2] %d2, %h2 : memref<2x128x3xf32>, memref<2x128x3xf32>
    %d3, %a3 = gpu.alloc async [%m2] () : memref<2x128x3xf32>
    %m3 = gpu.memcpy async [%a3] %d3, %h3 : memref<2x128x3xf32>, memref<2x128x3xf32>
    %d4, %a4 = gpu.alloc async [%m3] () : memref<2x128x3x3x32xbf16>
    %m4 = gpu.memcpy async [%a4] %d4, %h4 : memref<2x128x3x3x32xbf16>, memref<2x128x3x3x32xbf16>
    gpu.wait [%m4]
    %x0 = memref.subview %d0[0, 0, 0, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>
    %x1 = memref.subview %d0[0, 0, 1, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>
    %x2 = memref.subview %d0[0, 0, 2, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>
    %g0 = memref.subview %d4[0, 0, 0, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>
    %g1 = memref.subview %d4[0, 0, 1, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>
    %g2 = memref.subview %d4[0, 0, 2, 0, 0] [2, 128, 1, 3, 32] [1, 1, 1, 1, 1] : memref<2x128x3x3x32xbf16> to memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>
    func.call @attention_grad_heads_dropout(%x0, %x1, %x2, %d1, %d2, %d3, %g0, %g1, %g2, %step, %mb) : (memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>, memref<2x128x3x32xbf16>, memref<2x128x3xf32>, memref<2x128x3xf32>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 0>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>, i64, i64) -> ()
    %t1 = gpu.wait async
    %b0 = gpu.memcpy async [%t1] %h0, %d0 : memref<2x128x3x3x32xbf16>, memref<2x128x3x3x32xbf16>
    %f0 = gpu.dealloc async [%b0] %d0 : memref<2x128x3x3x32xbf16>
    %b1 = gpu.memcpy async [%f0] %h1, %d1 : memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>
    %f1 = gpu.dealloc async [%b1] %d1 : memref<2x128x3x32xbf16>
    %b2 = gpu.memcpy async [%f1] %h2, %d2 : memref<2x128x3xf32>, memref<2x128x3xf32>
    %f2 = gpu.dealloc async [%b2] %d2 : memref<2x128x3xf32>
    %b3 = gpu.memcpy async [%f2] %h3, %d3 : memref<2x128x3xf32>, memref<2x128x3xf32>
    %f3 = gpu.dealloc async [%b3] %d3 : memref<2x128x3xf32>
    %b4 = gpu.memcpy async [%f3] %h4, %d4 : memref<2x128x3x3x32xbf16>, memref<2x128x3x3x32xbf16>
    %f4 = gpu.dealloc async [%b4] %d4 : memref<2x128x3x3x32xbf16>
    gpu.wait [%f4]
    return
  }
}
