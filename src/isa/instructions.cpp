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

// The table in family order; each family file (src/isa/families/<family>.cpp) appends its
// records, whole: operands, pipe, dtypes, memories, cost, summary, reference function.
std::vector<InstrDef> build_table() {
  std::vector<InstrDef> t;
  families::add_memory_family(t);       // TLOAD TSTORE MGATHER MSCATTER TPREFETCH: memory.cpp
  families::add_move_family(t);         // on-chip moves and views: move.cpp
  families::add_fill_family(t);         // TEXPANDS: generate.cpp
  families::add_elementwise_family(t);  // tile-tile, tile-scalar, unary: elementwise.cpp
  families::add_convert_family(t);      // TCVT: compare.cpp
  families::add_compare_family(t);
  families::add_reduction_family(t);    // reduction.cpp
  families::add_broadcast_family(t);    // broadcast.cpp
  families::add_matmul_family(t);       // the cube: matmul.cpp
  families::add_index_family(t);        // arg-reductions, gather/scatter, sort: index.cpp
  families::add_generate_family(t);     // TCI TTRI TRANDOM: generate.cpp
  families::add_sync_family(t);         // sync.cpp
  families::add_cross_core_family(t);   // cross_core.cpp
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
