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

// The dtypes global memory moves (TLOAD / TSTORE): every dtype, FP8 included.
inline const std::vector<DataType> kMemoryDtypes = {FP32, FP16,   BF16,   INT32,  INT16, INT8,      UINT8,  UINT16,
                                                    UINT32, INT64, UINT64, BOOL, FP8E4M3FN, FP8E5M2};
// A transfer at `gib_s` GiB/s (chip-model.md); startup: middle of the 15-60 cycle range.
inline CostFigures xfer(double gib_s) { return {0, 0, gib_s, 30, true}; }
// Where the destination tile of an instruction may live (the source for TSTORE / MSCATTER),
// by its pipe (chip-model.md): vector instructions write Vec; views and moves reach more.
inline const std::vector<MemorySpace> kVecOnly = {MemorySpace::Vec};
inline const std::vector<MemorySpace> kNoTile = {};
inline const std::vector<MemorySpace> kViewMemories = {MemorySpace::Vec, MemorySpace::Mat, MemorySpace::Left,
                                                       MemorySpace::Right, MemorySpace::Acc};

// `d` with its dtypes applying to operand `o` instead of the destination (InstrDef::typed).
inline InstrDef typed_by(TypedOperand o, InstrDef d) {
  d.typed = o;
  return d;
}

// A record of any pipe (vector_instr below is the Vec-only shorthand).
inline InstrDef instr(std::string name, InstrFamily family, Pipe pipe, std::string outs, std::string ins,
                      const std::vector<DataType>& dtypes, CostFigures cost, std::string summary,
                      std::vector<MemorySpace> memories, ReferenceFn reference = {}) {
  InstrDef d{std::move(name), family, pipe, std::move(outs), std::move(ins), dtypes, cost, std::move(summary),
             std::move(memories)};
  d.reference = std::move(reference);
  return d;
}

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
void add_fill_family(std::vector<InstrDef>& t);         // TEXPANDS (generate.cpp)
void add_memory_family(std::vector<InstrDef>& t);       // TLOAD TSTORE MGATHER MSCATTER TPREFETCH
void add_move_family(std::vector<InstrDef>& t);         // on-chip moves and views (move.cpp)
void add_sync_family(std::vector<InstrDef>& t);         // flags, barriers, pl.system (sync.cpp)
void add_cross_core_family(std::vector<InstrDef>& t);   // TPUSH TPOP TFREE (cross_core.cpp)

}  // namespace pypto::isa::families
