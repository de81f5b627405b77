// The calling convention between the native engine and the C++ it generates for a kernel:
// a plain C frame (tensors, scalar arguments, the core's buffers, a scratch area) and the
// callback that runs one instruction through the reference library. Header-only; includes
// only the include-free base/scalar_ops.h.
#pragma once
#include "pypto/base/scalar_ops.h"

extern "C" {

// A global tensor as the generated code sees it: strided, strides in elements.
struct pto_tensor {
  unsigned char* data;
  const long long* shape;
  const long long* strides;
  int rank;
  int elem_bytes;
};

// The data movement a kernel calls instead of compiling it (optimized/data_movement.h, built
// with the package once per x86-64 level): copy_region copies a rows x cols region of
// esize-byte elements (strides in elements); tload / tstore are TLOAD / TSTORE's copies
// (false: out of bounds, the reference reports it). stream_path names the store path.
struct pto_support {
  void (*copy_region)(unsigned char* d, long long drs, long long dcs, const unsigned char* s, long long srs,
                      long long scs, long long rows, long long cols, int esize);
  bool (*tload)(unsigned char* tile, long long cols, long long rows, long long vr, long long vc, const pto_tensor& t,
                const long long* off, int noff, bool has_pad, float pad, bool fold, int row_dim, int col_dim);
  bool (*tstore)(const pto_tensor& t, const long long* off, int noff, const unsigned char* tile, long long cols,
                 long long vr, long long vc, bool atomic_add, bool fold, int row_dim, int col_dim);
  const char* stream_path;
};

struct pto_frame {
  const pto_tensor* tensors;        // indexed by kernel parameter (scalar params: unused entries)
  const long long* int_args;        // scalar parameters in order, as integers
  const double* float_args;         // ... and as doubles
  unsigned char* buffers[7];        // the core's buffer of each MemorySpace (DDR: null)
  unsigned char* scratch;           // 64-byte aligned scratch (matmul packing)
  long long scratch_bytes;
  void* host;
  // Runs instruction `pc` of the kernel through the reference library with the current
  // registers (which it may update: kScalarRead). Throws (a C++ exception) on errors.
  // pc -1: the run was interrupted (`cancel` reads true); throws the cancellation.
  void (*fallback)(void* host, int pc, long long* int_regs, double* float_regs);
  // The run's interrupt flag (a std::atomic<bool>, read at every loop iteration); never null.
  const bool* cancel;
  // The data movement of the kernel's compile target (never null).
  const pto_support* support;
};

typedef void (*pto_kernel_fn)(const pto_frame* frame);
}

namespace pto_opt {

// The scalar unit's arithmetic (one definition: base/scalar_ops.h).
using pypto::scalar::float_floor_div;
using pypto::scalar::float_mod;
using pypto::scalar::int_floor_div;
using pypto::scalar::int_floor_mod;
// Whether the run was interrupted (Ctrl-C): the generated code stops at the next iteration.
inline bool cancelled(const pto_frame* f) { return __atomic_load_n(f->cancel, __ATOMIC_RELAXED); }
inline bool loop_continues(long long v, long long stop, long long step) { return step > 0 ? v < stop : v > stop; }
// A float scalar as an integer one: truncated, saturated, NaN as 0 (pypto::float_to_int, base/scalar.h).
inline long long to_int(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775808.0) return 9223372036854775807LL;
  if (v < -9223372036854775808.0) return -9223372036854775807LL - 1;
  return static_cast<long long>(v);
}

}  // namespace pto_opt
