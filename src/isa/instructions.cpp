// The PTO instruction table and the cost formulas of chip-model.md. Published 910B3 fits
// are marked `published`; other vector instructions use the family default noted beside
// them (the closest published instruction of the same shape of work).
#include "pypto/isa/instructions.h"

#include <cctype>
#include <cmath>
#include <map>
#include <variant>

namespace pypto::isa {

const char* pipe_name(Pipe p) {
  static const char* names[] = {"S", "V", "MTE1", "MTE2", "MTE3", "M", "FIX"};
  return names[static_cast<int>(p)];
}

bool pipe_from_name(const std::string& name, Pipe* out) {
  for (int i = 0; i < 7; ++i)
    if (name == pipe_name(static_cast<Pipe>(i)) || name == std::string("PIPE_") + pipe_name(static_cast<Pipe>(i))) {
      *out = static_cast<Pipe>(i);
      return true;
    }
  return false;
}

const char* instr_family_name(InstrFamily f) {
  static const char* names[] = {"memory", "on-chip movement", "elementwise", "tile-scalar", "unary", "convert",
                                "reduction", "broadcast", "cube", "compare/select", "fill", "generator",
                                "index/sort", "sync", "cross-core FIFO"};
  return names[static_cast<int>(f)];
}

std::string pto_mnemonic(const InstrDef& def) {
  std::string s = "pto.";
  for (char c : def.name) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

namespace {

using enum DataType;
// The integer dtypes of the vector unit: PyPTO's ISA computes on UINT16 / UINT32 too (TCI
// makes UINT32 iotas, sort32's index tiles are UINT32) and INT64 (token ids, offsets).
// UINT64 is moved, selected and converted but not computed on (kAny, TCVT, memory).
const std::vector<DataType> kFloat = {FP32, FP16, BF16};
const std::vector<DataType> kInt = {INT32, INT16, INT8, UINT8, UINT16, UINT32, INT64};
const std::vector<DataType> kNumeric = {FP32, FP16, BF16, INT32, INT16, INT8, UINT8, UINT16, UINT32, INT64};
const std::vector<DataType> kAny = {FP32, FP16, BF16, INT32, INT16, INT8, UINT8, UINT16, UINT32, INT64, UINT64, BOOL};
const std::vector<DataType> kSigned = {FP32, FP16, BF16, INT32, INT16, INT8, INT64};
const std::vector<DataType> kCube = {FP16, BF16, FP32, INT8};
const std::vector<DataType> kMoveFp8 = {FP32, FP16, BF16, INT32, INT16, INT8, UINT8, UINT16, UINT32, INT64, UINT64,
                                        BOOL, FP8E4M3FN, FP8E5M2};  // TCVT
// TRANDOM writes Philox's 32-bit words (pl.tile.random's default dtype is UINT32); moved
// to and from global memory as such.
const std::vector<DataType> kRandom = {FP32, FP16, BF16, INT32, INT16, INT8, UINT8, UINT16, UINT32};
const std::vector<DataType> kMemoryDtypes = {FP32, FP16,   BF16,   INT32,  INT16, INT8,      UINT8,  UINT16,
                                             UINT32, INT64, UINT64, BOOL, FP8E4M3FN, FP8E5M2};

CostFigures vec(double slope, double head, bool published = false) { return {head, slope, 0, 0, published}; }
CostFigures fit(double slope, double head) { return vec(slope, head, true); }
CostFigures xfer(double gib_s) { return {0, 0, gib_s, 30, true}; }  // startup: middle of the 15-60 range
CostFigures cube() { return {0, 0, 0, 0, true}; }

// Defaults for vector instructions without a published fit.
const CostFigures kBinaryDefault = vec(2.11, 24);  // like TADD: two streams in, one out
const CostFigures kScalarDefault = vec(1.0, 24);   // like TMULS: one stream in, one out
const CostFigures kMathDefault = vec(1.07, 24);    // like TRSQRT: one special-function pass
const CostFigures kPassDefault = vec(2.0, 24);     // reductions, broadcasts, casts, copies

using F = InstrFamily;

// Where the destination tile of an instruction may live, by its pipe (chip-model.md).
std::vector<MemorySpace> default_memories(const InstrDef& d) {
  using M = MemorySpace;
  if (d.family == F::kSync || d.name == "TPREFETCH") return {};
  if (d.name == "TLOAD") return {M::Vec, M::Mat};
  if (d.name == "TSTORE") return {M::Vec, M::Mat, M::Acc};
  if (d.name == "TMOV") return {M::Vec, M::Mat, M::Left, M::Right, M::Bias};
  if (d.name == "TINSERT") return {M::Vec, M::Mat};  // Mat: an Acc tile through the fixpipe
  if (d.name == "TEXTRACT" || d.name == "TRESHAPE" || d.name == "TSUBVIEW" || d.name == "TASSIGN")
    return {M::Vec, M::Mat, M::Left, M::Right, M::Acc};
  if (d.family == F::kMatmul) return {M::Acc};
  if (d.name == "TPUSH") return {M::Acc, M::Mat, M::Vec};
  if (d.name == "TPOP" || d.name == "TFREE") return {M::Vec, M::Mat};
  return {M::Vec};
}

// The instructions added with the complete tile library (issue 3): tile-scalar and
// ternary forms, arg-reductions, partial combines, generators, gather/scatter, sorting,
// views and the sync instructions.
void add_more_instrs(std::vector<InstrDef>& t) {
  auto add = [&](const char* name, F fam, Pipe pipe, const char* outs, const char* ins,
                 const std::vector<DataType>& dt, CostFigures cost, const char* summary) {
    t.push_back(InstrDef{name, fam, pipe, outs, ins, dt, cost, summary, {}});
  };
  add("TREMS", F::kTileScalar, Pipe::V, "T", "TS", kNumeric, vec(4.03, 31), "dst = a mod s, sign of s");  // like TDIV
  add("TANDS", F::kTileScalar, Pipe::V, "T", "TS", kInt, vec(2.03, 20), "dst = a & s");
  add("TORS", F::kTileScalar, Pipe::V, "T", "TS", kInt, vec(2.03, 20), "dst = a | s");
  add("TXORS", F::kTileScalar, Pipe::V, "T", "TS", kInt, vec(2.03, 20), "dst = a ^ s");
  add("TSHLS", F::kTileScalar, Pipe::V, "T", "TS", kInt, vec(2.03, 20), "dst = a << s");
  add("TSHRS", F::kTileScalar, Pipe::V, "T", "TS", kInt, vec(2.03, 20), "dst = a >> s");
  add("TPOW", F::kElementwise, Pipe::V, "T", "TT", kFloat, vec(2.0 + 2.0 + 2.3, 31 + 33 + 25), "dst = a ** b (exp(b * log a))");
  add("TADDC", F::kElementwise, Pipe::V, "T", "TTT", kNumeric, vec(2 * 2.11, 2 * 24), "dst = a + b + c");
  add("TSUBC", F::kElementwise, Pipe::V, "T", "TTT", kNumeric, vec(2 * 2.11, 2 * 24), "dst = a - b + c");
  add("TMULADDDST", F::kElementwise, Pipe::V, "T", "TT", kNumeric, vec(2.3 + 2.11, 25 + 24), "dst = a * b + dst");
  add("TSELS", F::kCompare, Pipe::V, "T", "TTS", kAny, kBinaryDefault,
      "dst[r, c] = bit (r, c) of the packed mask ? a[r, c] : s, over dst's valid region");
  for (const char* n : {"TROWARGMAX", "TROWARGMIN"})
    add(n, F::kIndex, Pipe::V, "T", "Tt", kNumeric, kPassDefault, "dst[r, 0] = first column index of the max/min of row r (INT32)");
  for (const char* n : {"TCOLARGMAX", "TCOLARGMIN"})
    add(n, F::kIndex, Pipe::V, "T", "Tt", kNumeric, kPassDefault, "dst[0, c] = first row index of the max/min of column c (INT32)");
  for (const char* op : {"ADD", "MUL", "MAX", "MIN"}) {
    std::string name = std::string("TPART") + op;
    t.push_back(InstrDef{name, F::kElementwise, Pipe::V, "T", "TT", kNumeric, kBinaryDefault,
                         std::string("dst = a ") + op + " b where both are valid, else whichever is valid", {}});
  }
  add("TCI", F::kGenerate, Pipe::V, "T", "S", kNumeric, kScalarDefault, "dst[r, c] = s + r * valid_cols + c (iota)");
  add("TTRI", F::kGenerate, Pipe::V, "T", "S", kAny, kScalarDefault, "dst[r, c] = 1 if c - r <= s (lower) / c - r >= s (upper) else 0");
  add("TRANDOM", F::kGenerate, Pipe::V, "T", "SSSSSS", kRandom, kPassDefault,
      "dst = Philox4x32 (key0, key1, counter0..3; attrs{rounds}, default 10): element i is word i % 4 of block "
      "counter + i / 4; integers the 32-bit word, floats its top significand bits / 2^p in [0, 1)");
  add("TGATHER", F::kIndex, Pipe::V, "T", "TT", kAny, kBinaryDefault, "dst[r, c] = src[r, idx[r, c]]");
  add("TSCATTER", F::kIndex, Pipe::V, "T", "TT", kAny, kBinaryDefault, "dst[r, idx[r, c]] = src[r, c]; the rest of dst is kept");
  add("MGATHER", F::kMemory, Pipe::MTE2, "T", "GT", kAny, xfer(100.9), "dst[r, c] = tensor.flat[idx[r, c]]");
  add("MSCATTER", F::kMemory, Pipe::MTE3, "G", "TT", kAny, xfer(188.5), "tensor.flat[idx[r, c]] = src[r, c]");
  add("TPREFETCH", F::kMemory, Pipe::MTE2, "", "GL", kAny, xfer(100.9), "warm the cache for tensor[offsets] (no data moved in the model)");
  add("TSORT32", F::kIndex, Pipe::V, "TT", "Tt", kNumeric, vec(4.03, 31),
      "sort each 32-element block of each row descending: values and their columns (INT32), or their entries of the "
      "optional index tile (UINT32 / INT32)");
  add("TMRGSORT", F::kIndex, Pipe::V, "TT", "TTTT", kNumeric, vec(4.03, 31), "merge two descending rows (values, indices) into one");
  add("TRESHAPE", F::kMove, Pipe::S, "T", "T", kAny, vec(0, 1), "dst = src's bytes seen with dst's shape");
  add("TSUBVIEW", F::kMove, Pipe::S, "T", "TL", kAny, vec(0, 1), "dst = src[offsets : offsets + dst's valid shape] (a view)");
  add("TASSIGN", F::kMove, Pipe::S, "T", "S", kAny, vec(0, 1), "place tile dst at byte address s (addresses are planned: no data moves)");
  add("TFILLPAD_INPLACE", F::kMove, Pipe::V, "T", "", kAny, kPassDefault, "dst outside its valid region = dst's pad value");
  add("TFILLPAD_EXPAND", F::kMove, Pipe::V, "T", "T", kAny, kPassDefault, "dst = src on src's valid region, dst's pad value on the rest of the larger dst");
  add("SET_FLAG", F::kSync, Pipe::S, "", "", kAny, vec(0, 1), "signal event attrs{event} from pipe attrs{src} to pipe attrs{dst}");
  add("WAIT_FLAG", F::kSync, Pipe::S, "", "", kAny, vec(0, 1), "pipe attrs{dst} waits for event attrs{event} from pipe attrs{src}");
  add("PIPE_BARRIER", F::kSync, Pipe::S, "", "", kAny, vec(0, 1), "pipe attrs{pipe} (or ALL) waits for every earlier instruction of that pipe (all pipes)");
  // pl.system ops: cross-core events, the GM fence, cache invalidation and the all-core
  // barrier. They move no data; the sim cycle model times them (docs/simulator.md, "pl.system"):
  // a cross-core event signals in one transfer startup (30 cycles, as a TPOP handshake), a
  // cache invalidation is a round trip to global memory (30), the others take one issue cycle
  // plus the waits they impose on the pipes.
  add("SYNC_SET", F::kSync, Pipe::S, "", "", kAny, vec(0, 30), "cross-core event attrs{event} set from pipe attrs{pipe} once its earlier instructions end (pl.system.sync_set)");
  add("SYNC_WAIT", F::kSync, Pipe::S, "", "", kAny, vec(0, 1), "pipe attrs{pipe} waits for cross-core event attrs{event} (pl.system.sync_wait)");
  add("SET_FFTS", F::kSync, Pipe::S, "", "", kAny, vec(0, 1), "FFTS base address setup (A3; pl.system.set_ffts)");
  add("FENCE", F::kSync, Pipe::S, "", "", kAny, vec(0, 1), "global-memory fence: later global-memory accesses wait for earlier writes to end (pl.system.fence)");
  add("CACHEINVALID", F::kSync, Pipe::S, "", "", kAny, vec(0, 30), "invalidate the data cache of global memory (pl.system.cacheinvalid)");
  add("PIPE_INIT", F::kSync, Pipe::S, "", "", kAny, vec(0, 1), "set up cross-core pipe attrs{id}: attrs{slot_num} slots of attrs{slot_size} bytes (the runtime sizes that pipe's FIFOs)");
  add("SYNCALL", F::kSync, Pipe::S, "", "", kAny, vec(0, 30), "barrier of every core of the launch, mode attrs{mode} over attrs{core_type} (pl.system.syncall)");
  // Cross-core tile FIFOs of a cluster (mixed tasks). TPUSH's pipe depends on its source
  // (pipe_of): FIX from Acc, MTE1 from Mat, MTE3 from Vec; its cost is the transfer from the
  // source to the peer's landing memory (Acc -> Vec: the L0C -> L1 figure). TPOP hands the
  // next filled slot to its destination tile (the data already lies in this core's buffer):
  // a handshake of one transfer startup on MTE2. TFREE gives the popped slot back to the
  // producer; its tile is an output, so the compiler orders it after every read of the tile.
  add("TPUSH", F::kCrossCore, Pipe::MTE3, "", "T", kAny, xfer(128),
      "push the tile into the FIFO towards attrs{peer}: blocks while every slot is full or popped but not freed");
  add("TPOP", F::kCrossCore, Pipe::MTE2, "T", "", kAny, {30, 0, 0, 0, false},
      "dst = the oldest filled slot of the FIFO from attrs{peer} (blocks until one is pushed); dtype and shape must match the push");
  add("TFREE", F::kCrossCore, Pipe::S, "T", "", kAny, vec(0, 1),
      "give the oldest popped slot of the FIFO from attrs{peer} back to its producer (dst: the popped tile, now dead)");
}

std::vector<InstrDef> build_table() {
  std::vector<InstrDef> t;
  auto add = [&](const char* name, F fam, Pipe pipe, const char* outs, const char* ins,
                 const std::vector<DataType>& dt, CostFigures cost, const char* summary) {
    t.push_back(InstrDef{name, fam, pipe, outs, ins, dt, cost, summary, {}});
  };
  // Memory and on-chip movement.
  add("TLOAD", F::kMemory, Pipe::MTE2, "T", "GL", kMemoryDtypes, xfer(100.9), "tile = tensor[offsets] (valid region; pad fills the rest; attribute dims=[r, c]: rows and columns step tensor dims r and c, a strided box)");
  add("TSTORE", F::kMemory, Pipe::MTE3, "G", "TL", kMemoryDtypes, xfer(188.5), "tensor[offsets] = tile (valid region; atomic add optional; dims=[r, c] as TLOAD)");
  add("TMOV", F::kMove, Pipe::MTE1, "T", "T", kAny, xfer(441), "dst = src across memories, with fp32 -> fp16/bf16 conversion");
  add("TTRANS", F::kMove, Pipe::V, "T", "T", kAny, kPassDefault, "dst[i, j] = src[j, i]");
  add("TFILLPAD", F::kMove, Pipe::V, "T", "T", kAny, kPassDefault, "dst = src on src's valid region, dst's pad value elsewhere");
  add("TEXTRACT", F::kMove, Pipe::V, "T", "TL", kAny, kPassDefault, "dst = src[offsets : offsets + dst's valid shape]");
  add("TINSERT", F::kMove, Pipe::V, "T", "TL", kAny, kPassDefault, "dst[offsets : offsets + src's valid shape] = src; the rest of dst is kept (Vec into Vec; an Acc src into a Mat dst "
      "runs on the fixpipe, FIX, and may narrow FP32 to FP16 / BF16)");
  add("TCONCAT", F::kMove, Pipe::V, "T", "TT", kAny, kPassDefault, "dst = [a | b]: b's columns follow a's");
  add("TEXPANDS", F::kFill, Pipe::V, "T", "S", kAny, kScalarDefault, "dst = scalar");

  // Tile-tile elementwise.
  add("TADD", F::kElementwise, Pipe::V, "T", "TT", kNumeric, fit(2.11, 24), "dst = a + b");
  add("TSUB", F::kElementwise, Pipe::V, "T", "TT", kNumeric, fit(2.11, 24), "dst = a - b");
  add("TMUL", F::kElementwise, Pipe::V, "T", "TT", kNumeric, fit(2.3, 25), "dst = a * b");
  add("TDIV", F::kElementwise, Pipe::V, "T", "TT", kNumeric, fit(4.03, 31), "dst = a / b (integers truncate toward zero)");
  add("TMAX", F::kElementwise, Pipe::V, "T", "TT", kNumeric, fit(2.01, 23), "dst = max(a, b)");
  add("TMIN", F::kElementwise, Pipe::V, "T", "TT", kNumeric, vec(2.01, 23), "dst = min(a, b)");  // like TMAX
  add("TREM", F::kElementwise, Pipe::V, "T", "TT", kNumeric, vec(4.03, 31), "dst = a mod b, sign of b (numpy remainder)");  // like TDIV
  add("TFMOD", F::kElementwise, Pipe::V, "T", "TT", kNumeric, vec(4.03, 31), "dst = fmod(a, b), sign of a");  // like TDIV
  add("TAND", F::kElementwise, Pipe::V, "T", "TT", kInt, fit(2.03, 20), "dst = a & b");
  add("TOR", F::kElementwise, Pipe::V, "T", "TT", kInt, fit(2.03, 20), "dst = a | b");
  add("TXOR", F::kElementwise, Pipe::V, "T", "TT", kInt, vec(2.03, 20), "dst = a ^ b");  // like TAND
  add("TSHL", F::kElementwise, Pipe::V, "T", "TT", kInt, vec(2.03, 20), "dst = a << b");
  add("TSHR", F::kElementwise, Pipe::V, "T", "TT", kInt, vec(2.03, 20), "dst = a >> b (arithmetic for signed types)");
  add("TPRELU", F::kElementwise, Pipe::V, "T", "TT", kSigned, kBinaryDefault, "dst = a > 0 ? a : a * b");

  // Tile-scalar.
  add("TADDS", F::kTileScalar, Pipe::V, "T", "TS", kNumeric, kScalarDefault, "dst = a + s");
  add("TSUBS", F::kTileScalar, Pipe::V, "T", "TS", kNumeric, kScalarDefault, "dst = a - s");
  add("TMULS", F::kTileScalar, Pipe::V, "T", "TS", kNumeric, fit(1.0, 24), "dst = a * s");
  add("TDIVS", F::kTileScalar, Pipe::V, "T", "TS", kNumeric, vec(4.03, 31), "dst = a / s");  // like TDIV
  add("TMAXS", F::kTileScalar, Pipe::V, "T", "TS", kNumeric, fit(1.0, 24), "dst = max(a, s)");
  add("TMINS", F::kTileScalar, Pipe::V, "T", "TS", kNumeric, vec(1.0, 24), "dst = min(a, s)");  // like TMAXS
  add("TLRELU", F::kTileScalar, Pipe::V, "T", "TS", kSigned, kScalarDefault, "dst = a > 0 ? a : a * s");
  add("TAXPY", F::kTileScalar, Pipe::V, "T", "TS", kNumeric, kBinaryDefault, "dst = dst + s * a");

  // Unary.
  add("TABS", F::kUnary, Pipe::V, "T", "T", kSigned, kScalarDefault, "dst = |a|");
  add("TNEG", F::kUnary, Pipe::V, "T", "T", kSigned, kScalarDefault, "dst = -a");
  add("TRELU", F::kUnary, Pipe::V, "T", "T", kSigned, fit(1.0, 24), "dst = max(a, 0)");
  add("TNOT", F::kUnary, Pipe::V, "T", "T", kInt, vec(2.03, 20), "dst = ~a");  // like TAND
  add("TEXP", F::kUnary, Pipe::V, "T", "T", kFloat, fit(2.0, 31), "dst = exp(a)");
  add("TLOG", F::kUnary, Pipe::V, "T", "T", kFloat, fit(2.0, 33), "dst = log(a)");
  add("TSQRT", F::kUnary, Pipe::V, "T", "T", kFloat, kMathDefault, "dst = sqrt(a)");
  add("TRSQRT", F::kUnary, Pipe::V, "T", "T", kFloat, fit(1.07, 24), "dst = 1 / sqrt(a)");
  add("TRECIP", F::kUnary, Pipe::V, "T", "T", kFloat, kMathDefault, "dst = 1 / a");

  // Conversion, comparison, selection.
  add("TCVT", F::kConvert, Pipe::V, "T", "T", kMoveFp8, kPassDefault, "dst = convert(src) with round mode none|rint|round|floor|ceil|trunc|odd");
  // Dtypes of TCMP / TCMPS are those of the compared source; the mask is a packed UINT8 tile.
  add("TCMP", F::kCompare, Pipe::V, "T", "TT", kNumeric, kBinaryDefault,
      "packed mask (UINT8, 1 bit per element) = a <cmp> b over a's valid region");
  add("TCMPS", F::kCompare, Pipe::V, "T", "TS", kNumeric, kScalarDefault,
      "packed mask (UINT8, 1 bit per element) = a <cmp> s over a's valid region");
  add("TSEL", F::kCompare, Pipe::V, "T", "TTT", kAny, kBinaryDefault,
      "dst[r, c] = bit (r, c) of the packed mask ? a[r, c] : b[r, c], over dst's valid region");

  // Reductions: rows -> rows x 1, columns -> 1 x cols, over the source's valid region.
  for (const char* n : {"TROWSUM", "TROWMAX", "TROWMIN", "TROWPROD"})
    add(n, F::kReduction, Pipe::V, "T", "Tt", kNumeric, kPassDefault, "dst[r, 0] = reduce over c of src[r, c]");
  for (const char* n : {"TCOLSUM", "TCOLMAX", "TCOLMIN", "TCOLPROD"})
    add(n, F::kReduction, Pipe::V, "T", "Tt", kNumeric, kPassDefault, "dst[0, c] = reduce over r of src[r, c]");

  // Broadcasts: b is rows x 1 (TROWEXPAND*) or 1 x cols (TCOLEXPAND*).
  add("TROWEXPAND", F::kExpand, Pipe::V, "T", "T", kAny, kPassDefault, "dst[r, c] = src[r, 0]");
  add("TCOLEXPAND", F::kExpand, Pipe::V, "T", "T", kAny, kPassDefault, "dst[r, c] = src[0, c]");
  for (const char* axis : {"ROW", "COL"}) {
    for (const char* op : {"ADD", "SUB", "MUL", "DIV", "MAX", "MIN"}) {
      std::string name = std::string("T") + axis + "EXPAND" + op;
      t.push_back(InstrDef{name, F::kExpand, Pipe::V, "T", "TT", kNumeric, kBinaryDefault,
                           std::string("dst = a ") + op + " broadcast(b)", {}});
    }
    t.push_back(InstrDef{std::string("T") + axis + "EXPANDEXPDIF", F::kExpand, Pipe::V, "T", "TT", kFloat,
                         vec(2.11 + 2.0, 24 + 31), "dst = exp(a - broadcast(b))", {}});  // TSUB then TEXP
  }

  // Cube: dtypes are those of left/right; the accumulator is FP32 (INT32 for INT8).
  add("TMATMUL", F::kMatmul, Pipe::M, "T", "TT", kCube, cube(), "acc = left @ right");
  add("TMATMUL_ACC", F::kMatmul, Pipe::M, "T", "TTT", kCube, cube(), "acc = acc_in + left @ right");
  add("TMATMUL_BIAS", F::kMatmul, Pipe::M, "T", "TTT", kCube, cube(), "acc = left @ right + bias (1 x N)");
  add("TGEMV", F::kMatmul, Pipe::M, "T", "TT", kCube, cube(), "acc[1, N] = left[1, K] @ right");
  add("TGEMV_ACC", F::kMatmul, Pipe::M, "T", "TTT", kCube, cube(), "acc[1, N] = acc_in + left[1, K] @ right");
  add("TGEMV_BIAS", F::kMatmul, Pipe::M, "T", "TTT", kCube, cube(), "acc[1, N] = left[1, K] @ right + bias");
  add_more_instrs(t);
  for (InstrDef& d : t) {
    d.memories = default_memories(d);
    if (d.name == "TCMP" || d.name == "TCMPS") d.mask = MaskUse::kWritesOut0;
    if (d.name == "TSEL" || d.name == "TSELS") d.mask = MaskUse::kReadsIn0;
  }
  return t;
}

const std::vector<InstrDef>& table() {
  static const std::vector<InstrDef> t = build_table();
  return t;
}

constexpr double kClockHz = 1.85e9;  // clock of the published figures (chip-model.md)

double bytes_to_cycles(double bytes, double gib_s, double startup) {
  return bytes / (gib_s * 1024.0 * 1024.0 * 1024.0) * kClockHz + startup;
}

}  // namespace

const char* packed_mask_layout_markdown() {
  return "**Packed masks.** TCMP and TCMPS write a mask tile and TSEL and TSELS read one: UINT8 bytes, one bit\n"
         "per element.\n\n"
         "- Element (r, c) is bit c % 8 (bit 0 = least significant) of byte (r, c / 8) of the mask tile: a mask\n"
         "  row holds ceil(cols / 8) bytes, the row stride is the mask tile's own column count (any count of at\n"
         "  least ceil(cols / 8)), and the tile starts 32-byte aligned like every tile. In numpy, the bytes of a\n"
         "  boolean array m are `np.packbits(m, axis=1, bitorder=\"little\")`.\n"
         "- TCMP / TCMPS compare over the valid region of their first source (vr x vc) and write rows 0 to vr-1,\n"
         "  bytes 0 to ceil(vc / 8)-1 of the mask. Bits of columns at or past vc in a row's last byte are 0;\n"
         "  other bytes of the mask tile are left unchanged.\n"
         "- TSEL / TSELS select over the destination's valid region (vr x vc) and read the same bits.\n"
         "- The mask tile needs at least vr rows and ceil(vc / 8) columns.\n"
         "- `pl.cmp` / `pl.cmps` on a rows x cols tile make a rows x M UINT8 mask tile, M = ceil(cols / 8)\n"
         "  rounded up to a multiple of 32 (whole 32-byte Vec rows, like every Vec tile), with valid shape\n"
         "  [valid rows, ceil(valid cols / 8)]: a 16 x 64 FP32 tile gives a 16 x 32 mask whose first 8 bytes\n"
         "  a row hold the bits. `pl.sel` takes such a mask, or any UINT8 tile of the same rows and at least\n"
         "  ceil(cols / 8) columns (e.g. a loaded np.packbits array).\n";
}

int InstrDef::min_ins() const {
  int n = 0;
  for (char c : ins_sig)
    if (c >= 'A' && c <= 'Z') ++n;
  return n;
}

bool InstrDef::allows(DataType t) const {
  for (DataType d : dtypes)
    if (d == t) return true;
  return false;
}

const InstrDef* find_instr(const std::string& name) {
  static const std::map<std::string, const InstrDef*> index = [] {
    std::map<std::string, const InstrDef*> m;
    for (const InstrDef& d : table()) m[d.name] = &d;
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

std::vector<const InstrDef*> all_instrs() {
  std::vector<const InstrDef*> out;
  for (const InstrDef& d : table()) out.push_back(&d);
  return out;
}

Pipe pipe_of(const Instr& instr, const Kernel& kernel) {
  const InstrDef* def = find_instr(instr.mnemonic);
  if (instr.kind != InstrKind::kTile || def == nullptr) return Pipe::S;
  auto source_memory = [&]() -> MemorySpace {
    const Operand& src = instr.ins.at(0);
    return src.kind == Operand::kTile ? kernel.tiles.at(src.index).memory : MemorySpace::DDR;
  };
  if (def->name == "TSTORE") return source_memory() == MemorySpace::Acc ? Pipe::FIX : Pipe::MTE3;
  if (def->name == "TPUSH") {
    switch (source_memory()) {
      case MemorySpace::Acc: return Pipe::FIX;
      case MemorySpace::Mat: return Pipe::MTE1;
      default: return Pipe::MTE3;
    }
  }
  if (def->name == "TINSERT" && source_memory() == MemorySpace::Acc) return Pipe::FIX;
  if (def->name == "TMOV") {
    switch (source_memory()) {
      case MemorySpace::Acc: return Pipe::FIX;
      case MemorySpace::Mat: return Pipe::MTE1;
      default: return Pipe::V;
    }
  }
  return def->pipe;
}

double transfer_cost_cycles(MemorySpace src, MemorySpace dst, int64_t bytes) {
  using M = MemorySpace;
  // Per-core bandwidths of chip-model.md in GiB/s. Acc -> Vec has no published figure and
  // uses Acc -> Mat's; any other pair uses the global -> UB figure.
  double gib_s = 100.9;
  if (src == M::DDR && dst == M::Mat) gib_s = 135;
  else if (src == M::Vec && dst == M::DDR) gib_s = 188.5;
  else if (src == M::Mat && dst == M::DDR) gib_s = 32;
  else if (src == M::Vec && dst == M::Vec) gib_s = 1024;
  else if (src == M::Acc && dst == M::DDR) gib_s = 70;
  else if (src == M::Acc && (dst == M::Mat || dst == M::Vec)) gib_s = 128;
  else if (src == M::Mat && dst == M::Left) gib_s = 441;
  else if (src == M::Mat && dst == M::Right) gib_s = 220.5;
  else if (src == M::Mat && dst == M::Bias) gib_s = 32;
  return bytes_to_cycles(static_cast<double>(bytes), gib_s, 30);
}

const char* part_role_name(PartRole r) {
  switch (r) {
    case PartRole::AIC: return "AIC";
    case PartRole::AIV0: return "AIV 0";
    case PartRole::AIV1: return "AIV 1";
  }
  return "?";
}

MemorySpace fifo_landing_memory(const std::string& peer) { return peer == "AIC" ? MemorySpace::Mat : MemorySpace::Vec; }

std::string fifo_peer(const Instr& instr) {
  auto it = instr.attrs.find(kPeerAttr);
  if (it == instr.attrs.end()) return "";
  const std::string* s = std::get_if<std::string>(&it->second);
  return s ? *s : "";
}

double instr_cost_cycles(const InstrDef& def, DataType dtype, int64_t rows, int64_t cols, int64_t k) {
  const int64_t bytes = dtype_bytes(dtype);
  if (def.family == InstrFamily::kMatmul) {
    const int64_t K = k > 0 ? k : cols;
    const int64_t k0 = 32 / bytes;
    auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
    double blocks = static_cast<double>(ceil_div(rows, 16) * ceil_div(K, k0) * ceil_div(cols, 16));
    if (dtype == DataType::FP32) blocks *= 2;  // fp32 runs the cube at half rate
    return 6 + blocks;
  }
  if (def.family == InstrFamily::kSync || def.pipe == Pipe::S) return def.cost.head;
  if (def.name == "TPREFETCH") return def.cost.startup_cycles;
  if (def.name == "TPOP") return def.cost.head;
  if (def.cost.bandwidth_gib_s > 0)
    return bytes_to_cycles(static_cast<double>(rows * cols * bytes), def.cost.bandwidth_gib_s, def.cost.startup_cycles);
  const double repeats = std::ceil(static_cast<double>(rows * cols * bytes) / 256.0);
  const bool ragged_rows = (cols * bytes) % 256 != 0;
  return def.cost.head + def.cost.slope * repeats + (ragged_rows ? 16 : 0);
}

}  // namespace pypto::isa
