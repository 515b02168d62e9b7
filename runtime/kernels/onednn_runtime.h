// What every oneDNN primitive call of the kernels shares: the CPU engine, a stream and scratch
// memory per thread, and the one-OpenMP-thread policy. Kernel-internal (includes oneDNN).
//
// Threading: Debian's oneDNN parallelizes with OpenMP. A primitive fixes its thread count when it
// is created (omp_get_max_threads of the creating thread), and its helpers read the calling
// thread's count. Our pool splits the work into one block per thread, and each thread that
// creates or calls a primitive is set to one OpenMP thread, so no OpenMP team ever runs beside
// the pool. Measured on 2 cores (docs/BENCHMARKS.md, "bf16 GEMM"): a 2-thread OpenMP primitive
// alone is as fast as the pool's split on the GPT's 4096-row products and up to 1.3x faster on
// the MLP's 128-row ones, but its idle thread spins after each call and took a core from the
// pool's next parallel work (the pool's split then ran at 1-thread speed).
#pragma once
#include <cstddef>
#include <dnnl.hpp>

namespace lt::rt::onednn {

const dnnl::engine& cpu_engine();

/// This thread's stream (in-order, on cpu_engine).
dnnl::stream& thread_stream();

/// Sets the calling thread to one OpenMP thread, once per thread (see the top of this file). Call
/// it before creating or running a primitive.
void use_one_omp_thread();

/// Scratch memory for this thread's primitive runs, grown as needed, 64-byte aligned. Valid until
/// the thread's next call.
void* scratchpad(size_t bytes);

}  // namespace lt::rt::onednn
