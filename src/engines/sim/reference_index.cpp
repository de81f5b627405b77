// Reference semantics of gather / scatter from / to global memory (MGATHER, MSCATTER); the
// tile-level index instructions are in src/isa/families/index.cpp.
#include "pypto/engines/reference.h"

namespace pypto::runtime {

namespace {

// The element `flat` of a global tensor in row-major order of its shape.
uint8_t* flat_element(const TensorView& t, int64_t flat) {
  std::vector<int64_t> index(t.shape.size());
  for (int d = static_cast<int>(t.shape.size()) - 1; d >= 0; --d) {
    index[d] = flat % t.shape[d];
    flat /= t.shape[d];
  }
  return t.element(index);
}

void mgather(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const TensorView& src = *call.ins.at(0).tensor;
  const TileRef& idx = call.in_tile(1);
  call.require_covers(idx, dst.valid_rows, dst.valid_cols);
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c) {
      const int64_t j = call.checked_index(idx, r, c, src.numel(), "tensor '" + src.name + "'");
      convert_element(dst.at(r, c), dst.dtype, flat_element(src, j), src.dtype);
    }
}

void mscatter(const TileCall& call) {
  const TensorView& dst = *call.outs.at(0).tensor;
  const TileRef& src = call.in_tile(0);
  const TileRef& idx = call.in_tile(1);
  call.require_covers(idx, src.valid_rows, src.valid_cols);
  for (int64_t r = 0; r < src.valid_rows; ++r)
    for (int64_t c = 0; c < src.valid_cols; ++c) {
      const int64_t j = call.checked_index(idx, r, c, dst.numel(), "tensor '" + dst.name + "'");
      convert_element(flat_element(dst, j), dst.dtype, src.at(r, c), src.dtype);
    }
}

}  // namespace

void add_index_instrs(ReferenceTable& t) {
  t["MGATHER"] = mgather;
  t["MSCATTER"] = mscatter;
}

}  // namespace pypto::runtime
