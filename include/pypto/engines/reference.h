// The reference tile library: the arithmetic of every PTO instruction as plain loops over
// tiles in a core's byte buffers. It is the sim engine's arithmetic and the living spec of
// the ISA; the per-family files in src/runtime/engines/sim/ hold the implementations.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "pypto/isa/program.h"
#include "pypto/engines/tensor.h"

namespace pypto::runtime {

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
struct TileRef;
// One element of a tile at (row, col) of its allocated shape (pl.tile.read / pl.tile.write);
// an index outside the shape is a run-time error naming the tile.
ScalarValue read_tile_element(const TileRef& tile, const std::vector<int64_t>& index, const Span& span);
void write_tile_element(const TileRef& tile, const std::vector<int64_t>& index, const ScalarValue& value, const Span& span);

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
  // A runtime error at the instruction's source line.
  [[noreturn]] void fail_runtime(const std::string& message, const std::string& fix = "") const;
};

using ReferenceFn = std::function<void(const TileCall&)>;
using ReferenceTable = std::map<std::string, ReferenceFn>;

// The whole library, keyed by mnemonic.
const ReferenceTable& reference_library();
// Runs `call` through the library: checks the instruction exists, its operand kinds and
// dtypes against the instruction table, then computes.
void execute_reference(const TileCall& call);

// Family registrations (one file each under src/runtime/engines/sim/).
void add_memory_instrs(ReferenceTable& table);       // TLOAD TSTORE TMOV TTRANS TFILLPAD TEXPANDS
void add_elementwise_instrs(ReferenceTable& table);  // tile-tile, tile-scalar, unary
void add_reduction_instrs(ReferenceTable& table);    // TROW*/TCOL* reductions
void add_expand_instrs(ReferenceTable& table);       // TROWEXPAND*/TCOLEXPAND*
void add_matmul_instrs(ReferenceTable& table);       // TMATMUL family
void add_convert_instrs(ReferenceTable& table);      // TCVT TCMP TCMPS TSEL TSELS
void add_index_instrs(ReferenceTable& table);        // arg-reductions, gather/scatter, sort
void add_generate_instrs(ReferenceTable& table);     // TCI TTRI TRANDOM
void add_cross_core_instrs(ReferenceTable& table);   // TPUSH TPOP TFREE (mixed tasks)

}  // namespace pypto::runtime
