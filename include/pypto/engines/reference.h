// The reference tile library: the arithmetic of every PTO instruction as plain loops over
// tiles in a core's byte buffers. It is the sim engine's arithmetic and the living spec of
// the ISA; the instruction records of src/isa/families/ hold the implementations, except those
// that reach engine structures (global tensors, the cluster of a mixed task): src/engines/sim/.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "pypto/isa/program.h"
#include "pypto/isa/reference.h"
#include "pypto/engines/tensor.h"

namespace pypto::engines {

// The reference data types are the ISA's (pypto/isa/reference.h).
using isa::convert_element;
using isa::OperandValue;
using isa::pad_value;
using isa::read_float;
using isa::read_int;
using isa::ReferenceFn;
using isa::TileCall;
using isa::TileRef;
using isa::write_double;
using isa::write_float;
using isa::write_int;
using isa::write_uint64_as_float;

// One element of a tile at (row, col) of its allocated shape (pl.tile.read / pl.tile.write);
// an index outside the shape is a run-time error naming the tile.
ScalarValue read_tile_element(const TileRef& tile, const std::vector<int64_t>& index, const Span& span);
void write_tile_element(const TileRef& tile, const std::vector<int64_t>& index, const ScalarValue& value, const Span& span);

using ReferenceTable = std::map<std::string, ReferenceFn>;

// The whole library, keyed by mnemonic.
const ReferenceTable& reference_library();
// Runs `call` through the library: checks the instruction exists, its operand kinds and
// dtypes against the instruction table, then computes.
void execute_reference(const TileCall& call);

// The reference functions that reach engine structures, so not in their instruction records
// (src/isa/families/ is below the engines): one file each under src/engines/sim/.
void add_memory_instrs(ReferenceTable& table);       // TLOAD TSTORE MGATHER MSCATTER (global tensors)
void add_cross_core_instrs(ReferenceTable& table);   // TPUSH TPOP TFREE SYNC_SET SYNC_WAIT (mixed tasks)

}  // namespace pypto::engines
