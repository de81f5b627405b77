// The PTO instruction table: one declarative entry per mnemonic (operands, pipe, dtypes,
// cost figures). Codegen, the engines, the cost model and the docs all read this table;
// nothing else lists the instructions.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "pypto/base/dtype.h"
#include "pypto/isa/program.h"
#include "pypto/isa/reference.h"

namespace pypto::isa {

enum class InstrFamily : uint8_t {
  kMemory,       // TLOAD TSTORE: global <-> on-chip
  kMove,         // TMOV TTRANS TFILLPAD: on-chip copies
  kElementwise,  // tile (op) tile
  kTileScalar,   // tile (op) scalar
  kUnary,        // op(tile)
  kConvert,      // TCVT
  kReduction,    // row / column reductions
  kExpand,       // row / column broadcasts
  kMatmul,       // cube
  kCompare,      // TCMP TCMPS TSEL TSELS (packed masks)
  kFill,         // TEXPANDS
  kGenerate,     // TCI TTRI TRANDOM: tiles from indices / counters
  kIndex,        // arg-reductions, gather / scatter, sort
  kSync,         // SET_FLAG WAIT_FLAG PIPE_BARRIER: order pipes (no data)
  kCrossCore,    // TPUSH TPOP TFREE: tile FIFOs between the cores of a cluster (mixed tasks)
};
const char* instr_family_name(InstrFamily f);

// Cost figures. Vector: head + slope * R cycles (R = 256-byte repeats). Cube: see
// instr_cost_cycles. Transfers: bytes / bandwidth plus a startup.
struct CostFigures {
  double head = 0, slope = 0;           // vector instructions
  double bandwidth_gib_s = 0;           // transfers: bytes per second / 2^30
  double startup_cycles = 0;            // transfers
  bool published = false;               // figures from chip-model.md (else a documented default)
};

// Packed predicate masks. TCMP / TCMPS write one and TSEL / TSELS read one. A mask is a
// tile of kMaskDtype (UINT8) bytes holding one bit per element of the region it describes:
// element (r, c) is bit c % 8 (bit 0 = least significant) of byte (r, c / 8) of the mask
// tile. A mask row holds ceil(cols / 8) bytes (mask_row_bytes), the row stride is the mask
// tile's own column count (any count >= ceil(cols / 8)), and the tile starts at a 32-byte
// aligned address like every tile. For a numpy array x of shape (rows, cols), the mask of
// x != 0 is np.packbits(x != 0, axis=1, bitorder="little").
//  - TCMP / TCMPS compare over the valid region of their first source (vr x vc) and write
//    rows 0..vr-1, bytes 0..ceil(vc / 8)-1 of the mask; bits of columns >= vc in the last
//    byte of a row are 0; other bytes of the mask tile are left unchanged.
//  - TSEL / TSELS select over the destination's valid region (vr x vc) and read the same
//    bits. Either way the mask tile must have at least vr rows and ceil(vc / 8) columns.
//  - The compiler's masks (pl.cmp / pl.cmps on a rows x cols tile) are rows x
//    mask_tile_cols(cols) tiles: each row padded to whole 32-byte Vec rows, like every Vec
//    tile the DSL loads, with valid shape [valid rows, ceil(valid cols / 8)].
constexpr DataType kMaskDtype = DataType::UINT8;
constexpr int64_t kMaskRowAlignBytes = 32;
constexpr int64_t mask_row_bytes(int64_t cols) { return (cols + 7) / 8; }
constexpr int64_t mask_tile_cols(int64_t cols) {
  return (mask_row_bytes(cols) + kMaskRowAlignBytes - 1) / kMaskRowAlignBytes * kMaskRowAlignBytes;
}
// The layout above in one paragraph of Markdown (docs/isa.md states it).
const char* packed_mask_layout_markdown();

// Vec row padding (PyPTO's rule): a Vec tile's rows are allocated in whole 32-byte units, so
// a tile whose row is narrower than that ([32, 1] FP32, the row-reduction result shape;
// [16, 4] FP16) or not a multiple of it takes rows x vec_row_pitch_bytes of UB: memory
// planning, overlap checks and the footprint use that size. The engines keep the elements
// row-major and dense from the tile's address (their own layout; it lies inside the padded
// allocation), so the padding bytes are never read. Other memories hold tiles densely.
constexpr int64_t kVecRowAlignBytes = 32;
inline int64_t vec_row_pitch_bytes(int64_t cols, DataType t) {
  const int64_t bytes = cols * dtype_bytes(t);
  return (bytes + kVecRowAlignBytes - 1) / kVecRowAlignBytes * kVecRowAlignBytes;
}
// Bytes a rows x cols tile of `t` takes in memory `m` (Vec: padded rows; others: dense).
inline int64_t allocated_tile_bytes(int64_t rows, int64_t cols, DataType t, MemorySpace m) {
  return m == MemorySpace::Vec ? rows * vec_row_pitch_bytes(cols, t) : rows * cols * dtype_bytes(t);
}

// How an instruction uses a packed mask: none, writes it (output 0), reads it (input 0).
enum class MaskUse : uint8_t { kNone, kWritesOut0, kReadsIn0 };

// The native engine's optimised kernel for an instruction (include/pypto/isa/optimized/),
// when it has one: the kernel's shape and the element functor it applies (pto_opt::<functor>).
//   kBinary      dst = f(a, b)         pto_opt::binary
//   kWithScalar  dst = f(a, s)         pto_opt::with_scalar
//   kUnary       dst = f(a)            pto_opt::unary
//   kRowReduce   dst[r, 0] = fold f    pto_opt::row_reduce (kColReduce: col_reduce)
//   kRowBroadcast dst[r, c] = b[r, 0]  pto_opt::row_broadcast (kColBroadcast: col_broadcast; no functor)
//   kRowExpand   dst = f(a, b[r, 0])   pto_opt::row_expand (kColExpand: col_expand)
// Instructions without one (kNone) run the reference function on the native engine too,
// unless the native code generator has a hand-written path for them (memory, moves, ...).
struct FastPath {
  enum Kind : uint8_t {
    kNone, kBinary, kWithScalar, kUnary, kRowReduce, kColReduce, kRowBroadcast, kColBroadcast, kRowExpand, kColExpand
  } kind = kNone;
  std::string functor;  // "Add": pto_opt::Add{}
};

// The operand whose element type an instruction's `dtypes` constrain (and the reference
// library checks): the destination, or a source where the destination is a global tensor, a
// packed mask, an index tile or an accumulator.
enum class TypedOperand : uint8_t { kOut0, kIn0, kIn1 };

struct InstrDef {
  std::string name;
  InstrFamily family;
  Pipe pipe;  // the usual pipe; pipe_of() refines TSTORE / TMOV by the source memory
  // Operand signatures, one letter per operand: T tile, G global tensor, S scalar,
  // L scalar list (offsets); a lowercase letter is optional (and only at the end).
  std::string outs_sig, ins_sig;
  std::vector<DataType> dtypes;  // allowed element types of the operand `typed` names
  CostFigures cost;
  std::string summary;           // one line: what the instruction computes
  // Memory locations the destination tile may live in (the source for TSTORE / MSCATTER);
  // empty for instructions without a tile operand.
  std::vector<MemorySpace> memories;
  // The packed-mask operand, if any; it must be a kMaskDtype tile covering the region.
  MaskUse mask = MaskUse::kNone;
  // The operand `dtypes` applies to (the destination unless the record says otherwise).
  TypedOperand typed = TypedOperand::kOut0;
  // The instruction's arithmetic (the sim engine runs it; src/isa/families/<family>.cpp).
  // Empty for the instructions whose reference functions need engine structures (src/engines/sim/).
  ReferenceFn reference;
  FastPath fast;  // the native engine's optimised kernel, if any

  int num_outs() const { return static_cast<int>(outs_sig.size()); }
  int min_ins() const;
  int max_ins() const { return static_cast<int>(ins_sig.size()); }
  bool allows(DataType t) const;
};

// The `.pto` spelling of an instruction ("pto.tadd", "pto.set_flag").
std::string pto_mnemonic(const InstrDef& def);
// A pipe by its name ("MTE2"), or false.
bool pipe_from_name(const std::string& name, Pipe* out);
// The whole table as Markdown (docs/isa.md is generated from this).
std::string instruction_table_markdown();

// The entry for a mnemonic ("TADD"), or nullptr.
const InstrDef* find_instr(const std::string& name);
// Every entry, in table order.
std::vector<const InstrDef*> all_instrs();
// The pipe an instruction of `kernel` runs on (TSTORE from Acc and TMOV from Acc run on FIX,
// TMOV from Mat on MTE1, TMOV between Vec tiles on V; TPUSH from Acc on FIX, from Mat on
// MTE1, from Vec on MTE3).
Pipe pipe_of(const Instr& instr, const Kernel& kernel);

// Modelled cycles of one instruction over a rows x cols region of `dtype` (chip-model.md):
//  vector:    head + slope * R, R = ceil(rows*cols*bytes / 256), +16 if a row is not a whole
//             number of 256-byte repeats;
//  cube:      6 + ceil(M/16) * ceil(K/K0) * ceil(N/16), K0 = 32 bytes / sizeof(dtype),
//             doubled for fp32; M = rows, N = cols, K = k (k <= 0 means K = cols);
//  transfers: bytes / bandwidth at 1.85 GHz + startup.
double instr_cost_cycles(const InstrDef& def, DataType dtype, int64_t rows, int64_t cols, int64_t k = 0);
// Cycles of a transfer of `bytes` from memory `src` to `dst` (DDR is global memory).
double transfer_cost_cycles(MemorySpace src, MemorySpace dst, int64_t bytes);

// Cross-core FIFOs (TPUSH / TPOP / TFREE). Attribute "peer" names the other core of the
// cluster: "AIV0" or "AIV1" in a cube (AIC) kernel, "AIC" in a vector (AIV) kernel. A tile
// pushed by the AIC lands in the AIV's UB (Vec); a tile pushed by an AIV lands in the AIC's
// L1 (Mat).
constexpr const char* kPeerAttr = "peer";
// The memory a tile pushed towards `peer` lands in: Vec for "AIV0"/"AIV1", Mat for "AIC".
MemorySpace fifo_landing_memory(const std::string& peer);
// The peer attribute of a cross-core instruction, or "" when it is absent or not a string.
std::string fifo_peer(const Instr& instr);

}  // namespace pypto::isa
