// The data movement of the optimised library: TLOAD / TSTORE between tensors and tiles,
// region copies (TMOV, TEXTRACT, copies out of tiles read in place) and transposes, and the
// streaming stores of large TSTOREs.
//
// Generated kernels do not compile these: they are compiled once with the package, once per
// x86-64 level (x86-64, -v3, -v4: src/engines/native/support/data_movement.cpp; a package
// built by another compiler than GCC compiles this header like a kernel on first use), and a
// kernel calls them through the table its frame carries (pto_frame::support), the one of its
// compile target's level. They are most of what g++ spends on a small kernel (a hello-world
// kernel: 0.23 -> 0.13 s), and they are memory-bound: one indirect call per tile copy costs
// nothing beside the copy. Copies are exact, so a kernel's result does not depend on the
// level of the table it is given.
#pragma once
#include "pypto/isa/optimized/tile_ops.h"

namespace pto_opt {

// d[j][i] = s[i][j] for a 16 x 16 block of 2- or 4-byte elements (row strides in elements):
// four perfect shuffles of the 16 rows (each pairs row i with row i + 8, interleaving their
// elements) move element (i, j) to (j, i).
template <class E>
inline void transpose16(E* d, i64 drs, const E* s, i64 srs) {
  typedef E v16 __attribute__((vector_size(16 * sizeof(E))));
  typedef E v16_u __attribute__((vector_size(16 * sizeof(E)), aligned(sizeof(E)), may_alias));
  v16 x[16], y[16];
  for (int i = 0; i < 16; ++i) x[i] = *reinterpret_cast<const v16_u*>(s + i * srs);
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 8; ++i) {
      y[2 * i] = __builtin_shufflevector(x[i], x[i + 8], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      y[2 * i + 1] = __builtin_shufflevector(x[i], x[i + 8], 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    }
    for (int i = 0; i < 16; ++i) x[i] = y[i];
  }
  for (int i = 0; i < 16; ++i) *reinterpret_cast<v16_u*>(d + i * drs) = x[i];
}

// d (rows x cols, row stride drs) = the transpose of s (element (r, c) at s[c * scs + r]):
// whole 16 x 16 blocks vectorised, the edges element by element.
template <class E>
inline void transpose_region(E* d, i64 drs, const E* s, i64 scs, i64 rows, i64 cols) {
  const i64 rb = rows / 16 * 16, cb = cols / 16 * 16;
  for (i64 r0 = 0; r0 < rb; r0 += 16)
    for (i64 c0 = 0; c0 < cb; c0 += 16) transpose16(d + r0 * drs + c0, drs, s + c0 * scs + r0, scs);
  for (i64 r = 0; r < rows; ++r)
    for (i64 c = r < rb ? cb : 0; c < cols; ++c) d[r * drs + c] = s[c * scs + r];
}

// Copies a rows x cols region of `esize`-byte elements (strides in elements).
inline void copy_region(unsigned char* d, i64 drs, i64 dcs, const unsigned char* s, i64 srs, i64 scs, i64 rows, i64 cols,
                        int esize) {
  if (dcs == 1 && srs == 1 && scs != 1 && rows >= 16 && cols >= 16) {  // a transpose (TTRANS, transposed views)
    if (esize == 2) {
      transpose_region(reinterpret_cast<unsigned short*>(d), drs, reinterpret_cast<const unsigned short*>(s), scs,
                       rows, cols);
      return;
    }
    if (esize == 4) {
      transpose_region(reinterpret_cast<unsigned*>(d), drs, reinterpret_cast<const unsigned*>(s), scs, rows, cols);
      return;
    }
  }
  for (i64 r = 0; r < rows; ++r) {
    unsigned char* dr = d + r * drs * esize;
    const unsigned char* sr = s + r * srs * esize;
    if (dcs == 1 && scs == 1) {
      __builtin_memcpy(dr, sr, cols * esize);
    } else {
      for (i64 c = 0; c < cols; ++c) __builtin_memcpy(dr + c * dcs * esize, sr + c * scs * esize, esize);
    }
  }
}

// Streaming stores for TSTORE into large tensors: a tensor of more than kStreamBytes is not
// read back from the cache by the task that writes it (it does not fit the CPU's caches
// beside the other operands), so rows of at least kStreamRowBytes contiguous bytes go out with
// non-temporal stores, which skip reading each destination line into the cache first (a
// third of the memory traffic of a streaming add). Other stores copy through the cache.
constexpr i64 kStreamBytes = i64(8) << 20, kStreamRowBytes = 1024;
inline i64 tensor_bytes(const pto_tensor& t) {
  i64 n = t.elem_bytes;
  for (int d = 0; d < t.rank; ++d) n *= t.shape[d];
  return n;
}
#if defined(__AVX__)
inline void stream_row(unsigned char* d, const unsigned char* s, i64 bytes) {
  const i64 head = (-reinterpret_cast<long long>(d)) & (sizeof(vf) - 1);
  __builtin_memcpy(d, s, head);
  i64 i = head;
  for (; i + static_cast<i64>(sizeof(vf)) <= bytes; i += sizeof(vf)) {
    vf v;
    __builtin_memcpy(&v, s + i, sizeof v);
#if defined(__AVX512F__)
    __builtin_ia32_movntps512(reinterpret_cast<float*>(d + i), v);
#else
    __builtin_ia32_movntps256(reinterpret_cast<float*>(d + i), v);
#endif
  }
  __builtin_memcpy(d + i, s + i, bytes - i);
}
inline bool stream_region(unsigned char* d, i64 drs, i64 dcs, const unsigned char* s, i64 srs, i64 rows, i64 cols,
                          int esize, i64 total_bytes) {
  if (dcs != 1 || cols * esize < kStreamRowBytes || total_bytes <= kStreamBytes) return false;
  for (i64 r = 0; r < rows; ++r) stream_row(d + r * drs * esize, s + r * srs * esize, cols * esize);
  __builtin_ia32_sfence();  // the stores are visible before the task is reported done
  return true;
}
#define PTO_OPT_STREAM_PATH "movnt"
#else
inline bool stream_region(unsigned char*, i64, i64, const unsigned char*, i64, i64, i64, int, i64) { return false; }
#define PTO_OPT_STREAM_PATH "plain"
#endif

// TLOAD: tile (rows x cols at `tile`) valid region from tensor t at offsets; fp32 pads
// fill the rest when `pad_mode` is 1 (value `pad`).
inline bool tload(unsigned char* tile, i64 cols, i64 rows, i64 vr, i64 vc, const pto_tensor& t, const i64* off,
                  int noff, bool has_pad, float pad, bool fold = false, int row_dim = -1, int col_dim = -1) {
  unsigned char* base;
  i64 rs, cs;
  if (!window(t, off, noff, vr, vc, &base, &rs, &cs, fold, row_dim, col_dim)) return false;
  copy_region(tile, cols, 1, base, rs, cs, vr, vc, t.elem_bytes);
  if (has_pad) {
    float* f = reinterpret_cast<float*>(tile);
    if (vc < cols) fill(f + vc, cols, pad, vr, cols - vc);
    if (vr < rows) fill(f + vr * cols, cols, pad, rows - vr, cols);
  }
  return true;
}

// TSTORE: tensor t at offsets = tile's valid region (atomic: add, fp32).
inline bool tstore(const pto_tensor& t, const i64* off, int noff, const unsigned char* tile, i64 cols, i64 vr, i64 vc,
                   bool atomic_add, bool fold = false, int row_dim = -1, int col_dim = -1) {
  unsigned char* base;
  i64 rs, cs;
  if (!window(t, off, noff, vr, vc, &base, &rs, &cs, fold, row_dim, col_dim)) return false;
  if (!atomic_add) {
    if (!stream_region(base, rs, cs, tile, cols, vr, vc, t.elem_bytes, tensor_bytes(t)))
      copy_region(base, rs, cs, tile, cols, 1, vr, vc, t.elem_bytes);
    return true;
  }
  if (cs != 1) return false;
  // Each add is one compare-and-swap on the element's bits: tasks adding into one tensor at
  // the same time (pl.manual_scope) never lose an add.
  unsigned* g = reinterpret_cast<unsigned*>(base);
  const float* s = reinterpret_cast<const float*>(tile);
  for (i64 r = 0; r < vr; ++r)
    for (i64 c = 0; c < vc; ++c) {
      unsigned* w = g + r * rs + c;
      unsigned old = __atomic_load_n(w, __ATOMIC_RELAXED), next;
      do {
        float f;
        __builtin_memcpy(&f, &old, 4);
        f += s[r * cols + c];
        __builtin_memcpy(&next, &f, 4);
      } while (!__atomic_compare_exchange_n(w, &old, next, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    }
  return true;
}

}  // namespace pto_opt
