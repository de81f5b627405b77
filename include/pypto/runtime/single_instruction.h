// Executing one tile instruction outside any kernel, on host arrays: the arrays are copied
// into tiles of a scratch core, the reference library runs, outputs are copied back. This
// is how tests check each instruction against numpy.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "pypto/ir/expr.h"
#include "pypto/engines/tensor.h"

namespace pypto::runtime {

struct LooseOperand {
  enum Kind : uint8_t { kArray, kScalar, kList } kind = kArray;
  engines::TensorView array;                         // a tile's contents (2-D, or 1-D as one row) or a global tensor
  MemorySpace memory = MemorySpace::Vec;    // where a tile operand is placed
  PadValue pad = PadValue::null;            // a tile operand's pad value
  int64_t valid_rows = -1, valid_cols = -1; // a tile operand's valid shape (-1: whole tile)
  engines::ScalarValue scalar;                       // kScalar
  std::vector<int64_t> list;                // kList (offsets)
};

// Runs `mnemonic` with the given operands (ordered as in the instruction table's operand
// signature); tile outputs are written back into their arrays.
// Rows and columns of a host array seen as one tile operand of `mnemonic` (a 1-D array is one
// row); a user error for any other rank. Both executors place operands with it.
std::pair<int64_t, int64_t> array_tile_shape(const engines::TensorView& a, const std::string& mnemonic);

void execute_instruction(const std::string& mnemonic, const std::vector<LooseOperand>& outs,
                         const std::vector<LooseOperand>& ins, const Attrs& attrs,
                         const std::string& platform = "a2a3sim");
// execute_instruction through the native engine (src/runtime/native_single.cpp).
void execute_instruction_native(const std::string& mnemonic, const std::vector<LooseOperand>& outs,
                                const std::vector<LooseOperand>& ins, const Attrs& attrs, const std::string& platform);

}  // namespace pypto::runtime
