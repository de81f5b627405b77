// The PTO instruction table and the cost formulas of chip-model.md. Published 910B3 fits
// are marked `published`; other vector instructions use the family default noted beside
// them (the closest published instruction of the same shape of work).
#include "pypto/isa/instructions.h"

#include "families/families.h"

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

using namespace families;
const std::vector<DataType> kMemoryDtypes = {FP32, FP16,   BF16,   INT32,  INT16, INT8,      UINT8,  UINT16,
                                             UINT32, INT64, UINT64, BOOL, FP8E4M3FN, FP8E5M2};

CostFigures xfer(double gib_s) { return {0, 0, gib_s, 30, true}; }  // startup: middle of the 15-60 range


using F = InstrFamily;

using M = MemorySpace;
// Where the destination tile of an instruction may live (the source for TSTORE / MSCATTER),
// by its pipe (chip-model.md): each record below states it; vector instructions write Vec.
const std::vector<MemorySpace> kVecOnly = {M::Vec};
const std::vector<MemorySpace> kNoTile = {};
const std::vector<MemorySpace> kViewMemories = {M::Vec, M::Mat, M::Left, M::Right, M::Acc};

// The instructions added with the complete tile library (issue 3): tile-scalar and
// ternary forms, arg-reductions, partial combines, generators, gather/scatter, sorting,
// views and the sync instructions.
void add_more_instrs(std::vector<InstrDef>& t) {
  auto add = [&](const char* name, F fam, Pipe pipe, const char* outs, const char* ins,
                 const std::vector<DataType>& dt, CostFigures cost, const char* summary,
                 const std::vector<MemorySpace>& memories = kVecOnly, MaskUse mask = MaskUse::kNone) {
    t.push_back(InstrDef{name, fam, pipe, outs, ins, dt, cost, summary, memories, mask});
  };
  families::add_index_family(t);     // arg-reductions, gather/scatter, sort: src/isa/families/index.cpp
  families::add_generate_family(t);  // TCI TTRI TRANDOM: src/isa/families/generate.cpp
  add("MGATHER", F::kMemory, Pipe::MTE2, "T", "GT", kAny, xfer(100.9), "dst[r, c] = tensor.flat[idx[r, c]]");
  add("MSCATTER", F::kMemory, Pipe::MTE3, "G", "TT", kAny, xfer(188.5), "tensor.flat[idx[r, c]] = src[r, c]");
  add("TPREFETCH", F::kMemory, Pipe::MTE2, "", "GL", kAny, xfer(100.9), "warm the cache for tensor[offsets] (no data moved in the model)", kNoTile);
  add("TRESHAPE", F::kMove, Pipe::S, "T", "T", kAny, vec(0, 1), "dst = src's bytes seen with dst's shape", kViewMemories);
  add("TSUBVIEW", F::kMove, Pipe::S, "T", "TL", kAny, vec(0, 1), "dst = src[offsets : offsets + dst's valid shape] (a view)", kViewMemories);
  add("TASSIGN", F::kMove, Pipe::S, "T", "S", kAny, vec(0, 1), "place tile dst at byte address s (addresses are planned: no data moves)", kViewMemories);
  add("TFILLPAD_INPLACE", F::kMove, Pipe::V, "T", "", kAny, kPassDefault, "dst outside its valid region = dst's pad value");
  add("TFILLPAD_EXPAND", F::kMove, Pipe::V, "T", "T", kAny, kPassDefault, "dst = src on src's valid region, dst's pad value on the rest of the larger dst");
  add("SET_FLAG", F::kSync, Pipe::S, "", "", kAny, vec(0, 1), "signal event attrs{event} from pipe attrs{src} to pipe attrs{dst}", kNoTile);
  add("WAIT_FLAG", F::kSync, Pipe::S, "", "", kAny, vec(0, 1), "pipe attrs{dst} waits for event attrs{event} from pipe attrs{src}", kNoTile);
  add("PIPE_BARRIER", F::kSync, Pipe::S, "", "", kAny, vec(0, 1), "pipe attrs{pipe} (or ALL) waits for every earlier instruction of that pipe (all pipes)", kNoTile);
  // pl.system ops: cross-core events, the GM fence, cache invalidation and the all-core
  // barrier. They move no data; the sim cycle model times them (docs/simulator.md, "pl.system"):
  // a cross-core event signals in one transfer startup (30 cycles, as a TPOP handshake), a
  // cache invalidation is a round trip to global memory (30), the others take one issue cycle
  // plus the waits they impose on the pipes.
  add("SYNC_SET", F::kSync, Pipe::S, "", "", kAny, vec(0, 30), "cross-core event attrs{event} set from pipe attrs{pipe} once its earlier instructions end (pl.system.sync_set)", kNoTile);
  add("SYNC_WAIT", F::kSync, Pipe::S, "", "", kAny, vec(0, 1), "pipe attrs{pipe} waits for cross-core event attrs{event} (pl.system.sync_wait)", kNoTile);
  add("SET_FFTS", F::kSync, Pipe::S, "", "", kAny, vec(0, 1), "FFTS base address setup (A3; pl.system.set_ffts)", kNoTile);
  add("FENCE", F::kSync, Pipe::S, "", "", kAny, vec(0, 1), "global-memory fence: later global-memory accesses wait for earlier writes to end (pl.system.fence)", kNoTile);
  add("CACHEINVALID", F::kSync, Pipe::S, "", "", kAny, vec(0, 30), "invalidate the data cache of global memory (pl.system.cacheinvalid)", kNoTile);
  add("PIPE_INIT", F::kSync, Pipe::S, "", "", kAny, vec(0, 1), "set up cross-core pipe attrs{id}: attrs{slot_num} slots of attrs{slot_size} bytes (the runtime sizes that pipe's FIFOs)", kNoTile);
  add("SYNCALL", F::kSync, Pipe::S, "", "", kAny, vec(0, 30), "barrier of every core of the launch, mode attrs{mode} over attrs{core_type} (pl.system.syncall)", kNoTile);
  // Cross-core tile FIFOs of a cluster (mixed tasks). TPUSH's pipe depends on its source
  // (pipe_of): FIX from Acc, MTE1 from Mat, MTE3 from Vec; its cost is the transfer from the
  // source to the peer's landing memory (Acc -> Vec: the L0C -> L1 figure). TPOP hands the
  // next filled slot to its destination tile (the data already lies in this core's buffer):
  // a handshake of one transfer startup on MTE2. TFREE gives the popped slot back to the
  // producer; its tile is an output, so the compiler orders it after every read of the tile.
  add("TPUSH", F::kCrossCore, Pipe::MTE3, "", "T", kAny, xfer(128),
      "push the tile into the FIFO towards attrs{peer}: blocks while every slot is full or popped but not freed", {M::Acc, M::Mat, M::Vec});
  add("TPOP", F::kCrossCore, Pipe::MTE2, "T", "", kAny, {30, 0, 0, 0, false},
      "dst = the oldest filled slot of the FIFO from attrs{peer} (blocks until one is pushed); dtype and shape must match the push", {M::Vec, M::Mat});
  add("TFREE", F::kCrossCore, Pipe::S, "T", "", kAny, vec(0, 1),
      "give the oldest popped slot of the FIFO from attrs{peer} back to its producer (dst: the popped tile, now dead)", {M::Vec, M::Mat});
}

std::vector<InstrDef> build_table() {
  std::vector<InstrDef> t;
  auto add = [&](const char* name, F fam, Pipe pipe, const char* outs, const char* ins,
                 const std::vector<DataType>& dt, CostFigures cost, const char* summary,
                 const std::vector<MemorySpace>& memories = kVecOnly, MaskUse mask = MaskUse::kNone) {
    t.push_back(InstrDef{name, fam, pipe, outs, ins, dt, cost, summary, memories, mask});
  };
  // Memory and on-chip movement.
  add("TLOAD", F::kMemory, Pipe::MTE2, "T", "GL", kMemoryDtypes, xfer(100.9), "tile = tensor[offsets] (valid region; pad fills the rest; attribute dims=[r, c]: rows and columns step tensor dims r and c, a strided box)", {M::Vec, M::Mat});
  add("TSTORE", F::kMemory, Pipe::MTE3, "G", "TL", kMemoryDtypes, xfer(188.5), "tensor[offsets] = tile (valid region; atomic add optional; dims=[r, c] as TLOAD)", {M::Vec, M::Mat, M::Acc});
  add("TMOV", F::kMove, Pipe::MTE1, "T", "T", kAny, xfer(441), "dst = src across memories, with fp32 -> fp16/bf16 conversion", {M::Vec, M::Mat, M::Left, M::Right, M::Bias});
  add("TTRANS", F::kMove, Pipe::V, "T", "T", kAny, kPassDefault, "dst[i, j] = src[j, i]");
  add("TFILLPAD", F::kMove, Pipe::V, "T", "T", kAny, kPassDefault, "dst = src on src's valid region, dst's pad value elsewhere");
  add("TEXTRACT", F::kMove, Pipe::V, "T", "TL", kAny, kPassDefault, "dst = src[offsets : offsets + dst's valid shape]", kViewMemories);
  add("TINSERT", F::kMove, Pipe::V, "T", "TL", kAny, kPassDefault, "dst[offsets : offsets + src's valid shape] = src; the rest of dst is kept (Vec into Vec; an Acc src into a Mat dst "
      "runs on the fixpipe, FIX, and may narrow FP32 to FP16 / BF16)", {M::Vec, M::Mat});
  add("TCONCAT", F::kMove, Pipe::V, "T", "TT", kAny, kPassDefault, "dst = [a | b]: b's columns follow a's");
  add("TEXPANDS", F::kFill, Pipe::V, "T", "S", kAny, kScalarDefault, "dst = scalar");

  // Tile-tile, tile-scalar and unary: src/isa/families/elementwise.cpp.
  families::add_elementwise_family(t);

  // Conversion, comparison, selection.
  families::add_convert_family(t);  // src/isa/families/compare.cpp
  families::add_compare_family(t);

  // Reductions and broadcasts: src/isa/families/reduction.cpp, broadcast.cpp.
  families::add_reduction_family(t);
  families::add_broadcast_family(t);

  // Cube: src/isa/families/matmul.cpp.
  families::add_matmul_family(t);
  add_more_instrs(t);
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
