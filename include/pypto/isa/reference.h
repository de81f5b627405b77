// The reference library's data: tiles resolved to a core's byte buffers, the operands of one
// executing instruction and the element codecs. The reference functions of the instruction
// families (src/isa/families/<family>.cpp) compute on these; they are the ISA's arithmetic
// spec, run by the sim engine (and by the native engine where it has no fast path).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pypto/base/scalar.h"
#include "pypto/isa/global_tensor.h"
#include "pypto/isa/program.h"

namespace pypto::isa {

// Element codecs. Floats read as float; integers read as int64. Writing a float or a double
// rounds it once to the element type (nearest-even for fp32/fp16/bf16; truncation with
// saturation for integers); writing an integer wraps to the element type's width (float
// element types: rounded once to nearest even).
float read_float(const uint8_t* p, DataType t);
int64_t read_int(const uint8_t* p, DataType t);
void write_float(uint8_t* p, DataType t, float v);
void write_double(uint8_t* p, DataType t, double v);
void write_int(uint8_t* p, DataType t, int64_t v);
// A UINT64 element at `src` to the float dtype `t`: its unsigned value, rounded once.
void write_uint64_as_float(uint8_t* dst, DataType t, const uint8_t* src);
// Copies one element, converting between dtypes (same dtype: bit copy).
void convert_element(uint8_t* dst, DataType dst_t, const uint8_t* src, DataType src_t);
// The pad value of `pad` for `t` as a float: 0, the largest finite value, or the lowest.
float pad_value(PadValue pad, DataType t);

// A tile resolved to memory: row-major rows x cols elements at `data`.
struct TileRef {
  uint8_t* data = nullptr;
  DataType dtype = DataType::FP32;
  int64_t rows = 0, cols = 0;
  int64_t valid_rows = 0, valid_cols = 0;
  PadValue pad = PadValue::null;
  std::string name;

  uint8_t* at(int64_t r, int64_t c) const { return data + (r * cols + c) * dtype_bytes(dtype); }
  float get_f(int64_t r, int64_t c) const { return read_float(at(r, c), dtype); }
  int64_t get_i(int64_t r, int64_t c) const { return read_int(at(r, c), dtype); }
  void set_f(int64_t r, int64_t c, float v) const { write_float(at(r, c), dtype, v); }
  void set_d(int64_t r, int64_t c, double v) const { write_double(at(r, c), dtype, v); }
  void set_i(int64_t r, int64_t c, int64_t v) const { write_int(at(r, c), dtype, v); }
  bool is_float() const { return dtype_is_float(dtype); }
  int64_t bytes() const { return rows * cols * dtype_bytes(dtype); }
};

// An operand of one executing instruction, resolved against the core's state.
struct OperandValue {
  isa::Operand::Kind kind = isa::Operand::kScalar;
  TileRef tile;                      // kTile
  const TensorView* tensor = nullptr;  // kTensor
  ScalarValue scalar;                // kScalar
  std::vector<int64_t> list;         // kScalarList
};

// One tile instruction ready to execute: the instruction (mnemonic, attrs, span) and its
// resolved operands.
struct TileCall {
  const isa::Instr& instr;
  std::vector<OperandValue> outs, ins;

  const TileRef& out_tile(size_t i = 0) const { return outs.at(i).tile; }
  const TileRef& in_tile(size_t i) const { return ins.at(i).tile; }
  // A string attribute (e.g. "cmp", "mode"), or `fallback` when absent.
  std::string attr_string(const std::string& key, const std::string& fallback) const;
  // Fails unless source tile `src` has at least rows x cols elements (the region read).
  void require_covers(const TileRef& src, int64_t rows, int64_t cols) const;
  // Entry (r, c) of index tile `idx`, which must lie in [0, limit) (`into` names the indexed
  // thing in the error: "the source row", "tensor 'x'").
  int64_t checked_index(const TileRef& idx, int64_t r, int64_t c, int64_t limit, const std::string& into) const;
  // A runtime error at the instruction's source line.
  [[noreturn]] void fail_runtime(const std::string& message, const std::string& fix = "") const;
};

// Computes one instruction (operands already checked against its InstrDef).
using ReferenceFn = std::function<void(const TileCall&)>;

// The 2-D window of global tensor `tensor` that `tile` covers at `offsets` (TLOAD / TSTORE and
// the pld transfers): its last two dims (a 1-D tensor is one row), or the two dims of the
// instruction's attribute "dims" (box_dims: a strided box); with the attribute fold_rows (the
// rows of an N-D tile, docs/language.md "N-D tiles") row r is row f0 + r of the tensor's leading
// axes merged row-major, f0 the merged index of the leading offsets.
struct TensorWindow {
  const TensorView& tensor;
  std::vector<int64_t> index;  // offsets; the last two entries move with (r, c)
  int row_dim, col_dim;        // row_dim = -1 for a 1-D tensor
  bool fold = false;
  int64_t first_row = 0;       // fold: the merged index of the leading offsets
  uint8_t* at(int64_t r, int64_t c) const;  // element (r, c) of the tile's window
};
// The window, after checking that the tile's valid region lies inside the tensor (a run-time
// error at the instruction naming the tile, `verb` ("loaded from") and the tensor otherwise).
TensorWindow tensor_window(const TileCall& call, const TensorView& tensor, const std::vector<int64_t>& offsets,
                           const TileRef& tile, const char* verb);

}  // namespace pypto::isa
