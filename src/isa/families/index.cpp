// The index family: arg-reductions (first index wins ties), gather / scatter within a tile,
// and sorting (TSORT32 per 32-element block, TMRGSORT merging two sorted rows), descending
// and stable (equal values keep their order). Records with their reference functions.
#include <algorithm>
#include <numeric>

#include "families.h"

namespace pypto::isa::families {

namespace {

// dst[r, 0] (rows) or dst[0, c] (columns) = index of the first max (min) along the axis.
ReferenceFn arg_reduce(bool along_rows, bool want_max) {
  return [along_rows, want_max](const TileCall& call) {
    const TileRef& dst = call.out_tile();
    const TileRef& src = call.in_tile(0);
    if (dst.is_float()) call.fail_runtime("destination '" + dst.name + "' must be an integer tile", "declare it INT32");
    const int64_t outer = along_rows ? src.valid_rows : src.valid_cols;
    const int64_t inner = along_rows ? src.valid_cols : src.valid_rows;
    if ((along_rows ? dst.rows : dst.cols) < outer) call.fail_runtime("destination '" + dst.name + "' is too small");
    if (inner == 0) call.fail_runtime("source tile '" + src.name + "' has an empty valid region");
    for (int64_t o = 0; o < outer; ++o) {
      int64_t best = 0;
      auto val = [&](int64_t k) { return along_rows ? src.get_f(o, k) : src.get_f(k, o); };
      auto ival = [&](int64_t k) { return along_rows ? src.get_i(o, k) : src.get_i(k, o); };
      for (int64_t k = 1; k < inner; ++k) {
        const bool better = src.is_float() ? (want_max ? val(k) > val(best) : val(k) < val(best))
                                           : (want_max ? ival(k) > ival(best) : ival(k) < ival(best));
        if (better) best = k;
      }
      if (along_rows) dst.set_i(o, 0, best);
      else dst.set_i(0, o, best);
    }
  };
}

void tgather(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const TileRef& src = call.in_tile(0);
  const TileRef& idx = call.in_tile(1);
  call.require_covers(idx, dst.valid_rows, dst.valid_cols);
  call.require_covers(src, dst.valid_rows, 1);
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c) {
      const int64_t j = call.checked_index(idx, r, c, src.valid_cols, "the source row");
      convert_element(dst.at(r, c), dst.dtype, src.at(r, j), src.dtype);
    }
}

void tscatter(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const TileRef& src = call.in_tile(0);
  const TileRef& idx = call.in_tile(1);
  call.require_covers(idx, src.valid_rows, src.valid_cols);
  call.require_covers(dst, src.valid_rows, 1);
  for (int64_t r = 0; r < src.valid_rows; ++r)
    for (int64_t c = 0; c < src.valid_cols; ++c) {
      const int64_t j = call.checked_index(idx, r, c, dst.valid_cols, "the destination row");
      convert_element(dst.at(r, j), dst.dtype, src.at(r, c), src.dtype);
    }
}

// Stable descending order of `n` elements at columns [c0, c0 + n) of row r: value first,
// then the smaller original position.
std::vector<int64_t> descending_order(const TileRef& t, int64_t r, int64_t c0, int64_t n) {
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    if (t.is_float()) return t.get_f(r, c0 + a) > t.get_f(r, c0 + b);
    return t.get_i(r, c0 + a) > t.get_i(r, c0 + b);
  });
  return order;
}

// TSORT32: outs [values, indices], ins [src] or [src, idx]. Each block of 32 columns of the
// valid region (the last may be shorter) is sorted descending; indices are positions within
// the row, or the sorted values' entries of idx.
void tsort32(const TileCall& call) {
  const TileRef& vals = call.out_tile(0);
  const TileRef& idx = call.out_tile(1);
  const TileRef& src = call.in_tile(0);
  call.require_covers(vals, src.valid_rows, src.valid_cols);
  call.require_covers(idx, src.valid_rows, src.valid_cols);
  const TileRef* given = call.ins.size() > 1 ? &call.in_tile(1) : nullptr;  // the optional index tile
  if (given) call.require_covers(*given, src.valid_rows, src.valid_cols);
  for (int64_t r = 0; r < src.valid_rows; ++r)
    for (int64_t c0 = 0; c0 < src.valid_cols; c0 += 32) {
      const int64_t n = std::min<int64_t>(32, src.valid_cols - c0);
      const std::vector<int64_t> order = descending_order(src, r, c0, n);
      for (int64_t k = 0; k < n; ++k) {
        convert_element(vals.at(r, c0 + k), vals.dtype, src.at(r, c0 + order[k]), src.dtype);
        idx.set_i(r, c0 + k, given ? given->get_i(r, c0 + order[k]) : c0 + order[k]);
      }
    }
}

// TMRGSORT: outs [values, indices], ins [a_values, a_indices, b_values, b_indices]; merges
// two descending rows (valid columns of each) into valid_a + valid_b columns; ties take a.
void tmrgsort(const TileCall& call) {
  const TileRef& vals = call.out_tile(0);
  const TileRef& idx = call.out_tile(1);
  const TileRef &av = call.in_tile(0), &ai = call.in_tile(1), &bv = call.in_tile(2), &bi = call.in_tile(3);
  const int64_t na = av.valid_cols, nb = bv.valid_cols, rows = av.valid_rows;
  call.require_covers(vals, rows, na + nb);
  call.require_covers(idx, rows, na + nb);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t i = 0, j = 0;
    for (int64_t k = 0; k < na + nb; ++k) {
      bool take_a = j >= nb;
      if (i < na && j < nb)
        take_a = av.is_float() ? av.get_f(r, i) >= bv.get_f(r, j) : av.get_i(r, i) >= bv.get_i(r, j);
      const TileRef& v = take_a ? av : bv;
      const TileRef& x = take_a ? ai : bi;
      const int64_t at = take_a ? i++ : j++;
      convert_element(vals.at(r, k), vals.dtype, v.at(r, at), v.dtype);
      idx.set_i(r, k, x.get_i(r, at));
    }
  }
}

}  // namespace

void add_index_family(std::vector<InstrDef>& t) {
  using F = InstrFamily;
  auto add = [&](const char* name, const char* outs, const char* ins, const std::vector<DataType>& dt, CostFigures cost,
                 const char* summary, ReferenceFn ref) {
    t.push_back(vector_instr(name, F::kIndex, outs, ins, dt, cost, summary, std::move(ref)));
  };
  // Arg-reductions: the dtypes are the source's (the result is INT32 indices).
  for (bool max : {true, false}) {
    add(max ? "TROWARGMAX" : "TROWARGMIN", "T", "Tt", kNumeric, kPassDefault,
        "dst[r, 0] = first column index of the max/min of row r (INT32)", arg_reduce(true, max));
    t.back().typed = TypedOperand::kIn0;
  }
  for (bool max : {true, false}) {
    add(max ? "TCOLARGMAX" : "TCOLARGMIN", "T", "Tt", kNumeric, kPassDefault,
        "dst[0, c] = first row index of the max/min of column c (INT32)", arg_reduce(false, max));
    t.back().typed = TypedOperand::kIn0;
  }
  add("TGATHER", "T", "TT", kAny, kBinaryDefault, "dst[r, c] = src[r, idx[r, c]]", tgather);
  add("TSCATTER", "T", "TT", kAny, kBinaryDefault, "dst[r, idx[r, c]] = src[r, c]; the rest of dst is kept", tscatter);
  add("TSORT32", "TT", "Tt", kNumeric, vec(4.03, 31),
      "sort each 32-element block of each row descending: values and their columns (INT32), or their entries of the "
      "optional index tile (UINT32 / INT32)", tsort32);
  add("TMRGSORT", "TT", "TTTT", kNumeric, vec(4.03, 31), "merge two descending rows (values, indices) into one", tmrgsort);
}

}  // namespace pypto::isa::families
