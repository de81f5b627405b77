// Vector tile operations of the optimised library: elementwise, tile-scalar, unary,
// row/column reductions and broadcasts, fills and conversions on fp32, fp16 and bf16 tiles
// (the element type T is float, f16 or bf16; half-precision elements compute in fp32, see
// half.h), the tensor windows of TLOAD / TSTORE (their copies: data_movement.h), and
// compare / select with packed masks (several element types). Tiles are row-major (pointer + row stride in elements);
// every function covers a rows x cols region.
// Functions that check something return false to ask for the reference path (which reports
// the error in the reference's words).
#pragma once
#include "pypto/isa/optimized/abi.h"
#include "pypto/isa/optimized/half.h"
#include "pypto/isa/optimized/vec.h"

namespace pto_opt {

typedef long long i64;

// ---- operations, each usable on vf and float ------------------------------------------
struct Add { template <class T> T operator()(T a, T b) const { return a + b; } };
struct Sub { template <class T> T operator()(T a, T b) const { return a - b; } };
struct Mul { template <class T> T operator()(T a, T b) const { return a * b; } };
struct Div { template <class T> T operator()(T a, T b) const { return a / b; } };
struct Max {
  vf operator()(vf a, vf b) const { return vmax(a, b); }
  float operator()(float a, float b) const { return smax(a, b); }
};
struct Min {
  vf operator()(vf a, vf b) const { return vmin(a, b); }
  float operator()(float a, float b) const { return smin(a, b); }
};
struct ExpDif {  // exp of the difference rounded to fp32 (the reference's order)
  vf operator()(vf a, vf b) const { return vexp(a - b); }
  static double ref(float a, float b) { return __builtin_exp(static_cast<double>(a - b)); }
};
struct Leaky { vf operator()(vf a, vf s) const { return a > 0.0f ? a : a * s; } };

struct Abs { vf operator()(vf a) const { return as_float(as_int(a) & 0x7fffffff); } };  // |-0| = +0
struct Neg { vf operator()(vf a) const { return -a; } };
struct Relu { vf operator()(vf a) const { return vmax(a, splat(0.0f)); } };  // NaN stays NaN, as in TMAX
// `ref`: the reference's double result of one element, for the ops that are not correctly
// rounded in fp32 (half.h: narrow_op).
struct Exp {
  vf operator()(vf a) const { return vexp(a); }
  static double ref(float a) { return __builtin_exp(static_cast<double>(a)); }
};
struct Log {
  vf operator()(vf a) const { return vlog(a); }
  static double ref(float a) { return __builtin_log(static_cast<double>(a)); }
};
#if defined(__AVX512F__)
inline vf vsqrt(vf a) { return __builtin_ia32_sqrtps512_mask(a, a, -1, 4); }
#elif defined(__AVX__)
inline vf vsqrt(vf a) { return __builtin_ia32_sqrtps256(a); }
#else
inline vf vsqrt(vf a) { vf r; for (int i = 0; i < W; ++i) r[i] = __builtin_sqrtf(a[i]); return r; }
#endif
struct Sqrt { vf operator()(vf a) const { return vsqrt(a); } };
struct Rsqrt {
  vf operator()(vf a) const { return 1.0f / vsqrt(a); }
  static double ref(float a) { return 1.0 / __builtin_sqrt(static_cast<double>(a)); }
};
struct Recip { vf operator()(vf a) const { return 1.0f / a; } };

// ---- elementwise ------------------------------------------------------------------------
// d = op(a, b) over rows x cols.
template <class T, class Op>
inline void binary(T* d, i64 ds, const T* a, i64 as, const T* b, i64 bs, i64 rows, i64 cols, Op op) {
  for (i64 r = 0; r < rows; ++r, d += ds, a += as, b += bs) {
    i64 c = 0;
    for (; c + W <= cols; c += W) put(d + c, op, ld(a + c), ld(b + c));
    if (c < cols) put_part(d + c, cols - c, op, ld_part(a + c, cols - c), ld_part(b + c, cols - c));
  }
}
// d = op(a, s) (s: already of T's precision, see scalar_of).
template <class T, class Op>
inline void with_scalar(T* d, i64 ds, const T* a, i64 as, float s, i64 rows, i64 cols, Op op) {
  const vf sv = splat(s);
  for (i64 r = 0; r < rows; ++r, d += ds, a += as) {
    i64 c = 0;
    for (; c + W <= cols; c += W) put(d + c, op, ld(a + c), sv);
    if (c < cols) put_part(d + c, cols - c, op, ld_part(a + c, cols - c), sv);
  }
}
// d = op(a).
template <class T, class Op>
inline void unary(T* d, i64 ds, const T* a, i64 as, i64 rows, i64 cols, Op op) {
  for (i64 r = 0; r < rows; ++r, d += ds, a += as) {
    i64 c = 0;
    for (; c + W <= cols; c += W) put(d + c, op, ld(a + c));
    if (c < cols) put_part(d + c, cols - c, op, ld_part(a + c, cols - c));
  }
}
// TEXP on fp16 / bf16 tiles: the element has 65536 values, so the reference's result of each
// (exp in double, rounded once: Exp::ref, narrow_double) is a table of 128 KiB, built on the
// first call of the kernel library (about a millisecond) and read one element at a time
// (the inputs of a softmax touch a few KiB of it). Bit for bit the reference by construction,
// NaNs included. A call that finds the table being built by another worker takes the vector
// path (the same results) instead of waiting.
template <class H>
struct HalfExpTable {
  static inline unsigned short v[65536];
  static inline int state = 0;  // 0 empty, 1 being built, 2 ready
  static const unsigned short* get() {
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s == 2) return v;
    if (s == 1 || !__atomic_compare_exchange_n(&state, &s, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return nullptr;
    for (unsigned i = 0; i < 65536; ++i) v[i] = narrow_double(Exp::ref(widen1(H{static_cast<unsigned short>(i)})), H{});
    __atomic_store_n(&state, 2, __ATOMIC_RELEASE);
    return v;
  }
};
template <class H>
inline void unary_exp_half(H* d, i64 ds, const H* a, i64 as, i64 rows, i64 cols) {
  const unsigned short* t = HalfExpTable<H>::get();
  if (!t) {
    for (i64 r = 0; r < rows; ++r, d += ds, a += as) {
      i64 c = 0;
      for (; c + W <= cols; c += W) put(d + c, Exp{}, ld(a + c));
      if (c < cols) put_part(d + c, cols - c, Exp{}, ld_part(a + c, cols - c));
    }
    return;
  }
  for (i64 r = 0; r < rows; ++r, d += ds, a += as)
    for (i64 c = 0; c < cols; ++c) d[c].bits = t[a[c].bits];
}
inline void unary(f16* d, i64 ds, const f16* a, i64 as, i64 rows, i64 cols, Exp) {
  unary_exp_half(d, ds, a, as, rows, cols);
}
inline void unary(bf16* d, i64 ds, const bf16* a, i64 as, i64 rows, i64 cols, Exp) {
  unary_exp_half(d, ds, a, as, rows, cols);
}
// d = a converted to D (TCVT between fp32, fp16 and bf16; narrowing rounds to nearest even).
// Quieting NaNs changes nothing for fp16 / bf16 results (narrowing quiets them too).
template <class D, class S>
inline void convert(D* d, i64 ds, const S* a, i64 as, i64 rows, i64 cols) {
  for (i64 r = 0; r < rows; ++r, d += ds, a += as) {
    i64 c = 0;
    for (; c + W <= cols; c += W) st(d + c, quiet(ld(a + c)));
    if (c < cols) st_part(d + c, quiet(ld_part(a + c, cols - c)), cols - c);
  }
}
// d = a narrowed to fp16 / bf16 with ties away from zero (TCVT mode "round", pl.cast's default).
template <class H, class S>
inline void convert_away(H* d, i64 ds, const S* a, i64 as, i64 rows, i64 cols) {
  for (i64 r = 0; r < rows; ++r, d += ds, a += as) {
    i64 c = 0;
    for (; c + W <= cols; c += W) st_bits(d + c, narrow_away(quiet(ld(a + c)), H{}));
    if (c < cols) sth_part(d + c, narrow_away(quiet(ld_part(a + c, cols - c)), H{}), cols - c);
  }
}
// d = d + s * a (TAXPY), rounding the product first like the reference (no FMA).
inline vf no_contract(vf v) {
  __asm__("" : "+x"(v));
  return v;
}
template <class T>
inline void axpy(T* d, i64 ds, const T* a, i64 as, float s, i64 rows, i64 cols) {
  const vf sv = splat(s);
  for (i64 r = 0; r < rows; ++r, d += ds, a += as) {
    i64 c = 0;
    for (; c + W <= cols; c += W) st(d + c, ld(d + c) + no_contract(sv * ld(a + c)));
    if (c < cols) st_part(d + c, ld_part(d + c, cols - c) + no_contract(sv * ld_part(a + c, cols - c)), cols - c);
  }
}
template <class T>
inline void fill(T* d, i64 ds, float s, i64 rows, i64 cols) {
  const vf sv = splat(s);
  for (i64 r = 0; r < rows; ++r, d += ds) {
    i64 c = 0;
    for (; c + W <= cols; c += W) st(d + c, sv);
    if (c < cols) st_part(d + c, sv, cols - c);
  }
}

// ---- broadcasts -------------------------------------------------------------------------
// d[r, c] = op(a[r, c], b[r * bs]) (TROWEXPAND<op>).
template <class T, class Op>
inline void row_expand(T* d, i64 ds, const T* a, i64 as, const T* b, i64 bs, i64 rows, i64 cols, Op op) {
  for (i64 r = 0; r < rows; ++r, d += ds, a += as) {
    const vf bv = splat(ld1(b + r * bs));
    i64 c = 0;
    for (; c + W <= cols; c += W) put(d + c, op, ld(a + c), bv);
    if (c < cols) put_part(d + c, cols - c, op, ld_part(a + c, cols - c), bv);
  }
}
// d[r, c] = op(a[r, c], b[c]) (TCOLEXPAND<op>).
template <class T, class Op>
inline void col_expand(T* d, i64 ds, const T* a, i64 as, const T* b, i64 rows, i64 cols, Op op) {
  for (i64 r = 0; r < rows; ++r, d += ds, a += as) {
    i64 c = 0;
    for (; c + W <= cols; c += W) put(d + c, op, ld(a + c), ld(b + c));
    if (c < cols) put_part(d + c, cols - c, op, ld_part(a + c, cols - c), ld_part(b + c, cols - c));
  }
}
// TROWEXPAND / TCOLEXPAND: element copies (bit for bit).
template <class T>
inline void row_broadcast(T* d, i64 ds, const T* b, i64 bs, i64 rows, i64 cols) {
  for (i64 r = 0; r < rows; ++r, d += ds) {
    const T v = b[r * bs];
    for (i64 c = 0; c < cols; ++c) d[c] = v;
  }
}
template <class T>
inline void col_broadcast(T* d, i64 ds, const T* b, i64 rows, i64 cols) {
  for (i64 r = 0; r < rows; ++r, d += ds) __builtin_memmove(d, b, cols * sizeof(T));
}

// ---- reductions -------------------------------------------------------------------------
// The reference's order (docs/isa.md, "Reduction order"): sums combine sequentially in
// index order, or, with a scratch tile (`tree`), in a binary tree folding the upper half
// onto the lower half; every step is rounded to the element type. Max / min do not depend
// on the order except for the sign of a zero result (the row's last zero).
// v rounded to T (identity for fp32).
inline vf rnd(vf v, float) { return v; }
inline vf rnd(vf v, f16) { return widen(narrow(v, f16{}), f16{}); }
inline vf rnd(vf v, bf16) { return widen(narrow(v, bf16{}), bf16{}); }

// Max / min: the reference keeps the later of two equal values (acc > x ? acc : x), which
// matters only for zeros: a zero result takes the sign of the row's last zero.
template <class T, class Op>
inline float reduce_row(const T* a, i64 cols, Op op) {
  float s;
  if (cols < W) {
    s = ld1(a);
    for (i64 c = 1; c < cols; ++c) s = op(s, ld1(a + c));
  } else {
    vf s0 = ld(a), s1 = s0;
    i64 c = W;
    for (; c + 2 * W <= cols; c += 2 * W) { s0 = op(s0, ld(a + c)); s1 = op(s1, ld(a + c + W)); }
    for (; c + W <= cols; c += W) s0 = op(s0, ld(a + c));
    s0 = op(s0, s1);
    s = s0[0];
    for (int i = 1; i < W; ++i) s = op(s, s0[i]);
    for (; c < cols; ++c) s = op(s, ld1(a + c));
  }
  if (s == 0.0f)
    for (i64 c = cols - 1; c >= 0; --c)
      if (ld1(a + c) == 0.0f) return ld1(a + c);
  return s;
}
// Sequential row sums: W rows at a time, one per lane; each W x W block is widened and
// transposed so that the column additions run in index order, each rounded to T. Whole
// blocks take a branch-free loop; the ragged edges the general one.
template <class T>
inline void row_sum_block(vf& acc, const T* a, i64 as, i64 c0, bool first) {
  vf m[W];
#pragma GCC unroll 16
  for (int i = 0; i < W; ++i) m[i] = ld(a + i * as + c0);
  transpose(m);
  int k = 0;
  if (first) acc = m[k++];
#pragma GCC unroll 16
  for (; k < W; ++k) acc = rnd(acc + m[k], T{});
}
template <class T>
inline void row_sum_ordered(T* d, i64 dstride, const T* a, i64 as, i64 rows, i64 cols) {
  for (i64 r0 = 0; r0 < rows; r0 += W, a += W * as) {
    const i64 nr = rows - r0 < W ? rows - r0 : W;
    vf acc = {};
    i64 c0 = 0;
    if (nr == W && cols >= W) {
      row_sum_block(acc, a, as, 0, true);
      for (c0 = W; c0 + W <= cols; c0 += W) row_sum_block(acc, a, as, c0, false);
    }
    for (; c0 < cols; c0 += W) {
      const i64 nc = cols - c0 < W ? cols - c0 : W;
      vf m[W];
      for (int i = 0; i < W; ++i)
        m[i] = i >= nr ? vf{} : nc == W ? ld(a + i * as + c0) : ld_part(a + i * as + c0, nc);
      transpose(m);
      int k = 0;
      if (c0 == 0) acc = m[k++];
      for (; k < nc; ++k) acc = rnd(acc + m[k], T{});
    }
    for (int i = 0; i < nr; ++i) st1(d + (r0 + i) * dstride, acc[i]);
  }
}
// The binary tree over buf[0, n) (fp32 values of T): while n > 1, buf[i] += buf[i + ceil(n /
// 2)] for i < n / 2 (rounded to T), n = ceil(n / 2). Each level is one contiguous vector add.
template <class T>
inline float tree_sum(float* buf, i64 n) {
  while (n > 1) {
    const i64 keep = (n + 1) / 2, h = n / 2;
    i64 i = 0;
    for (; i + W <= h; i += W) st(buf + i, rnd(ld(buf + i) + ld(buf + keep + i), T{}));
    if (i < h) st_part(buf + i, rnd(ld_part(buf + i, h - i) + ld_part(buf + keep + i, h - i), T{}), h - i);
    n = keep;
  }
  return buf[0];
}
// The same tree over rows: buf holds n rows of `cols` fp32 values (row stride cols).
template <class T>
inline void tree_sum_rows(float* buf, i64 n, i64 cols) {
  while (n > 1) {
    const i64 keep = (n + 1) / 2, h = n / 2;
    for (i64 r = 0; r < h; ++r) {
      float* x = buf + r * cols;
      const float* y = buf + (r + keep) * cols;
      i64 c = 0;
      for (; c + W <= cols; c += W) st(x + c, rnd(ld(x + c) + ld(y + c), T{}));
      if (c < cols) st_part(x + c, rnd(ld_part(x + c, cols - c) + ld_part(y + c, cols - c), T{}), cols - c);
    }
    n = keep;
  }
}
// Widens rows x cols elements of a (row stride as) into buf (row stride cols).
template <class T>
inline void widen_rows(float* buf, const T* a, i64 as, i64 rows, i64 cols) {
  for (i64 r = 0; r < rows; ++r, a += as, buf += cols) {
    i64 c = 0;
    for (; c + W <= cols; c += W) st(buf + c, ld(a + c));
    if (c < cols) st_part(buf + c, ld_part(a + c, cols - c), cols - c);
  }
}
// TROW*: d[r * dstride] = reduce over c of a[r, c]; `tree` selects the binary tree for sums
// (buf: cols fp32 values of scratch).
template <class T, class Op>
inline void row_reduce(T* d, i64 dstride, const T* a, i64 as, i64 rows, i64 cols, Op op, bool, float*) {
  for (i64 r = 0; r < rows; ++r) st1(d + r * dstride, reduce_row(a + r * as, cols, op));
}
// The tree's first level, read from the n elements of `a` (row stride as, `cols` per row,
// one row when rows == 1) into buf: buf row i = a row i + a row i + ceil(n/2) for i < n / 2,
// and the middle row of an odd n copied; returns ceil(n/2).
template <class T>
inline i64 tree_first_level(float* buf, const T* a, i64 as, i64 n, i64 cols) {
  const i64 keep = (n + 1) / 2, h = n / 2;
  for (i64 r = 0; r < keep; ++r) {
    const T* x = a + r * as;
    const T* y = a + (r + keep) * as;
    float* o = buf + r * cols;
    i64 c = 0;
    if (r < h) {
      for (; c + W <= cols; c += W) st(o + c, rnd(ld(x + c) + ld(y + c), T{}));
      if (c < cols) st_part(o + c, rnd(ld_part(x + c, cols - c) + ld_part(y + c, cols - c), T{}), cols - c);
    } else {
      for (; c + W <= cols; c += W) st(o + c, ld(x + c));
      if (c < cols) st_part(o + c, ld_part(x + c, cols - c), cols - c);
    }
  }
  return keep;
}
template <class T>
inline void row_reduce(T* d, i64 dstride, const T* a, i64 as, i64 rows, i64 cols, Add, bool tree, float* buf) {
  if (!tree) return row_sum_ordered(d, dstride, a, as, rows, cols);
  for (i64 r = 0; r < rows; ++r) {
    if (cols == 1) {
      st1(d + r * dstride, ld1(a + r * as));
      continue;
    }
    // One row as `cols` one-element rows (stride 1) for the first level, then in buf.
    const i64 keep = (cols + 1) / 2, h = cols / 2;
    const T* x = a + r * as;
    i64 c = 0;
    for (; c + W <= h; c += W) st(buf + c, rnd(ld(x + c) + ld(x + keep + c), T{}));
    if (c < h) st_part(buf + c, rnd(ld_part(x + c, h - c) + ld_part(x + keep + c, h - c), T{}), h - c);
    if (keep > h) buf[h] = ld1(x + h);
    st1(d + r * dstride, tree_sum<T>(buf, keep));
  }
}
// TCOL*: d[c] = reduce over r of a[r, c], rows in index order, each step rounded to T;
// `tree` selects the binary tree over rows for sums (buf: rows x cols fp32 values of
// scratch; the sequential fp32 form uses one row of it).
template <class Op>
inline void col_reduce_seq(float* d, const float* a, i64 as, i64 rows, i64 cols, Op op, float* tmp_row) {
  __builtin_memmove(tmp_row, a, cols * 4);
  for (i64 r = 1; r < rows; ++r) binary(tmp_row, 0, tmp_row, 0, a + r * as, 0, 1, cols, op);
  __builtin_memmove(d, tmp_row, cols * 4);
}
template <class T, class Op>
inline void col_reduce_seq(T* d, const T* a, i64 as, i64 rows, i64 cols, Op op, float*) {
  for (i64 c = 0; c < cols; c += W) {
    const i64 n = cols - c < W ? cols - c : W;
    vf acc = n == W ? ld(a + c) : ld_part(a + c, n);
    for (i64 r = 1; r < rows; ++r) acc = rnd(op(acc, n == W ? ld(a + r * as + c) : ld_part(a + r * as + c, n)), T{});
    if (n == W) st(d + c, acc);
    else st_part(d + c, acc, n);
  }
}
template <class T, class Op>
inline void col_reduce(T* d, const T* a, i64 as, i64 rows, i64 cols, Op op, bool, float* buf) {
  col_reduce_seq(d, a, as, rows, cols, op, buf);
}
template <class T>
inline void col_reduce(T* d, const T* a, i64 as, i64 rows, i64 cols, Add, bool tree, float* buf) {
  if (!tree) return col_reduce_seq(d, a, as, rows, cols, Add{}, buf);
  if (rows == 1) widen_rows(buf, a, as, rows, cols);
  else tree_sum_rows<T>(buf, tree_first_level(buf, a, as, rows, cols), cols);
  i64 c = 0;
  for (; c + W <= cols; c += W) st(d + c, ld(buf + c));
  if (c < cols) st_part(d + c, ld_part(buf + c, cols - c), cols - c);
}

// ---- packed masks: compare and select -----------------------------------------------------
// Layout (pypto/isa/instructions.h): element (r, c) is bit c % 8 of byte (r, c / 8) of a
// uint8 mask with row stride ms bytes. Compares write ceil(cols / 8) bytes a row, zero bits
// past `cols`; selects read the same bits. Each byte is built from / expanded to a fixed run
// of 8 elements, which the compiler vectorises.
struct CmpEq { template <class A, class B> bool operator()(A a, B b) const { return a == b; } };
struct CmpNe { template <class A, class B> bool operator()(A a, B b) const { return a != b; } };
struct CmpLt { template <class A, class B> bool operator()(A a, B b) const { return a < b; } };
struct CmpLe { template <class A, class B> bool operator()(A a, B b) const { return a <= b; } };
struct CmpGt { template <class A, class B> bool operator()(A a, B b) const { return a > b; } };
struct CmpGe { template <class A, class B> bool operator()(A a, B b) const { return a >= b; } };

// Second operand of a compare: element c of a row (tile) or one value (scalar).
template <class T> struct RowOf { const T* p; T operator[](i64 c) const { return p[c]; } };
template <class S> struct Same { S s; S operator[](i64) const { return s; } };

// The value an element compares as: itself, or a half's exact FP32 value (as the reference's get_f).
template <class T> inline T cmp_value(T x) { return x; }
inline float cmp_value(f16 x) { return widen1(x); }
inline float cmp_value(bf16 x) { return widen1(x); }

template <class T, class B, class Cmp>
inline void compare_row(unsigned char* m, const T* a, B b, i64 cols, Cmp cmp) {
  const i64 full = cols / 8;
  for (i64 k = 0; k < full; ++k) {
    unsigned bits = 0;
    for (int i = 0; i < 8; ++i) bits |= unsigned(cmp(cmp_value(a[8 * k + i]), cmp_value(b[8 * k + i]))) << i;
    m[k] = (unsigned char)bits;
  }
  if (cols % 8) {
    unsigned bits = 0;
    for (i64 c = full * 8; c < cols; ++c) bits |= unsigned(cmp(cmp_value(a[c]), cmp_value(b[c]))) << (c % 8);
    m[full] = (unsigned char)bits;
  }
}
// TCMP: m = a <cmp> b over rows x cols (strides in elements; ms in bytes).
template <class T, class Cmp>
inline void compare(unsigned char* m, i64 ms, const T* a, i64 as, const T* b, i64 bs, i64 rows, i64 cols, Cmp cmp) {
  for (i64 r = 0; r < rows; ++r, m += ms, a += as, b += bs) compare_row(m, a, RowOf<T>{b}, cols, cmp);
}
// TCMPS: m = a <cmp> s; s is float for float tiles and long long for integer tiles, so
// integers compare in 64 bits like the reference.
template <class T, class S, class Cmp>
inline void compare_scalar(unsigned char* m, i64 ms, const T* a, i64 as, S s, i64 rows, i64 cols, Cmp cmp) {
  for (i64 r = 0; r < rows; ++r, m += ms, a += as) compare_row(m, a, Same<S>{s}, cols, cmp);
}

template <class T, class B>
inline void select_row(T* d, const unsigned char* m, const T* a, B b, i64 cols) {
  const i64 full = cols / 8;
  for (i64 k = 0; k < full; ++k) {
    const unsigned bits = m[k];
    for (int i = 0; i < 8; ++i) d[8 * k + i] = (bits >> i) & 1 ? a[8 * k + i] : b[8 * k + i];
  }
  for (i64 c = full * 8; c < cols; ++c) d[c] = (m[full] >> (c % 8)) & 1 ? a[c] : b[c];
}
// TSEL: d = m ? a : b over rows x cols. T is any type of the element's size: the selected
// element is copied bit for bit.
template <class T>
inline void select(T* d, i64 ds, const unsigned char* m, i64 ms, const T* a, i64 as, const T* b, i64 bs, i64 rows,
                   i64 cols) {
  for (i64 r = 0; r < rows; ++r, d += ds, m += ms, a += as, b += bs) select_row(d, m, a, RowOf<T>{b}, cols);
}
// TSELS: d = m ? a : s.
template <class T>
inline void select_scalar(T* d, i64 ds, const unsigned char* m, i64 ms, const T* a, i64 as, T s, i64 rows, i64 cols) {
  for (i64 r = 0; r < rows; ++r, d += ds, m += ms, a += as) select_row(d, m, a, Same<T>{s}, cols);
}

// ---- global memory <-> tiles ---------------------------------------------------------------
// The address of tensor t at `off` and the strides of its last two dims, after the
// reference's bounds checks (false: out of bounds, let the reference report it).
// fold: the rows of an N-D tile run on over the leading axes merged row-major (the
// reference's fold_rows); taken here only where those axes are dense (one row stride).
// row_dim / col_dim >= 0: the tile steps those two dims (isa::box_dims), not the last two.
inline bool window(const pto_tensor& t, const i64* off, int noff, i64 vrows, i64 vcols, unsigned char** base,
                   i64* row_stride, i64* col_stride, bool fold = false, int row_dim = -1, int col_dim = -1) {
  const int rank = t.rank;
  if (rank < 1 || noff != rank) return false;
  if (col_dim >= 0) {
    if (col_dim >= rank || row_dim < 0 || row_dim >= rank || row_dim == col_dim || fold) return false;
    if (off[row_dim] < 0 || off[row_dim] > t.shape[row_dim] - vrows || off[col_dim] < 0 ||
        off[col_dim] > t.shape[col_dim] - vcols)
      return false;
    i64 e = 0;
    for (int d = 0; d < rank; ++d) {
      if (d != row_dim && d != col_dim && (off[d] < 0 || off[d] >= t.shape[d])) return false;
      e += off[d] * t.strides[d];
    }
    *base = t.data + e * t.elem_bytes;
    *row_stride = t.strides[row_dim];
    *col_stride = t.strides[col_dim];
    return true;
  }
  const int rd = rank >= 2 ? rank - 2 : -1, cd = rank - 1;
  i64 rows_here = rd >= 0 ? t.shape[rd] : 1, row_off = rd >= 0 ? off[rd] : 0;
  if (fold && rank >= 3 && row_off > rows_here - vrows) {
    i64 flat = 0, total = 1;
    for (int d = 0; d <= rd; ++d) {
      if (off[d] < 0 || off[d] >= t.shape[d]) return false;
      if (d < rd && t.strides[d] != t.shape[d + 1] * t.strides[d + 1]) return false;
      flat = flat * t.shape[d] + off[d];
      total *= t.shape[d];
    }
    if (flat > total - vrows || off[cd] < 0 || off[cd] > t.shape[cd] - vcols) return false;
    *base = t.data + (flat * t.strides[rd] + off[cd] * t.strides[cd]) * t.elem_bytes;
    *row_stride = t.strides[rd];
    *col_stride = t.strides[cd];
    return true;
  }
  if (row_off < 0 || row_off > rows_here - vrows || off[cd] < 0 || off[cd] > t.shape[cd] - vcols) return false;
  i64 e = 0;
  for (int d = 0; d < rank; ++d) {
    if (d < rd && (off[d] < 0 || off[d] >= t.shape[d])) return false;
    e += off[d] * t.strides[d];
  }
  *base = t.data + e * t.elem_bytes;
  *row_stride = rd >= 0 ? t.strides[rd] : 0;
  *col_stride = t.strides[cd];
  return true;
}

// A TLOAD's window read in place (a matmul operand that is never copied, native_codegen.cpp
// plan_direct): its first element, its row stride in elements (*ld); null unless the window
// lies inside t and its columns are contiguous.
inline const unsigned char* tensor_window(const pto_tensor& t, const i64* off, int noff, i64 vr, i64 vc, bool fold,
                                          int row_dim, int col_dim, i64* ld) {
  unsigned char* base;
  i64 rs, cs;
  if (vr <= 0 || vc <= 0 || !window(t, off, noff, vr, vc, &base, &rs, &cs, fold, row_dim, col_dim) || cs != 1)
    return nullptr;
  *ld = rs;
  return base;
}
inline const unsigned char* tensor_window(const pto_tensor& t, const i64* off, int noff, i64 vr, i64 vc, bool fold,
                                          i64* ld) {
  return tensor_window(t, off, noff, vr, vc, fold, -1, -1, ld);
}

// Whether two tensors' element ranges (from the lowest to the highest byte any index reaches)
// share a byte; an empty tensor shares none.
inline void tensor_extent(const pto_tensor& t, const unsigned char** lo, const unsigned char** hi) {
  i64 a = 0, b = 0;
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] <= 0) {
      *lo = *hi = t.data;
      return;
    }
    const i64 e = (t.shape[d] - 1) * t.strides[d];
    (e < 0 ? a : b) += e;
  }
  *lo = t.data + a * t.elem_bytes;
  *hi = t.data + (b + 1) * t.elem_bytes;
}
inline bool tensors_overlap(const pto_tensor& x, const pto_tensor& y) {
  if (!x.data || !y.data) return false;
  const unsigned char *xl, *xh, *yl, *yh;
  tensor_extent(x, &xl, &xh);
  tensor_extent(y, &yl, &yh);
  return xl < xh && yl < yh && xl < yh && yl < xh;
}

}  // namespace pto_opt
