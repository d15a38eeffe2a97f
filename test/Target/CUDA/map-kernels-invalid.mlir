// RUN: zero-opt %s --zero-gpu-map-kernels=threads-per-block=100 -verify-diagnostics

// expected-error @below {{threads-per-block is 100; give a power of two from 32 to 1024}}
module {
}
