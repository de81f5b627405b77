// The memory family: transfers between global memory (isa::TensorView) and tiles, each record
// with its reference function. The pld instructions (REMOTE_*, SIGNAL_*) reach the shared memory
// of a distributed domain, an engine structure: their reference functions are in
// src/engines/sim/reference_memory.cpp. TPREFETCH moves no data in the model.
#include <type_traits>

#include "families.h"
#include "pypto/isa/element_ops.h"

namespace pypto::isa {

namespace {
std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}
}  // namespace

uint8_t* TensorWindow::at(int64_t r, int64_t c) const {
  std::vector<int64_t> i = index;
  if (fold) {
    for (int64_t d = row_dim, f = first_row + r; d >= 0; --d) {
      i[d] = f % tensor.shape[d];
      f /= tensor.shape[d];
    }
  } else if (row_dim >= 0) {
    i[row_dim] += r;
  }
  i[col_dim] += c;
  return tensor.element(i);
}

TensorWindow tensor_window(const TileCall& call, const TensorView& tensor, const std::vector<int64_t>& offsets,
                           const TileRef& tile, const char* verb) {
  const int rank = static_cast<int>(tensor.shape.size());
  auto describe = [&] {
    return " tile '" + tile.name + "' (valid " + std::to_string(tile.valid_rows) + "x" +
           std::to_string(tile.valid_cols) + ") " + verb + " " + tensor.describe() + " at offsets [" + join(offsets) + "]";
  };
  if (rank < 1 || static_cast<int>(offsets.size()) != rank)
    call.fail_runtime("the" + describe() + ": one offset per tensor dimension is needed");
  auto [row_dim, col_dim] = isa::box_dims(call.instr, rank);
  if (col_dim < 0 || col_dim >= rank || row_dim >= rank || row_dim == col_dim)
    call.fail_runtime("the" + describe() + ": its box dims " + std::to_string(row_dim) + ", " + std::to_string(col_dim) +
                      " are not two dims of the tensor");
  TensorWindow w{tensor, offsets, row_dim, col_dim};
  auto it = call.instr.attrs.find("fold_rows");
  w.fold = rank >= 3 && it != call.instr.attrs.end() && it->second == AttrValue(true);
  bool inside = offsets[w.col_dim] >= 0 && offsets[w.col_dim] <= tensor.shape[w.col_dim] - tile.valid_cols;  // (no overflow)
  for (int d = 0; d < rank && inside; ++d)  // the dims the box does not step (fold: those before its rows)
    if (d != w.col_dim && (w.fold ? d < w.row_dim : d != w.row_dim)) inside = offsets[d] >= 0 && offsets[d] < tensor.shape[d];
  if (w.fold) {
    inside = inside && offsets[w.row_dim] >= 0 && offsets[w.row_dim] < tensor.shape[w.row_dim];
    int64_t rows_total = 1;
    for (int d = 0; d <= w.row_dim; ++d) {
      w.first_row = w.first_row * tensor.shape[d] + offsets[d];
      rows_total *= tensor.shape[d];
    }
    inside = inside && w.first_row <= rows_total - tile.valid_rows;
  } else {
    const int64_t rows_here = w.row_dim >= 0 ? tensor.shape[w.row_dim] : 1;
    const int64_t row_off = w.row_dim >= 0 ? offsets[w.row_dim] : 0;
    inside = inside && row_off >= 0 && row_off <= rows_here - tile.valid_rows;
  }
  if (!inside)
    call.fail_runtime("the" + describe() + " goes past the tensor's shape",
                      "keep offset + valid size inside the shape (use a smaller valid shape for the last tile)");
  return w;
}

}  // namespace pypto::isa

namespace pypto::isa::families {

namespace {

void no_data(const TileCall&) {}

void tload(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const TensorView& src = *call.ins.at(0).tensor;
  TensorWindow w = tensor_window(call, src, call.ins.at(1).list, dst, "loaded from");
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c) convert_element(dst.at(r, c), dst.dtype, w.at(r, c), src.dtype);
  if (dst.pad == PadValue::null) return;
  const float pad = pad_value(dst.pad, dst.dtype);
  for (int64_t r = 0; r < dst.rows; ++r)
    for (int64_t c = 0; c < dst.cols; ++c)
      if (r >= dst.valid_rows || c >= dst.valid_cols) dst.set_f(r, c, pad);
}

void tstore(const TileCall& call) {
  const TileRef& src = call.in_tile(0);
  const TensorView& dst = *call.outs.at(0).tensor;
  TensorWindow w = tensor_window(call, dst, call.ins.at(1).list, src, "stored to");
  const std::string atomic = call.attr_string("atomic", "none");
  if (atomic != "none" && atomic != "add") call.fail_runtime("unknown atomic mode '" + atomic + "'", "use \"add\"");
  for (int64_t r = 0; r < src.valid_rows; ++r) {
    for (int64_t c = 0; c < src.valid_cols; ++c) {
      uint8_t* p = w.at(r, c);
      if (atomic == "none") convert_element(p, dst.dtype, src.at(r, c), src.dtype);
      else if (dtype_is_float(dst.dtype))
        element_ops::atomic_update(p, dtype_bytes(dst.dtype), [&](uint8_t* e) { write_float(e, dst.dtype, read_float(e, dst.dtype) + src.get_f(r, c)); });
      else
        element_ops::atomic_update(p, dtype_bytes(dst.dtype), [&](uint8_t* e) { write_int(e, dst.dtype, read_int(e, dst.dtype) + src.get_i(r, c)); });
    }
  }
}

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

void add_memory_family(std::vector<InstrDef>& t) {
  using F = InstrFamily;
  using M = MemorySpace;
  t.push_back(instr("TLOAD", F::kMemory, Pipe::MTE2, "T", "GL", kMemoryDtypes, xfer(100.9), "tile = tensor[offsets] (valid region; pad fills the rest; attribute dims=[r, c]: rows and columns step tensor dims r and c, a strided box)", {M::Vec, M::Mat}, tload));
  t.push_back(typed_by(TypedOperand::kIn0, instr("TSTORE", F::kMemory, Pipe::MTE3, "G", "TL", kMemoryDtypes, xfer(188.5), "tensor[offsets] = tile (valid region; atomic add optional; dims=[r, c] as TLOAD)", {M::Vec, M::Mat, M::Acc}, tstore)));
  t.push_back(instr("MGATHER", F::kMemory, Pipe::MTE2, "T", "GT", kAny, xfer(100.9), "dst[r, c] = tensor.flat[idx[r, c]]", kVecOnly, mgather));
  t.push_back(typed_by(TypedOperand::kIn0, instr("MSCATTER", F::kMemory, Pipe::MTE3, "G", "TT", kAny, xfer(188.5), "tensor.flat[idx[r, c]] = src[r, c]", kVecOnly, mscatter)));
  // pld (docs/distributed.md): the same instructions on a peer rank's window, and the signal
  // cells ranks synchronise through; their reference functions reach the shared memory of the
  // domain (src/engines/sim/reference_memory.cpp, include/pypto/engines/comm.h).
  t.push_back(instr("REMOTE_LOAD", F::kMemory, Pipe::MTE2, "T", "GLS", kMemoryDtypes, xfer(50), "tile = the window tensor[offsets] of rank peer (pld.tile.remote_load)", {M::Vec, M::Mat}));
  t.push_back(typed_by(TypedOperand::kIn0, instr("REMOTE_STORE", F::kMemory, Pipe::MTE3, "G", "TLS", kMemoryDtypes, xfer(50), "the window tensor[offsets] of rank peer = tile (atomic add optional; pld.tile.remote_store)", {M::Vec})));
  t.push_back(instr("SIGNAL_NOTIFY", F::kMemory, Pipe::MTE3, "G", "LSS", {DataType::INT32}, xfer(50), "signal cell [offsets] of rank peer += value (attrs{op} AtomicAdd) or = value (Set), release order (pld.system.notify)", kNoTile));
  t.push_back(typed_by(TypedOperand::kIn0, instr("SIGNAL_WAIT", F::kMemory, Pipe::MTE2, "", "GLS", {DataType::INT32}, xfer(50), "wait until this rank's signal cell [offsets] == expected (attrs{cmp} Eq) or >= (Ge), acquire order (pld.system.wait)", kNoTile)));
  t.push_back(typed_by(TypedOperand::kIn0, instr("TPREFETCH", F::kMemory, Pipe::MTE2, "", "GL", kAny, xfer(100.9), "warm the cache for tensor[offsets] (no data moved in the model)", kNoTile, no_data)));
}

}  // namespace pypto::isa::families
