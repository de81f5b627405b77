// What the instruction family files share: the dtype sets and cost figures of the table, the
// record builder, and one registration function per family (src/isa/families/<family>.cpp).
// A family file holds, for each of its instructions, the whole record: operands, pipe,
// dtypes, memories, cost, summary, reference function and native fast path.
#pragma once
#include <vector>

#include "pypto/isa/instructions.h"
#include "pypto/isa/reference.h"

namespace pypto::isa::families {

using enum DataType;
// The integer dtypes of the vector unit: PyPTO's ISA computes on UINT16 / UINT32 too (TCI
// makes UINT32 iotas, sort32's index tiles are UINT32) and INT64 (token ids, offsets).
// UINT64 is moved, selected and converted but not computed on (kAny, TCVT, memory).
inline const std::vector<DataType> kFloat = {FP32, FP16, BF16};
inline const std::vector<DataType> kInt = {INT32, INT16, INT8, UINT8, UINT16, UINT32, INT64};
inline const std::vector<DataType> kNumeric = {FP32, FP16, BF16, INT32, INT16, INT8, UINT8, UINT16, UINT32, INT64};
inline const std::vector<DataType> kAny = {FP32, FP16, BF16, INT32, INT16, INT8, UINT8, UINT16, UINT32, INT64, UINT64, BOOL};
inline const std::vector<DataType> kSigned = {FP32, FP16, BF16, INT32, INT16, INT8, INT64};

inline CostFigures vec(double slope, double head, bool published = false) { return {head, slope, 0, 0, published}; }
inline CostFigures fit(double slope, double head) { return vec(slope, head, true); }  // published (chip-model.md)
// Defaults for vector instructions without a published fit.
inline const CostFigures kBinaryDefault = vec(2.11, 24);  // like TADD: two streams in, one out
inline const CostFigures kScalarDefault = vec(1.0, 24);   // like TMULS: one stream in, one out
inline const CostFigures kMathDefault = vec(1.07, 24);    // like TRSQRT: one special-function pass
inline const CostFigures kPassDefault = vec(2.0, 24);     // reductions, broadcasts, casts, copies

// A vector-unit instruction: its destination (and every tile it reads) lives in Vec.
inline InstrDef vector_instr(std::string name, InstrFamily family, std::string outs, std::string ins,
                             const std::vector<DataType>& dtypes, CostFigures cost, std::string summary,
                             ReferenceFn reference, FastPath fast = {}) {
  InstrDef d{std::move(name), family, Pipe::V, std::move(outs), std::move(ins), dtypes, cost, std::move(summary),
             {MemorySpace::Vec}};
  d.reference = std::move(reference);
  d.fast = std::move(fast);
  return d;
}

// One registration function per family file; each appends its records in table order.
void add_elementwise_family(std::vector<InstrDef>& t);  // tile-tile, tile-scalar, unary
void add_reduction_family(std::vector<InstrDef>& t);    // TROW* / TCOL* reductions
void add_broadcast_family(std::vector<InstrDef>& t);    // TROWEXPAND* / TCOLEXPAND*
void add_convert_family(std::vector<InstrDef>& t);      // TCVT (compare.cpp)
void add_compare_family(std::vector<InstrDef>& t);      // TCMP TCMPS TSEL TSELS (packed masks)
void add_matmul_family(std::vector<InstrDef>& t);       // the cube: TMATMUL*, TGEMV*
void add_generate_family(std::vector<InstrDef>& t);     // TCI TTRI TRANDOM
void add_index_family(std::vector<InstrDef>& t);        // arg-reductions, TGATHER/TSCATTER, sorting

}  // namespace pypto::isa::families
