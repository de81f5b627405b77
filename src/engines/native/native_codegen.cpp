// Kernel -> C++ for the native engine. Scalar code becomes C++ statements on register
// arrays (Python semantics), control flow becomes structured loops, while loops and ifs, and each tile
// instruction calls the optimised library when its dtypes and shapes have a fast path;
// otherwise (or when a runtime check fails) it calls back into the reference library.
#include <cmath>
#include <cstdio>
#include <map>
#include <functional>
#include <set>
#include <sstream>

#include "pypto/isa/instructions.h"
#include "pypto/isa/reference.h"
#include "pypto/base/scalar_cast.h"
#include "pypto/engines/native_engine.h"

namespace pypto::engines {

namespace {

using isa::Instr;
using isa::Kernel;
using isa::Operand;
using isa::Scalar;

struct Expr {
  std::string code;
  bool is_float = false;
};

std::string float_literal(double v) {
  if (std::isnan(v)) return "__builtin_nan(\"\")";
  if (std::isinf(v)) return v > 0 ? "__builtin_inf()" : "(-__builtin_inf())";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return "(" + s + ")";
}

class KernelWriter {
 public:
  KernelWriter(const Kernel& k, const isa::ChipSpec& chip) : k_(k), chip_(chip) {}

  // Appends the kernel's function; false when the kernel has a construct we do not emit.
  bool write(int index, std::ostringstream& out) {
    body_.str("");
    const int n = std::max(k_.num_regs, 1);
    body_ << "extern \"C\" void pto_kernel_" << index << "(const pto_frame* f) {\n";
    body_ << "  long long ri[" << n << "] = {}; double rf[" << n << "] = {};\n";
    body_ << "  (void)ri; (void)rf;\n";
    body_ << "#define FB(pc) f->fallback(f->host, pc, ri, rf)\n";
    plan_direct();
    int scalar_index = 0;
    for (const auto& p : k_.params) {
      if (p.is_tensor) continue;
      const int r = scalar_index++;
      if (r >= k_.num_regs) return false;
      body_ << "  " << reg(r) << " = f->" << (is_float_reg(r) ? "float_args" : "int_args") << "[" << r << "];\n";
    }
    std::vector<int> open;  // kLoopBegin pcs / -1 for ifs / -2 for while loops
    for (int pc = 0; pc < static_cast<int>(k_.code.size()); ++pc) {
      const Instr& in = k_.code[pc];
      using K = isa::InstrKind;
      switch (in.kind) {
        case K::kTile: tile(in, pc); break;
        case K::kScalarBin: scalar_bin(in, pc); break;
        case K::kScalarMov: assign(in.dst_reg, get(in.a)); break;
        case K::kScalarCast: {
          // The rule of pypto/base/scalar_cast.h, which the generated code includes.
          auto it = in.attrs.find("dtype");
          const DataType* d = it == in.attrs.end() ? nullptr : std::get_if<DataType>(&it->second);
          const int target = d ? scalar_cast_target(*d) : -1;
          if (target < 0) return false;
          const Expr a = get(in.a);
          const std::string t = std::to_string(target);
          if (scalar_cast_to_float(target))
            assign(in.dst_reg, {"pypto::scalar_cast_float(" + as_double(a) + ", " + t + ")", true});
          else if (a.is_float)
            assign(in.dst_reg, {"(long long)pypto::scalar_cast_float_to_int(" + a.code + ", " + t + ")", false});
          else
            assign(in.dst_reg, {"(long long)pypto::scalar_cast_int(" + a.code + ", " + t + ")", false});
          break;
        }
        case K::kScalarRead:
        case K::kScalarWrite: body_ << "  FB(" << pc << ");\n"; break;
        case K::kLoopBegin: {
          if (is_float_reg(in.dst_reg) || in.dst_reg < 0 || in.dst_reg >= k_.num_regs) return false;
          const std::string r = reg(in.dst_reg);
          body_ << "  { long long s_" << pc << " = " << as_int(get(in.step)) << "; if (s_" << pc << " <= 0) FB(" << pc << ");\n";
          body_ << "  " << r << " = " << as_int(get(in.a)) << ";\n";
          body_ << "  if (pto_opt::loop_continues(" << r << ", " << as_int(get(in.b)) << ", s_" << pc << ")) do {\n";
          open.push_back(pc);
          break;
        }
        case K::kLoopEnd: {
          if (open.empty() || open.back() < 0) return false;
          const Instr& b = k_.code[open.back()];
          const std::string s = "s_" + std::to_string(open.back());
          open.pop_back();
          body_ << "  if (pto_opt::cancelled(f)) FB(-1);\n";  // an interrupted run stops here
          body_ << "  " << s << " = " << as_int(get(b.step)) << "; " << reg(b.dst_reg) << " += " << s << ";\n";
          body_ << "  } while (pto_opt::loop_continues(" << reg(b.dst_reg) << ", " << as_int(get(b.b)) << ", " << s
                << ")); }\n";
          break;
        }
        case K::kIf:
          body_ << "  if (" << truth(get(in.a)) << ") {\n";
          open.push_back(-1);
          break;
        case K::kElse:
          if (open.empty() || open.back() != -1) return false;
          body_ << "  } else {\n";
          break;
        case K::kEndIf:
          if (open.empty() || open.back() != -1) return false;
          open.pop_back();
          body_ << "  }\n";
          break;
        // A while loop: its condition's code runs at the top of every iteration of `for (;;)`.
        case K::kWhileBegin:
          // The iteration count of this run of the loop; past the limit the reference path
          // (FB at the kWhileEnd) reports the endless loop.
          if (in.jump < 1 || in.jump > static_cast<int>(k_.code.size())) return false;
          body_ << "  { long long w_" << pc << " = 0; for (;;) {\n";
          open.push_back(-2);
          whiles_.push_back(pc);
          break;
        case K::kWhileCond:
          if (open.empty() || open.back() != -2) return false;
          body_ << "  if (!" << truth(get(in.a)) << ") break;\n";
          break;
        case K::kWhileEnd:
          if (open.empty() || open.back() != -2 || whiles_.empty()) return false;
          open.pop_back();
          body_ << "  if (++w_" << whiles_.back() << " >= " << isa::kMaxWhileIterations << "LL) FB(" << pc << ");\n";
          body_ << "  if (pto_opt::cancelled(f)) FB(-1);\n";
          body_ << "  } }\n";
          whiles_.pop_back();
          break;
        default: return false;
      }
    }
    if (!open.empty()) return false;
    body_ << "#undef FB\n}\n\n";
    out << body_.str();
    return true;
  }

  bool uses_matmul() const { return uses_matmul_; }

 private:
  // ---- matmul operands read straight from the global tensor --------------------------------
  // A Mat tile written only by TLOADs and read only by TMOVs into Left / Right tiles that only
  // matmuls read (as that operand) is never copied: the TLOAD records the tensor window
  // (pointer, row stride, rows, cols: gp/gl/gr/gc<tile>), the TMOV hands it on, and the
  // matmul reads A or B in place (a GEMV-shaped matmul streams each weight once). Whenever
  // that cannot hold at run time (a window that is not row-contiguous, a region outside the
  // window, the fast path refusing, the tensor overlapping one the kernel writes) the tile is
  // materialised first: the copies the TLOAD and TMOV would have made, then the usual code.
  std::set<int> direct_;                   // the tiles (Mat and Left / Right) taking part
  std::map<int, std::string> direct_ro_;   // tensor parameter -> its "not written here" flag
  bool tile_read_only_by(int t, const std::function<bool(const Instr&, size_t)>& ok) const {
    for (const Instr& in : k_.code)
      for (size_t i = 0; i < in.ins.size(); ++i)
        if (in.ins[i].kind == Operand::kTile && in.ins[i].index == t && !ok(in, i)) return false;
    return true;
  }
  static bool is_matmul(const Instr& in) {
    const isa::InstrDef* d = isa::find_instr(in.mnemonic);
    return d && d->family == isa::InstrFamily::kMatmul;
  }
  // Which input of matmul `in` is its Left (0) / Right (1) operand, else -1.
  static int matmul_operand(const Instr& in, size_t i) {
    const size_t first = in.mnemonic == "TMATMUL_ACC" || in.mnemonic == "TGEMV_ACC" ? 1 : 0;
    return i == first ? 0 : i == first + 1 ? 1 : -1;
  }
  // A TLOAD of a whole tensor parameter region of the tile's dtype into tile d.
  bool plain_load(const Instr& w, const isa::TileDesc& d) const {
    return w.kind == isa::InstrKind::kTile && w.mnemonic == "TLOAD" && w.outs.size() == 1 && w.ins.size() == 2 &&
           w.ins[0].kind == Operand::kTensor && w.ins[0].index >= 0 &&
           static_cast<size_t>(w.ins[0].index) < k_.params.size() && k_.params[w.ins[0].index].dtype == d.dtype;
  }
  // Whether input i of `in` (a vector instruction) is read through fast_path's P(pos) / ld(pos),
  // any row stride: the elementwise, scalar, reduce, broadcast and expand fast paths' sources.
  static bool vector_operand(const Instr& in, size_t i) {
    const isa::InstrDef* d = isa::find_instr(in.mnemonic);
    if (!d || in.kind != isa::InstrKind::kTile) return false;
    using K = isa::FastPath;
    switch (d->fast.kind) {
      case K::kBinary: case K::kRowExpand: case K::kColExpand: return i <= 1;
      case K::kWithScalar: case K::kUnary: case K::kRowReduce: case K::kColReduce: case K::kRowBroadcast:
      case K::kColBroadcast: return i == 0;
      default: return in.mnemonic == "TAXPY" && i == 0;
    }
  }
  // The source of a TTRANS into one tile (a K page seen transposed): read through the move
  // fast path's strided copy, any row stride.
  static bool transpose_source(const Instr& in, size_t i) {
    return in.kind == isa::InstrKind::kTile && in.mnemonic == "TTRANS" && i == 0 && in.outs.size() == 1 &&
           in.outs[0].kind == Operand::kTile;
  }
  bool share_bytes(int a, int b) const {
    const isa::TileDesc& x = k_.tiles[a];
    const isa::TileDesc& y = k_.tiles[b];
    const long long x1 = x.addr + x.rows * x.cols * dtype_bytes(x.dtype);
    const long long y1 = y.addr + y.rows * y.cols * dtype_bytes(y.dtype);
    return x.memory == y.memory && x.addr < y1 && y.addr < x1;
  }
  // Whether tile x is read on no path after instruction pc before its TLOAD / TMOV rewrites it
  // (conservative: false when unsure). Nested conditionals and loops entered after pc may not
  // run, so a TLOAD inside them does not count; at the end of a loop around pc the next
  // iteration's path (its body up to pc) is followed as well as the exit.
  bool dead_after(int x, int pc) const {
    const int n = static_cast<int>(k_.code.size());
    auto reads = [&](const Instr& in) {
      for (const Operand& o : in.ins)
        if (o.kind == Operand::kTile && o.index == x) return true;
      return false;
    };
    auto kills = [&](const Instr& in) {  // the writers of a direct tile: TLOADs (Mat, Vec), TMOVs (L0)
      return in.kind == isa::InstrKind::kTile && (in.mnemonic == "TLOAD" || in.mnemonic == "TMOV") &&
             !in.outs.empty() && in.outs[0].kind == Operand::kTile && in.outs[0].index == x;
    };
    enum Result { kLive, kDead, kOpen };
    // Scans [from, to) at nesting depth 0; kOpen when it reaches `to` (or a loop's end at depth 0:
    // *end set) undecided.
    auto scan = [&](int from, int to, int* end) -> Result {
      int depth = 0;
      for (int q = from; q < to && q < n; ++q) {
        const Instr& in = k_.code[q];
        if (reads(in)) return kLive;
        if (kills(in) && depth == 0) return kDead;
        switch (in.kind) {
          case isa::InstrKind::kIf: case isa::InstrKind::kLoopBegin: case isa::InstrKind::kWhileBegin: ++depth; break;
          case isa::InstrKind::kEndIf: if (depth > 0) --depth; break;
          case isa::InstrKind::kElse:  // the then-branch of an if around `from` skips the else-branch
            if (depth == 0 && in.jump > q) q = static_cast<int>(in.jump) - 1;
            break;
          case isa::InstrKind::kLoopEnd: case isa::InstrKind::kWhileEnd:
            if (depth > 0) { --depth; break; }
            if (end) *end = q;
            return kOpen;
          default: break;
        }
      }
      if (end) *end = n;
      return kOpen;
    };
    int from = pc + 1;
    for (int guard = 0; guard <= n; ++guard) {
      int end = n;
      const Result r = scan(from, n, &end);
      if (r != kOpen) return r == kDead;
      if (end >= n) return true;  // the kernel ends: never read again
      // The end of a loop around pc: its next iteration (from the body's start up to pc), then the exit.
      const Instr& e = k_.code[end];
      const int body = static_cast<int>(e.kind == isa::InstrKind::kWhileEnd ? e.jump + 1 : e.jump);
      if (body <= pc && scan(body, pc + 1, nullptr) == kLive) return false;
      from = end + 1;
    }
    return false;
  }
  void plan_direct() {
    direct_.clear();
    direct_ro_.clear();
    const int nt = static_cast<int>(k_.tiles.size());
    std::vector<std::vector<const Instr*>> writers(nt);
    std::set<int> written_tensors;
    for (const Instr& in : k_.code) {
      for (const Operand& o : in.outs) {
        if (o.kind == Operand::kTile && o.index >= 0 && o.index < nt) writers[o.index].push_back(&in);
        if (o.kind == Operand::kTensor) written_tensors.insert(o.index);
      }
      for (size_t i = 0; i < in.ins.size(); ++i) {
        const Operand& o = in.ins[i];
        // Tensors any instruction other than a TLOAD / scalar read hands over: treated as written.
        if (o.kind == Operand::kTensor && !(i == 0 && ((in.kind == isa::InstrKind::kTile && in.mnemonic == "TLOAD") ||
                                                       in.kind == isa::InstrKind::kScalarRead)))
          written_tensors.insert(o.index);
      }
    }
    auto placed = [&](int t) { return t >= 0 && t < nt && tile_of(Operand::tile(t)) != nullptr; };
    // L0 tiles: written only by TMOVs of one dtype, read only by matmuls as Left / Right.
    std::set<int> l0;
    for (int t = 0; t < nt; ++t) {
      const isa::TileDesc& d = k_.tiles[t];
      if ((d.memory != MemorySpace::Left && d.memory != MemorySpace::Right) || !placed(t) || writers[t].empty()) continue;
      const int want = d.memory == MemorySpace::Left ? 0 : 1;
      bool ok = true;
      for (const Instr* w : writers[t])
        ok = ok && w->kind == isa::InstrKind::kTile && w->mnemonic == "TMOV" && w->outs.size() == 1 &&
             w->ins.size() == 1 && w->ins[0].kind == Operand::kTile && placed(w->ins[0].index) &&
             k_.tiles[w->ins[0].index].dtype == d.dtype && k_.tiles[w->ins[0].index].memory == MemorySpace::Mat;
      ok = ok && tile_read_only_by(t, [&](const Instr& in, size_t i) {
             return in.kind == isa::InstrKind::kTile && is_matmul(in) && matmul_operand(in, i) == want;
           });
      if (ok) l0.insert(t);
    }
    // Mat tiles: written only by plain TLOADs (no pad, same dtype), read only by TMOVs into those L0 tiles.
    for (int t = 0; t < nt; ++t) {
      const isa::TileDesc& d = k_.tiles[t];
      if (d.memory != MemorySpace::Mat || !placed(t) || writers[t].empty() || d.pad != PadValue::null) continue;
      bool ok = true;
      for (const Instr* w : writers[t]) ok = ok && plain_load(*w, d);
      std::vector<int> dsts;
      bool transposed = false;  // read by a TTRANS, which reads the window in place (transpose_source)
      ok = ok && tile_read_only_by(t, [&](const Instr& in, size_t i) {
             if (transpose_source(in, i)) return transposed = true;
             if (in.kind != isa::InstrKind::kTile || in.mnemonic != "TMOV" || in.outs.size() != 1 ||
                 in.outs[0].kind != Operand::kTile || !l0.count(in.outs[0].index))
               return false;
             dsts.push_back(in.outs[0].index);
             return true;
           });
      if (!ok || (dsts.empty() && !transposed)) continue;
      direct_.insert(t);
      for (int y : dsts) direct_.insert(y);
    }
    // Vec tiles written only by plain TLOADs: their readers with a strided fast path (vector_operand)
    // read the tensor window in place; any other tile instruction reading them materialises the
    // copy first.
    for (int t = 0; t < nt; ++t) {
      const isa::TileDesc& d = k_.tiles[t];
      if (d.memory != MemorySpace::Vec || !placed(t) || writers[t].empty() || d.pad != PadValue::null) continue;
      bool ok = true;
      for (const Instr* w : writers[t])
        ok = ok && plain_load(*w, d);
      if (!ok) continue;
      direct_.insert(t);
    }
    // Not a tile that a scalar instruction reads or writes element by element (pl.read / pl.write
    // of a tile), nor one sharing bytes with such a tile: those instructions see only the bytes.
    for (const Instr& in : k_.code)
      if (in.kind != isa::InstrKind::kTile)
        for (const auto* list : {&in.ins, &in.outs})
          for (const Operand& o : *list)
            if (o.kind == Operand::kTile && placed(o.index))
              std::erase_if(direct_, [&](int t) { return t == o.index || share_bytes(o.index, t); });
    // An L0 tile some of whose writers read a Mat tile that does not take part: not direct.
    for (int t : l0)
      if (direct_.count(t))
        for (const Instr* w : writers[t])
          if (!direct_.count(w->ins[0].index)) direct_.erase(t);
    // The placed tiles sharing bytes with each direct tile (the memory plan reuses a dead tile's
    // bytes; a view aliases them): handled per instruction (tile()).
    overlaps_.clear();
    for (int x : direct_)
      for (int t = 0; t < nt; ++t)
        if (t != x && placed(t) && share_bytes(t, x)) overlaps_[x].insert(t);
    if (direct_.empty()) return;
    // The tensors the remaining direct tiles' TLOADs read (L0 tiles are written by TMOVs).
    for (int t : direct_)
      if (k_.tiles[t].memory == MemorySpace::Mat || k_.tiles[t].memory == MemorySpace::Vec)
        for (const Instr* w : writers[t]) direct_ro_[w->ins[0].index];
    for (int t : direct_) {
      const std::string n = std::to_string(t);
      body_ << "  const unsigned char* gp" << n << " = nullptr; long long gl" << n << " = 0, gr" << n << " = 0, gc" << n
            << " = 0; (void)gp" << n << "; (void)gl" << n << "; (void)gr" << n << "; (void)gc" << n << ";\n";
    }
    // A tensor read in place must not share bytes with one this kernel writes (checked per call).
    for (auto& [i, flag] : direct_ro_) {
      flag = "ro" + std::to_string(i);
      body_ << "  const bool " << flag << " = true";
      for (int w : written_tensors)
        if (w >= 0 && static_cast<size_t>(w) < k_.params.size() && w != i)
          body_ << " && !pto_opt::tensors_overlap(f->tensors[" << i << "], f->tensors[" << w << "])";
      if (written_tensors.count(i)) body_ << " && false";
      body_ << ";\n";
    }
  }
  // The copy that makes direct tile t hold its window (what its TLOAD / TMOV would have copied).
  std::string materialize(int t) const {
    const isa::TileDesc& d = k_.tiles[t];
    const std::string n = std::to_string(t);
    return "if (gp" + n + ") { f->support->copy_region(" + ptr(d, "unsigned char") + ", " + std::to_string(d.cols) +
           ", 1, gp" + n + ", gl" + n + ", 1, gr" + n + ", gc" + n + ", " + std::to_string(dtype_bytes(d.dtype)) +
           "); gp" + n + " = nullptr; }";
  }

  std::vector<int> whiles_;  // kWhileBegin pcs of the open while loops
  bool is_float_reg(int r) const { return r >= 0 && static_cast<size_t>(r) < k_.reg_is_float.size() && k_.reg_is_float[r]; }
  std::string reg(int r) const { return (is_float_reg(r) ? "rf[" : "ri[") + std::to_string(r) + "]"; }

  Expr get(const Scalar& s) const {
    if (s.kind == Scalar::kReg) {
      if (s.reg < 0 || s.reg >= k_.num_regs) return {"ri[0]", false};  // unreachable for valid code
      return {reg(s.reg), is_float_reg(s.reg)};
    }
    if (s.is_float) return {float_literal(s.f), true};
    return {"(" + std::to_string(s.i) + "LL)", false};
  }
  static std::string as_int(const Expr& e) { return e.is_float ? "pto_opt::to_int(" + e.code + ")" : e.code; }
  static std::string as_double(const Expr& e) { return e.is_float ? e.code : "((double)" + e.code + ")"; }
  static std::string truth(const Expr& e) { return "(" + e.code + " != 0)"; }

  void assign(int dst, const Expr& v) {
    if (dst < 0 || dst >= k_.num_regs) return;
    body_ << "  " << reg(dst) << " = " << (is_float_reg(dst) ? as_double(v) : as_int(v)) << ";\n";
  }

  void scalar_bin(const Instr& in, int pc) {
    const Expr a = get(in.a), b = get(in.b);
    const bool fl = a.is_float || b.is_float;
    const std::string x = as_double(a), y = as_double(b), i = as_int(a), j = as_int(b);
    auto zero_check = [&] {
      if (!fl) body_ << "  if (" << j << " == 0) FB(" << pc << ");\n";
    };
    // Integer + - *: an overflowing result (base/scalar_ops.h) runs the instruction on the
    // reference path, which reports it at the user's line.
    auto arith = [&](const char* op) -> Expr {
      if (fl) return {"(" + x + " " + op + " " + y + ")", true};
      const char* check = op[0] == '+' ? "add" : op[0] == '-' ? "sub" : "mul";
      const std::string o = "o_" + std::to_string(pc);
      body_ << "  long long " << o << "; if (pypto::scalar::" << check << "_overflows(" << i << ", " << j << ", &" << o
            << ")) FB(" << pc << ");\n";
      return {o, false};
    };
    auto cmp = [&](const char* op) -> Expr {
      return {"((" + (fl ? x : i) + " " + op + " " + (fl ? y : j) + ") ? 1LL : 0LL)", false};
    };
    Expr r;
    switch (in.sop) {
      case BinaryOp::Add: r = arith("+"); break;
      case BinaryOp::Sub: r = arith("-"); break;
      case BinaryOp::Mul: r = arith("*"); break;
      case BinaryOp::Div: zero_check(); r = {"(" + x + " / " + y + ")", true}; break;
      case BinaryOp::FloorDiv:
        zero_check();
        r = fl ? Expr{"pto_opt::float_floor_div(" + x + ", " + y + ")", true} : Expr{"pto_opt::int_floor_div(" + i + ", " + j + ")", false};
        break;
      case BinaryOp::Mod:
        zero_check();
        r = fl ? Expr{"pto_opt::float_mod(" + x + ", " + y + ")", true} : Expr{"pto_opt::int_floor_mod(" + i + ", " + j + ")", false};
        break;
      case BinaryOp::Min:
        r = fl ? Expr{"__builtin_fmin(" + x + ", " + y + ")", true} : Expr{"(" + i + " < " + j + " ? " + i + " : " + j + ")", false};
        break;
      case BinaryOp::Max:
        r = fl ? Expr{"__builtin_fmax(" + x + ", " + y + ")", true} : Expr{"(" + i + " > " + j + " ? " + i + " : " + j + ")", false};
        break;
      case BinaryOp::Eq: r = cmp("=="); break;
      case BinaryOp::Ne: r = cmp("!="); break;
      case BinaryOp::Lt: r = cmp("<"); break;
      case BinaryOp::Le: r = cmp("<="); break;
      case BinaryOp::Gt: r = cmp(">"); break;
      case BinaryOp::Ge: r = cmp(">="); break;
      case BinaryOp::And: r = {"((" + truth(a) + " && " + truth(b) + ") ? 1LL : 0LL)", false}; break;
      case BinaryOp::Or: r = {"((" + truth(a) + " || " + truth(b) + ") ? 1LL : 0LL)", false}; break;
    }
    assign(in.dst_reg, r);
  }

  // ---- tiles ----------------------------------------------------------------------------
  const isa::TileDesc* tile_of(const Operand& o) const {
    if (o.kind != Operand::kTile || o.index < 0 || static_cast<size_t>(o.index) >= k_.tiles.size()) return nullptr;
    const isa::TileDesc& d = k_.tiles[o.index];
    if (d.memory == MemorySpace::DDR || d.addr < 0 || d.rows < 0 || d.cols < 0) return nullptr;
    if (d.addr + d.rows * d.cols * dtype_bytes(d.dtype) > chip_.capacity(d.memory)) return nullptr;
    return &d;
  }
  static std::string ptr(const isa::TileDesc& d, const char* type = "float") {
    return "((" + std::string(type) + "*)(f->buffers[" + std::to_string(static_cast<int>(d.memory)) + "] + " +
           std::to_string(d.addr) + "))";
  }
  std::string vr(int t) const { return "vr" + std::to_string(t); }
  std::string vc(int t) const { return "vc" + std::to_string(t); }

  // The fast-path C++ of `in` (using vr<i>/vc<i> of its tile operands and `ok`), or "".
  std::string fast_path(const Instr& in, const std::vector<const isa::TileDesc*>& tiles) {
    const std::string& m = in.mnemonic;
    const isa::InstrDef* def = isa::find_instr(m);
    if (!def) return "";
    auto covers = [&](int t, const std::string& rows, const std::string& cols) {
      return "(" + rows + " <= " + std::to_string(tiles[t]->rows) + " && " + cols + " <= " + std::to_string(tiles[t]->cols) +
             ")";
    };
    // A source read in place (operand_ptr_ / operand_ld_: its window's pointer and row stride).
    auto ld = [&](int t) {
      auto it = operand_ld_.find(t);
      return it != operand_ld_.end() ? it->second : std::to_string(tiles[t]->cols);
    };
    // The arithmetic paths' element type: every tile fp32, every tile fp16 or every tile bf16.
    std::string T = tiles.empty() ? "" : float_type(tiles[0]->dtype);
    for (const auto* t : tiles)
      if (t->dtype != tiles[0]->dtype) T = "";
    auto P = [&](int t) {
      auto it = operand_ptr_.find(t);
      return it != operand_ptr_.end() ? "((" + T + "*)" + it->second + ")" : ptr(*tiles[t], T.c_str());
    };
    const std::string R = vr(0), C = vc(0);
    // A scalar operand rounded to the element type, as the reference's Splat does.
    auto scalar_f = [&](const Operand& o) {
      const std::string d = as_double(get(o.scalar));
      return T == "float" ? "(float)" + d : "pto_opt::scalar_of<" + T + ">(" + d + ")";
    };

    if (m == "TLOAD" || m == "TSTORE") {
      const bool load = m == "TLOAD";
      const Operand& tens = load ? in.ins.at(0) : in.outs.at(0);
      const Operand& offs = in.ins.at(1);
      if (tens.kind != Operand::kTensor || offs.kind != Operand::kScalarList || tiles.size() != 1) return "";
      if (tens.index < 0 || static_cast<size_t>(tens.index) >= k_.params.size()) return "";
      const isa::TileDesc& t = *tiles[0];
      if (k_.params[tens.index].dtype != t.dtype) return "";
      std::string off = "const long long off[] = {";
      for (size_t i = 0; i < offs.list.size(); ++i) off += (i ? ", " : "") + as_int(get(offs.list[i]));
      if (offs.list.empty()) off += "0";
      off += "};";
      const std::string tensor = "f->tensors[" + std::to_string(tens.index) + "]";
      const std::string n = std::to_string(offs.list.size());
      auto fold_it = in.attrs.find("fold_rows");  // the rows of an N-D tile (reference_memory.cpp)
      const std::string fold = fold_it != in.attrs.end() && fold_it->second == AttrValue(true) ? "true" : "false";
      std::string dims = ", -1, -1";  // a strided box of two other dims (isa::box_dims)
      if (in.attrs.count("dims")) {
        auto [rd, cd] = isa::box_dims(in, static_cast<int>(offs.list.size()));
        dims = ", " + std::to_string(rd) + ", " + std::to_string(cd);
      }
      if (load) {
        if (t.pad != PadValue::null && t.dtype != DataType::FP32) return "";
        window_off_ = off;
        window_call_ = "pto_opt::tensor_window(" + tensor + ", off, " + n + ", " + R + ", " + C + ", " + fold + dims;
        const float pad = t.pad == PadValue::max ? 3.4028234663852886e38f : t.pad == PadValue::min ? -3.4028234663852886e38f : 0.0f;
        return off + " ok = f->support->tload(" + ptr(t, "unsigned char") + ", " + std::to_string(t.cols) + ", " +
               std::to_string(t.rows) + ", " + R + ", " + C + ", " + tensor + ", off, " + n + ", " +
               (t.pad != PadValue::null ? "true" : "false") + ", " + "(float)" + float_literal(pad) + ", " + fold + dims + ");";
      }
      std::string atomic = "none";
      auto it = in.attrs.find("atomic");
      if (it != in.attrs.end()) {
        if (auto* s = std::get_if<std::string>(&it->second)) atomic = *s;
        else return "";
      }
      if (atomic != "none" && !(atomic == "add" && t.dtype == DataType::FP32)) return "";
      return off + " ok = f->support->tstore(" + tensor + ", off, " + n + ", " + ptr(t, "unsigned char") + ", " +
             std::to_string(t.cols) + ", " + R + ", " + C + ", " + (atomic == "add" ? "true" : "false") + ", " + fold + dims + ");";
    }
    if (m == "TMOV") {
      if (tiles.size() != 2 || tiles[0]->dtype != tiles[1]->dtype) return "";
      return "ok = " + covers(1, R, C) + "; if (ok) f->support->copy_region(" + ptr(*tiles[0], "unsigned char") + ", " + ld(0) +
             ", 1, " + ptr(*tiles[1], "unsigned char") + ", " + ld(1) + ", 1, " + R + ", " + C + ", " +
             std::to_string(dtype_bytes(tiles[0]->dtype)) + ");";
    }
    if (m == "TTRANS" || m == "TEXTRACT" || m == "TSUBVIEW" || m == "TFILLPAD" || m == "TFILLPAD_EXPAND" ||
        m == "TFILLPAD_INPLACE")
      return move_path(in, tiles);
    if (m == "TINSERT") return insert_path(in, tiles);
    if (m == "TCONCAT") return concat_path(tiles);
    if (m == "TGATHER") return gather_path(tiles);
    if (m == "TROWARGMAX" || m == "TROWARGMIN" || m == "TCOLARGMAX" || m == "TCOLARGMIN") return arg_reduce_path(m, tiles);
    if (def->mask != isa::MaskUse::kNone) return mask_path(in, *def, tiles);
    if (m == "TCVT") return convert_path(in, tiles);
    if (T.empty() && !(def && def->family == isa::InstrFamily::kMatmul)) return "";  // FP16 / BF16 matmul operands: below
    if (m == "TTRI" || m == "TCI") return generate_path(in, T, tiles);
    // The partial forms where both sources are valid over dst's valid region: the binary op.
    if ((m == "TPARTADD" || m == "TPARTMUL" || m == "TPARTMAX" || m == "TPARTMIN") && tiles.size() == 3) {
      const std::string f = m == "TPARTADD" ? "Add" : m == "TPARTMUL" ? "Mul" : m == "TPARTMAX" ? "Max" : "Min";
      return "ok = vr1 >= " + R + " && vc1 >= " + C + " && vr2 >= " + R + " && vc2 >= " + C + "; if (ok) pto_opt::binary(" +
             P(0) + ", " + ld(0) + ", " + P(1) + ", " + ld(1) + ", " + P(2) + ", " + ld(2) + ", " + R + ", " + C +
             ", pto_opt::" + f + "{});";
    }
    // The instruction record's fast path (src/isa/families/<family>.cpp).
    const isa::FastPath& fast = def->fast;
    if (fast.kind == isa::FastPath::kBinary && tiles.size() == 3)
      return "ok = " + covers(1, R, C) + " && " + covers(2, R, C) + "; if (ok) pto_opt::binary(" + P(0) + ", " + ld(0) +
             ", " + P(1) + ", " + ld(1) + ", " + P(2) + ", " + ld(2) + ", " + R + ", " + C + ", pto_opt::" + fast.functor +
             "{});";
    if (fast.kind == isa::FastPath::kWithScalar && tiles.size() == 2 && in.ins.size() == 2)
      return "ok = " + covers(1, R, C) + "; if (ok) pto_opt::with_scalar(" + P(0) + ", " + ld(0) + ", " + P(1) + ", " +
             ld(1) + ", " + scalar_f(in.ins[1]) + ", " + R + ", " + C + ", pto_opt::" + fast.functor + "{});";
    if (m == "TAXPY" && tiles.size() == 2)
      return "ok = " + covers(1, R, C) + "; if (ok) pto_opt::axpy(" + P(0) + ", " + ld(0) + ", " + P(1) + ", " + ld(1) +
             ", " + scalar_f(in.ins[1]) + ", " + R + ", " + C + ");";
    if (fast.kind == isa::FastPath::kUnary && tiles.size() == 2)
      return "ok = " + covers(1, R, C) + "; if (ok) pto_opt::unary(" + P(0) + ", " + ld(0) + ", " + P(1) + ", " + ld(1) +
             ", " + R + ", " + C + ", pto_opt::" + fast.functor + "{});";
    if (m == "TEXPANDS" && tiles.size() == 1)
      return "pto_opt::fill(" + P(0) + ", " + ld(0) + ", " + scalar_f(in.ins[0]) + ", " + R + ", " + C + ");";
    if ((fast.kind == isa::FastPath::kRowReduce || fast.kind == isa::FastPath::kColReduce) && tiles.size() >= 2) {
      const bool rows = fast.kind == isa::FastPath::kRowReduce;
      const std::string& op = fast.functor;
      const std::string SR = vr(1), SC = vc(1);
      // A scratch tile (PyPTO's tmp_tile) selects the binary-tree order (docs/isa.md).
      const std::string tree = tiles.size() >= 3 ? "true" : "false";
      if (rows)
        return "ok = " + SR + " <= " + std::to_string(tiles[0]->rows) + " && " + SC + " > 0 && " + SC +
               " * 4 <= f->scratch_bytes; if (ok) pto_opt::row_reduce(" + P(0) + ", " + ld(0) + ", " + P(1) + ", " +
               ld(1) + ", " + SR + ", " + SC + ", pto_opt::" + op + "{}, " + tree + ", (float*)f->scratch);";
      return "ok = " + SC + " <= " + std::to_string(tiles[0]->cols) + " && " + SR + " > 0 && " + SR + " * " + SC +
             " * 4 <= f->scratch_bytes; if (ok) pto_opt::col_reduce(" + P(0) + ", " + P(1) + ", " + ld(1) + ", " + SR +
             ", " + SC + ", pto_opt::" + op + "{}, " + tree + ", (float*)f->scratch);";
    }
    if (fast.kind == isa::FastPath::kRowBroadcast && tiles.size() == 2)
      return "ok = " + covers(1, R, "1") + "; if (ok) pto_opt::row_broadcast(" + P(0) + ", " + ld(0) + ", " + P(1) + ", " +
             ld(1) + ", " + R + ", " + C + ");";
    if (fast.kind == isa::FastPath::kColBroadcast && tiles.size() == 2)
      return "ok = " + covers(1, "1", C) + "; if (ok) pto_opt::col_broadcast(" + P(0) + ", " + ld(0) + ", " + P(1) + ", " +
             R + ", " + C + ");";
    if (fast.kind == isa::FastPath::kRowExpand && tiles.size() == 3)
      return "ok = " + covers(1, R, C) + " && " + covers(2, R, "1") + "; if (ok) pto_opt::row_expand(" + P(0) + ", " +
             ld(0) + ", " + P(1) + ", " + ld(1) + ", " + P(2) + ", " + ld(2) + ", " + R + ", " + C + ", pto_opt::" +
             fast.functor + "{});";
    if (fast.kind == isa::FastPath::kColExpand && tiles.size() == 3)
      return "ok = " + covers(1, R, C) + " && " + covers(2, "1", C) + "; if (ok) pto_opt::col_expand(" + P(0) + ", " +
             ld(0) + ", " + P(1) + ", " + ld(1) + ", " + P(2) + ", " + R + ", " + C + ", pto_opt::" + fast.functor + "{});";
    // FP16 / BF16 operands into an FP32 Acc: matmul.h's half paths (vdpbf16ps, or widened while packing).
    std::string H;
    if (def->family == isa::InstrFamily::kMatmul && T.empty() && tiles.size() >= 3 &&
        tiles[0]->dtype == DataType::FP32) {
      const bool acc_in0 = m == "TMATMUL_ACC" || m == "TGEMV_ACC";
      const size_t first0 = acc_in0 ? 2 : 1;
      if (tiles.size() >= first0 + 2 && tiles[first0]->dtype == tiles[first0 + 1]->dtype &&
          (tiles[first0]->dtype == DataType::FP16 || tiles[first0]->dtype == DataType::BF16) &&
          (!acc_in0 || tiles[1]->dtype == DataType::FP32))
        H = float_type(tiles[first0]->dtype);
    }
    if (def->family == isa::InstrFamily::kMatmul && (T == "float" || !H.empty())) {
      // The fast path reads ND (row-major) operands; other layouts go through the reference.
      for (const char* key : {"left_layout", "right_layout"}) {
        auto it = in.attrs.find(key);
        if (it != in.attrs.end() && !(std::holds_alternative<std::string>(it->second) &&
                                      std::get<std::string>(it->second) == "ND"))
          return "";
      }
      const bool acc_in = m == "TMATMUL_ACC" || m == "TGEMV_ACC";
      const bool bias = m == "TMATMUL_BIAS" || m == "TGEMV_BIAS";
      const int first = acc_in ? 2 : 1;  // tiles: acc, [acc_in], left, right, [bias]
      if (static_cast<int>(tiles.size()) < first + 2) return "";
      const int L = first, Rt = first + 1;
      const std::string K = vc(L);
      std::string cond = covers(L, R, K) + " && " + covers(Rt, K, C) + " && pto_opt::matmul_scratch_floats(" + R + ", " +
                         C + ", " + K + ") * 4 <= f->scratch_bytes";
      auto PF = [&](int t) { return ptr(*tiles[t], "float"); };
      auto PO = [&](int t) {
        const std::string ty = H.empty() ? "float" : H;
        if (auto it = operand_ptr_.find(t); it != operand_ptr_.end()) return "((const " + ty + "*)" + it->second + ")";
        return ptr(*tiles[t], ty.c_str());
      };
      auto LD = [&](int t) {
        auto it = operand_ld_.find(t);
        return it != operand_ld_.end() ? it->second : ld(t);
      };
      std::string mode = "0", init = "nullptr", ldi = "0";
      if (acc_in) {
        mode = "1", init = PF(1), ldi = ld(1);
        cond += " && " + covers(1, R, C);
      } else if (bias) {
        if (tiles.size() != 4) return "";
        mode = "2", init = PF(3), ldi = "0";
        cond += " && " + covers(3, "1", C);
      }
      uses_matmul_ = true;
      return "ok = " + cond + "; if (ok) pto_opt::" + "matmul(" + PF(0) + ", " + ld(0) +
             ", " + PO(L) + ", " + LD(L) + ", " + PO(Rt) + ", " + LD(Rt) + ", " + R + ", " + C + ", " + K + ", " + mode +
             ", " + init + ", " + ldi + ", (float*)f->scratch);";
    }
    return "";
  }

  // The C++ element type of a float dtype on the arithmetic fast paths ("" when none).
  static std::string float_type(DataType t) {
    switch (t) {
      case DataType::FP32: return "float";
      case DataType::FP16: return "pto_opt::f16";
      case DataType::BF16: return "pto_opt::bf16";
      default: return "";
    }
  }

  // TCVT between fp32, fp16 and bf16 (tiles: dst, src). Widening is exact under every round
  // mode; narrowing has fast paths for nearest with ties to even (none, rint) and ties away
  // from zero (round, pl.cast's default); a copy to
  // the same half type moves the bits. Unknown modes go to the reference, which reports them.
  std::string convert_path(const Instr& in, const std::vector<const isa::TileDesc*>& tiles) {
    if (tiles.size() != 2) return "";
    const std::string D = float_type(tiles[0]->dtype), S = float_type(tiles[1]->dtype);
    if (D.empty() || S.empty() || (D == "float" && S == "float")) return "";
    std::string mode = "none";
    if (auto it = in.attrs.find("mode"); it != in.attrs.end()) {
      if (auto* s = std::get_if<std::string>(&it->second)) mode = *s;
      else return "";
    }
    static const std::set<std::string> modes = {"none", "rint", "round", "floor", "ceil", "trunc", "odd"};
    if (!modes.count(mode)) return "";
    const bool away = mode == "round";  // ties away from zero (pl.cast's default)
    if (D != "float" && D != S && mode != "none" && mode != "rint" && !away) return "";
    const std::string R = vr(0), C = vc(0);
    const std::string cond = "ok = (" + R + " <= " + std::to_string(tiles[1]->rows) + " && " + C +
                             " <= " + std::to_string(tiles[1]->cols) + ");";
    const std::string l0 = std::to_string(tiles[0]->cols), l1 = std::to_string(tiles[1]->cols);
    if (D == S)
      return cond + " if (ok) f->support->copy_region(" + ptr(*tiles[0], "unsigned char") + ", " + l0 + ", 1, " +
             ptr(*tiles[1], "unsigned char") + ", " + l1 + ", 1, " + R + ", " + C + ", 2);";
    const char* fn = away && D != "float" ? "convert_away" : "convert";
    return cond + " if (ok) pto_opt::" + fn + "(" + ptr(*tiles[0], D.c_str()) + ", " + l0 + ", " +
           ptr(*tiles[1], S.c_str()) + ", " + l1 + ", " + R + ", " + C + ");";
  }

  // TINSERT: src's valid region into dst at (row, col), copied, or narrowed from fp32 to
  // fp16 / bf16 (an Acc tile entering a Mat tile) with round-to-nearest-even as the reference.
  std::string insert_path(const Instr& in, const std::vector<const isa::TileDesc*>& tiles) {
    if (tiles.size() != 2 || in.ins.size() != 2 || in.ins[1].kind != Operand::kScalarList || in.ins[1].list.size() != 2)
      return "";
    const isa::TileDesc &d = *tiles[0], &s = *tiles[1];
    const std::string D = float_type(d.dtype), S = float_type(s.dtype);
    if (d.dtype != s.dtype && (S != "float" || D.empty())) return "";
    const std::string r0 = "(" + as_int(get(in.ins[1].list[0])) + ")", c0 = "(" + as_int(get(in.ins[1].list[1])) + ")";
    const std::string SR = vr(1), SC = vc(1), ld0 = std::to_string(d.cols), ld1 = std::to_string(s.cols);
    const std::string at = r0 + " * " + ld0 + " + " + c0;
    std::string code = "ok = " + r0 + " >= 0 && " + c0 + " >= 0 && " + r0 + " + " + SR + " <= " + std::to_string(d.rows) +
                       " && " + c0 + " + " + SC + " <= " + std::to_string(d.cols) + "; if (ok) ";
    if (d.dtype == s.dtype) {
      const std::string bytes = std::to_string(dtype_bytes(d.dtype));
      return code + "f->support->copy_region(" + ptr(d, "unsigned char") + " + (" + at + ") * " + bytes + ", " + ld0 +
             ", 1, " + ptr(s, "unsigned char") + ", " + ld1 + ", 1, " + SR + ", " + SC + ", " + bytes + ");";
    }
    return code + "pto_opt::convert(" + ptr(d, D.c_str()) + " + (" + at + "), " + ld0 + ", " + ptr(s, "float") + ", " + ld1 +
           ", " + SR + ", " + SC + ");";
  }

  // The on-chip copies of the move family between tiles of one dtype (src/isa/families/
  // move.cpp has their reference): TTRANS (a strided copy), TEXTRACT / TSUBVIEW (a window
  // of src at the offsets), TFILLPAD / _EXPAND (src's valid region, dst's pad value on the rest
  // of dst) and TFILLPAD_INPLACE (the pad outside dst's valid region). Across dtypes, or
  // outside the reference's bounds (it reports them), they go to the reference.
  std::string move_path(const Instr& in, const std::vector<const isa::TileDesc*>& tiles) {
    const std::string& m = in.mnemonic;
    if (tiles.empty() || (m != "TFILLPAD_INPLACE" && (tiles.size() != 2 || tiles[0]->dtype != tiles[1]->dtype)))
      return "";
    const isa::TileDesc& d = *tiles[0];
    const std::string es = std::to_string(dtype_bytes(d.dtype)), ld0 = std::to_string(d.cols);
    const std::string R = vr(0), C = vc(0);
    if (m == "TTRANS") {  // dst[r, c] = src[c, r] over dst's valid region
      const isa::TileDesc& s = *tiles[1];
      auto p = operand_ptr_.find(1);  // a source read in place: its window and row stride
      const std::string src = p != operand_ptr_.end() ? p->second : ptr(s, "unsigned char");
      const std::string lds = p != operand_ptr_.end() ? operand_ld_.at(1) : std::to_string(s.cols);
      return "ok = " + C + " <= " + std::to_string(s.rows) + " && " + R + " <= " + std::to_string(s.cols) +
             "; if (ok) f->support->copy_region(" + ptr(d, "unsigned char") + ", " + ld0 + ", 1, " + src + ", 1, " + lds +
             ", " + R + ", " + C + ", " + es + ");";
    }
    if (m == "TEXTRACT" || m == "TSUBVIEW") {
      if (in.ins.size() != 2 || in.ins[1].kind != Operand::kScalarList || in.ins[1].list.size() != 2) return "";
      const isa::TileDesc& s = *tiles[1];
      const std::string r0 = "(" + as_int(get(in.ins[1].list[0])) + ")", c0 = "(" + as_int(get(in.ins[1].list[1])) + ")";
      const std::string ld1 = std::to_string(s.cols);
      return "ok = " + r0 + " >= 0 && " + c0 + " >= 0 && " + r0 + " + " + R + " <= " + std::to_string(s.rows) + " && " + c0 +
             " + " + C + " <= " + ld1 + "; if (ok) f->support->copy_region(" + ptr(d, "unsigned char") + ", " + ld0 + ", 1, " +
             ptr(s, "unsigned char") + " + (" + r0 + " * " + ld1 + " + " + c0 + ") * " + es + ", " + ld1 + ", 1, " + R +
             ", " + C + ", " + es + ");";
    }
    // The fill-pad forms: element type of the pad fill.
    const std::string T = float_type(d.dtype);
    const double pad = isa::pad_value(d.pad, d.dtype);
    if (T.empty() || !std::isfinite(pad)) return "";
    const std::string P = ptr(d, T.c_str()), padv = "pto_opt::scalar_of<" + T + ">(" + float_literal(pad) + ")";
    const std::string rows = std::to_string(d.rows), cols = std::to_string(d.cols);
    std::string code;
    std::string r1 = R, c1 = C;  // the copied (valid) region
    if (m == "TFILLPAD_INPLACE") {
      code = "{ ";
    } else {
      const isa::TileDesc& s = *tiles[1];
      r1 = "vr1 < " + rows + " ? vr1 : " + rows;
      c1 = "vc1 < " + cols + " ? vc1 : " + cols;
      code = "{ const long long r1 = " + r1 + ", c1 = " + c1 + "; ";
      r1 = "r1", c1 = "c1";
      code += "if ((const void*)" + ptr(d, "unsigned char") + " != (const void*)" + ptr(s, "unsigned char") +
              ") f->support->copy_region(" + ptr(d, "unsigned char") + ", " + ld0 + ", 1, " + ptr(s, "unsigned char") + ", " +
              std::to_string(s.cols) + ", 1, r1, c1, " + es + "); ";
    }
    code += "pto_opt::fill(" + P + " + " + c1 + ", " + ld0 + ", " + padv + ", " + r1 + ", " + cols + " - " + c1 + "); ";
    code += "pto_opt::fill(" + P + " + " + r1 + " * " + ld0 + ", " + ld0 + ", " + padv + ", " + rows + " - " + r1 + ", " +
            cols + "); }";
    return code;
  }

  // TTRI (1 where c - r <= diagonal, >= with upper=True, else 0) and TCI (start + r * valid
  // cols + c, or minus it descending) into a float tile (T: float, f16 or bf16), over the
  // valid region; TCI's value rounded from double as the reference's set_d rounds it.
  std::string generate_path(const Instr& in, const std::string& T, const std::vector<const isa::TileDesc*>& tiles) {
    if (tiles.size() != 1 || in.ins.size() != 1 || in.ins[0].kind != Operand::kScalar) return "";
    auto flag = [&](const char* key) {
      auto it = in.attrs.find(key);
      return it != in.attrs.end() && it->second == AttrValue(true);
    };
    auto store = [&](const std::string& v) {  // a double as T
      return T == "float" ? "(float)(" + v + ")" : T + "{pto_opt::narrow_double(" + v + ", " + T + "{})}";
    };
    const std::string p = ptr(*tiles[0], T.c_str()), ld0 = std::to_string(tiles[0]->cols);
    std::string body;
    if (in.mnemonic == "TTRI") {
      const std::string keep = flag("upper") ? "c - r >= dg" : "c - r <= dg";
      body = "const long long dg = " + as_int(get(in.ins[0].scalar)) + "; const auto one = " + store("1.0") +
             ", zero = " + store("0.0") + "; for (long long r = 0; r < vr0; ++r) for (long long c = 0; c < vc0; ++c) " +
             p + "[r * " + ld0 + " + c] = " + keep + " ? one : zero;";
    } else {
      const std::string i = std::string(flag("descending") ? "-" : "") + "(double)(r * vc0 + c)";
      body = "const double s0 = " + as_double(get(in.ins[0].scalar)) +
             "; for (long long r = 0; r < vr0; ++r) for (long long c = 0; c < vc0; ++c) " + p + "[r * " + ld0 +
             " + c] = " + store("s0 + " + i) + ";";
    }
    return "ok = true; { " + body + " }";
  }

  // TGATHER (dst[r, c] = src[r, idx[r, c]]) of 2- or 4-byte elements of one dtype by an
  // INT32 / UINT32 index tile, copying bits; an index outside src's valid columns leaves the
  // call to the reference, which reports it.
  std::string gather_path(const std::vector<const isa::TileDesc*>& tiles) {
    if (tiles.size() != 3 || tiles[1]->dtype != tiles[0]->dtype) return "";
    const isa::TileDesc &d = *tiles[0], &s = *tiles[1], &x = *tiles[2];
    const int es = dtype_bytes(d.dtype);
    if ((es != 2 && es != 4) || (x.dtype != DataType::INT32 && x.dtype != DataType::UINT32)) return "";
    const std::string E = es == 2 ? "unsigned short" : "unsigned int";
    const std::string I = x.dtype == DataType::INT32 ? "int" : "unsigned int";
    return "ok = vr0 <= " + std::to_string(x.rows) + " && vc0 <= " + std::to_string(x.cols) + " && vr0 <= " +
           std::to_string(s.rows) + "; for (long long r = 0; ok && r < vr0; ++r) for (long long c = 0; c < vc0; ++c) { "
           "const long long j = (long long)" + ptr(x, I.c_str()) + "[r * " + std::to_string(x.cols) + " + c]; if (j < 0 || "
           "j >= vc1) { ok = false; break; } " + ptr(d, E.c_str()) + "[r * " + std::to_string(d.cols) + " + c] = " +
           ptr(s, E.c_str()) + "[r * " + std::to_string(s.cols) + " + j]; }";
  }

  // TROWARGMAX / MIN (dst[r, 0]) and TCOLARGMAX / MIN (dst[0, c]) of a float tile into an INT32
  // tile: the first index of the max / min over the valid region, a NaN never better (the
  // reference's walk); an empty region or a short destination leaves it to the reference.
  std::string arg_reduce_path(const std::string& m, const std::vector<const isa::TileDesc*>& tiles) {
    if (tiles.size() != 2 || tiles[0]->dtype != DataType::INT32) return "";
    const std::string T = float_type(tiles[1]->dtype);
    if (T.empty()) return "";
    const bool rows = m.rfind("TROW", 0) == 0, max = m.find("MAX") != std::string::npos;
    const isa::TileDesc &d = *tiles[0], &s = *tiles[1];
    const std::string outer = rows ? "vr1" : "vc1", inner = rows ? "vc1" : "vr1";
    const std::string at = rows ? "o * " + std::to_string(s.cols) + " + k" : "k * " + std::to_string(s.cols) + " + o";
    const std::string put = rows ? "o * " + std::to_string(d.cols) : "o";
    return "ok = " + inner + " > 0 && " + outer + " <= " + std::to_string(rows ? d.rows : d.cols) +
           "; if (ok) { const " + T + "* sp = " + ptr(s, T.c_str()) + "; int* dp = " + ptr(d, "int") +
           "; for (long long o = 0; o < " + outer + "; ++o) { long long best = 0; long long k = 0; float bv = "
           "pto_opt::cmp_value(sp[" + at + "]); for (k = 1; k < " + inner + "; ++k) { const float v = "
           "pto_opt::cmp_value(sp[" + at + "]); if (v " + (max ? ">" : "<") + " bv) { bv = v; best = k; } } dp[" + put +
           "] = (int)best; } }";
  }

  // TCONCAT of tiles of one dtype: a's valid region, then b's from a's allocated width on,
  // over a's valid rows (the reference's dst = [a | b]), as two region copies.
  std::string concat_path(const std::vector<const isa::TileDesc*>& tiles) {
    if (tiles.size() != 3 || tiles[1]->dtype != tiles[0]->dtype || tiles[2]->dtype != tiles[0]->dtype) return "";
    const isa::TileDesc &d = *tiles[0], &a = *tiles[1], &b = *tiles[2];
    const std::string es = std::to_string(dtype_bytes(d.dtype)), ld0 = std::to_string(d.cols);
    return "ok = vr1 <= " + std::to_string(d.rows) + " && vr1 <= " + std::to_string(b.rows) + " && " +
           std::to_string(a.cols) + " + vc2 <= " + ld0 + "; if (ok) { f->support->copy_region(" + ptr(d, "unsigned char") +
           ", " + ld0 + ", 1, " + ptr(a, "unsigned char") + ", " + std::to_string(a.cols) + ", 1, vr1, vc1, " + es +
           "); f->support->copy_region(" + ptr(d, "unsigned char") + " + " + std::to_string(a.cols) + " * " + es + ", " +
           ld0 + ", 1, " + ptr(b, "unsigned char") + ", " + std::to_string(b.cols) + ", 1, vr1, vc2, " + es + "); }";
  }

  // The C++ element type of `t` on the compare / select fast paths ("" when none); `bits`
  // asks for a type of the element's size (selects copy bits, so FP16 / BF16 qualify).
  static std::string element_type(DataType t, bool bits) {
    switch (t) {
      case DataType::FP32: return "float";
      case DataType::INT32: return "int";
      case DataType::INT16: return "short";
      case DataType::INT8: return "signed char";
      case DataType::UINT8: return "unsigned char";
      case DataType::UINT16: return "unsigned short";
      case DataType::UINT32: return "unsigned int";
      case DataType::INT64: return "long long";
      case DataType::UINT64: return bits ? "unsigned long long" : "";  // selected, never compared
      case DataType::FP16:
      case DataType::BF16: return bits ? "unsigned short" : "";
      default: return "";
    }
  }

  // TCMP / TCMPS / TSEL / TSELS with packed masks (layout: pypto/isa/instructions.h).
  // Tiles: TCMP mask, a, b; TCMPS mask, a; TSEL dst, mask, a, b; TSELS dst, mask, a.
  std::string mask_path(const Instr& in, const isa::InstrDef& def, const std::vector<const isa::TileDesc*>& tiles) {
    const bool cmp = def.mask == isa::MaskUse::kWritesOut0;
    const int mask = cmp ? 0 : 1, first = cmp ? 1 : 0;  // the mask tile; the tile giving the region
    const bool with_scalar = in.ins.back().kind == Operand::kScalar;
    const size_t want_tiles = (cmp ? 2 : 3) + (with_scalar ? 0 : 1);
    if (tiles.size() != want_tiles || tiles[mask]->dtype != isa::kMaskDtype) return "";
    const DataType dt = tiles[first]->dtype;
    for (size_t t = 0; t < tiles.size(); ++t)
      if (static_cast<int>(t) != mask && tiles[t]->dtype != dt) return "";
    const bool half = dt == DataType::FP16 || dt == DataType::BF16;
    const std::string T = cmp && half ? float_type(dt) : element_type(dt, !cmp);  // halves compare widened
    if (T.empty()) return "";
    auto typed = [&](int t) { return ptr(*tiles[t], T.c_str()); };
    const std::string R = vr(first), C = vc(first);
    std::string cond = "(" + R + " <= " + std::to_string(tiles[mask]->rows) + " && (" + C + " + 7) / 8 <= " +
                       std::to_string(tiles[mask]->cols) + ")";
    for (size_t t = 0; t < tiles.size(); ++t)
      if (static_cast<int>(t) != mask && static_cast<int>(t) != first)
        cond += " && (" + R + " <= " + std::to_string(tiles[t]->rows) + " && " + C + " <= " +
                std::to_string(tiles[t]->cols) + ")";
    const std::string M = ptr(*tiles[mask], "unsigned char"), MS = std::to_string(tiles[mask]->cols);
    auto ld = [&](int t) { return std::to_string(tiles[t]->cols); };
    std::string scalar;
    if (with_scalar) {
      const Expr e = get(in.ins.back().scalar);
      if (dtype_is_float(dt)) {
        if (dt != DataType::FP32 && !half) return "";
        // TCMPS compares with the scalar as FP32; TSELS writes it rounded once to the dtype.
        scalar = cmp || !half ? "(float)" + as_double(e)
                              : "(" + T + ")pto_opt::narrow_double(" + as_double(e) + ", " + float_type(dt) + "{})";
      } else {
        if (e.is_float) return "";
        scalar = cmp ? "(long long)" + e.code : "(" + T + ")" + e.code;
      }
    }
    if (cmp) {
      static const std::map<std::string, std::string> modes = {{"EQ", "CmpEq"}, {"NE", "CmpNe"}, {"LT", "CmpLt"},
                                                                {"LE", "CmpLe"}, {"GT", "CmpGt"}, {"GE", "CmpGe"}};
      auto it = in.attrs.find("cmp");
      if (it == in.attrs.end() || !std::holds_alternative<std::string>(it->second)) return "";
      auto mode = modes.find(std::get<std::string>(it->second));
      if (mode == modes.end()) return "";
      const std::string op = "pto_opt::" + mode->second + "{}";
      if (with_scalar)
        return "ok = " + cond + "; if (ok) pto_opt::compare_scalar(" + M + ", " + MS + ", " + typed(1) + ", " + ld(1) +
               ", " + scalar + ", " + R + ", " + C + ", " + op + ");";
      return "ok = " + cond + "; if (ok) pto_opt::compare(" + M + ", " + MS + ", " + typed(1) + ", " + ld(1) + ", " +
             typed(2) + ", " + ld(2) + ", " + R + ", " + C + ", " + op + ");";
    }
    if (with_scalar)
      return "ok = " + cond + "; if (ok) pto_opt::select_scalar(" + typed(0) + ", " + ld(0) + ", " + M + ", " + MS +
             ", " + typed(2) + ", " + ld(2) + ", " + scalar + ", " + R + ", " + C + ");";
    return "ok = " + cond + "; if (ok) pto_opt::select(" + typed(0) + ", " + ld(0) + ", " + M + ", " + MS + ", " +
           typed(2) + ", " + ld(2) + ", " + typed(3) + ", " + ld(3) + ", " + R + ", " + C + ");";
  }

  // A direct tile x whose bytes another tile of `in` shares: before `in` reads that tile, x's
  // copy is made (the bytes hold x's value there, as after a copying TLOAD / TMOV); before `in`
  // writes it, the copy is made if x may still be read, else x's window is dropped after `in`
  // (the bytes are reused: x is dead).
  void tile(const Instr& in, int pc) {
    std::string pre, post;
    for (const auto& [x, others] : overlaps_) {
      bool read = false, written = false, reads_x = false;
      for (const Operand& o : in.ins)
        if (o.kind == Operand::kTile) {
          read = read || others.count(o.index);
          reads_x = reads_x || o.index == x;
        }
      for (const Operand& o : in.outs)
        if (o.kind == Operand::kTile) written = written || others.count(o.index);
      if (read || (written && (reads_x || !dead_after(x, pc)))) pre += materialize(x) + " ";
      else if (written) post += " gp" + std::to_string(x) + " = nullptr;";
    }
    if (!pre.empty()) body_ << "  " << pre << "\n";
    tile_code(in, pc);
    if (!post.empty()) body_ << " " << post << "\n";
  }
  void tile_code(const Instr& in, int pc) {
    // Flags order pipes; the compiled code runs in program order, so they need no code
    // (the reference library treats them as no-ops too).
    // A cross-core event (pl.system.sync_set / sync_wait) meets the other part of a mixed task
    // through the reference library, which blocks the wait until the peer has set it.
    if (in.mnemonic == "SYNC_SET" || in.mnemonic == "SYNC_WAIT") {
      body_ << "  /* " << in.mnemonic << " */ FB(" << pc << ");\n";
      return;
    }
    if (const isa::InstrDef* def = isa::find_instr(in.mnemonic); def && def->family == isa::InstrFamily::kSync) {
      body_ << "  /* " << in.mnemonic << " */\n";
      return;
    }
    // Tile operands in order outs then ins; every one must be a valid placed tile.
    std::vector<const isa::TileDesc*> tiles;
    bool placed = true;
    for (const auto* list : {&in.outs, &in.ins})
      for (const Operand& o : *list)
        if (o.kind == Operand::kTile) {
          const isa::TileDesc* d = tile_of(o);
          if (!d) placed = false;
          tiles.push_back(d);
        }
    // Direct tiles (plan_direct) this instruction writes or reads.
    const int out0 = !in.outs.empty() && in.outs[0].kind == Operand::kTile ? in.outs[0].index : -1;
    const int in0 = !in.ins.empty() && in.ins[0].kind == Operand::kTile ? in.ins[0].index : -1;
    // (position in `tiles`, tile) of the direct tiles read in place: a matmul's Left / Right, a
    // vector instruction's sources (vector_operand); the other direct tiles it reads are copied.
    std::vector<std::pair<int, int>> direct_operands;
    std::string materialize_all;  // the copies of every direct tile this reads
    std::string materialize_rest;  // ... of those not read in place
    const bool mm = is_matmul(in);
    int pos = 0;
    for (const auto* list : {&in.outs, &in.ins})
      for (size_t i = 0; i < list->size(); ++i) {
        const Operand& o = (*list)[i];
        if (o.kind != Operand::kTile) continue;
        if (list == &in.ins && direct_.count(o.index)) {
          materialize_all += materialize(o.index) + " ";
          const bool vec = k_.tiles[o.index].memory == MemorySpace::Vec;
          if (mm ? !vec && matmul_operand(in, i) >= 0
                 : (vec && vector_operand(in, i) && in.outs.size() == 1) || transpose_source(in, i))
            direct_operands.push_back({pos, o.index});
          else
            materialize_rest += materialize(o.index) + " ";
        }
        ++pos;
      }
    if (placed)
      for (auto [p, t] : direct_operands) {
        operand_ptr_[p] = "dp" + std::to_string(p);
        operand_ld_[p] = "dl" + std::to_string(p);
      }
    window_call_.clear();
    std::string fast = placed ? fast_path(in, tiles) : "";
    operand_ptr_.clear();
    operand_ld_.clear();
    body_ << "  /* " << in.mnemonic << " */ ";
    if (fast.empty()) {
      body_ << materialize_all << "FB(" << pc << ");\n";
      reference_.push_back(in.mnemonic);
      return;
    }
    fast_.push_back(in.mnemonic);
    std::string decls, check;
    for (size_t t = 0; t < tiles.size(); ++t) {
      const isa::TileDesc& d = *tiles[t];
      decls += " const long long " + vr(t) + " = " + as_int(get(d.valid_rows)) + ", " + vc(t) + " = " +
               as_int(get(d.valid_cols)) + ";";
      check += (check.empty() ? "" : " && ") + std::string("pto_opt_valid(") + vr(t) + ", " + vc(t) + ", " +
               std::to_string(d.rows) + ", " + std::to_string(d.cols) + ")";
    }
    const std::string usual = "{ bool ok = true;" + decls + "\n    if (" + check + ") { " + fast +
                              " } else ok = false;\n    if (!ok) FB(" + std::to_string(pc) + "); }";
    if (in.mnemonic == "TLOAD" && direct_.count(out0) && !window_call_.empty()) {
      // Record the window; the copy is made only if a later step needs it (materialize).
      const std::string n = std::to_string(out0);
      auto ro = direct_ro_.find(in.ins[0].index);
      body_ << "{" << decls << " gp" << n << " = nullptr;\n    if (" << (ro == direct_ro_.end() ? "false" : ro->second)
            << " && " << check << ") { " << window_off_ << " gp" << n << " = " << window_call_ << ", &gl" << n
            << "); gr" << n << " = " << vr(0) << "; gc" << n << " = " << vc(0) << "; }\n    if (!gp" << n << ") "
            << usual << " }\n";
      return;
    }
    if (in.mnemonic == "TMOV" && direct_.count(out0)) {
      const std::string y = std::to_string(out0), x = std::to_string(in0);
      body_ << "{" << decls << " gp" << y << " = nullptr;\n";
      if (direct_.count(in0))  // hand the window on when the moved region lies inside it
        body_ << "    if (gp" << x << " && " << check << " && " << vr(0) << " <= gr" << x << " && " << vc(0) << " <= gc"
              << x << ") { gp" << y << " = gp" << x << "; gl" << y << " = gl" << x << "; gr" << y << " = " << vr(0)
              << "; gc" << y << " = " << vc(0) << "; }\n";
      body_ << "    if (!gp" << y << ") { " << materialize_all << usual << " } }\n";
      return;
    }
    if (!direct_operands.empty() && !mm) {
      // A source read in place when its window holds the whole tile (the reads stay inside the
      // tile, so inside the window); else the copy its TLOAD would have made.
      body_ << "{" << decls << "\n    " << materialize_rest << "\n";
      for (auto [p, t] : direct_operands) {
        const std::string n = std::to_string(t), P = std::to_string(p);
        const isa::TileDesc& d = k_.tiles[t];
        body_ << "    const unsigned char* dp" << P << " = " << ptr(d, "unsigned char") << "; long long dl" << P << " = "
              << d.cols << ";\n    if (gp" << n << " && gr" << n << " == " << d.rows << " && gc" << n << " == " << d.cols
              << ") { dp" << P << " = gp" << n << "; dl" << P << " = gl" << n << "; } else " << materialize(t) << "\n";
      }
      std::string fix;  // the fast path refused: the reference reads the tiles
      for (auto [p, t] : direct_operands) fix += materialize(t) + " ";
      body_ << "    bool ok = true;\n    if (" << check << ") { " << fast << " } else ok = false;\n    if (!ok) { " << fix
            << "FB(" << pc << "); } }\n";
      return;
    }
    if (!direct_operands.empty() && mm) {
      // Left reads vr0 x K, Right K x vc0 (K: Left's valid columns); outside the window: copy.
      const std::string K = vc(direct_operands.size() ? matmul_left_pos(in) : 0);
      body_ << "{" << decls << "\n";
      for (auto [p, t] : direct_operands) {
        const std::string n = std::to_string(t), P = std::to_string(p);
        const bool left = p == matmul_left_pos(in);
        const std::string rows = left ? vr(0) : K, cols = left ? K : vc(0);
        body_ << "    const unsigned char* dp" << P << " = " << ptr(k_.tiles[t], "unsigned char") << "; long long dl" << P
              << " = " << k_.tiles[t].cols << ";\n    if (gp" << n << " && " << rows << " <= gr" << n << " && " << cols
              << " <= gc" << n << ") { dp" << P << " = gp" << n << "; dl" << P << " = gl" << n << "; } else "
              << materialize(t) << "\n";
      }
      std::string fix;  // the fast path refused: the reference reads the tiles
      for (auto [p, t] : direct_operands) fix += materialize(t) + " ";
      body_ << "    bool ok = true;\n    if (" << check << ") { " << fast << " } else ok = false;\n    if (!ok) { " << fix
            << "FB(" << pc << "); } }\n";
      return;
    }
    body_ << materialize_all << usual << "\n";
  }
  // The position of a matmul's Left operand in its tile list (outs, then ins).
  static int matmul_left_pos(const Instr& in) {
    return in.mnemonic == "TMATMUL_ACC" || in.mnemonic == "TGEMV_ACC" ? 2 : 1;
  }
  std::map<int, std::string> operand_ptr_, operand_ld_;  // operands read in place (by position)
  std::map<int, std::set<int>> overlaps_;                // direct tile -> the tiles sharing its bytes
  std::string window_off_, window_call_;                 // the last TLOAD's offsets and window call

 public:
  // The tile instructions written so far with a fast path / through the reference library.
  std::vector<std::string> fast_, reference_;

 private:
  const Kernel& k_;
  const isa::ChipSpec& chip_;
  std::ostringstream body_;
  bool uses_matmul_ = false;
};

}  // namespace

NativeKernelReport native_kernel_report(const isa::Kernel& kernel, const isa::ChipSpec& chip) {
  KernelWriter w(kernel, chip);
  std::ostringstream out;
  NativeKernelReport r;
  r.native = w.write(0, out);
  if (r.native) {
    r.fast = std::move(w.fast_);
    r.reference = std::move(w.reference_);
  }
  return r;
}

std::string generate_native_source(const std::vector<const isa::Kernel*>& kernels, const isa::ChipSpec& chip,
                                   std::vector<bool>& natives) {
  std::ostringstream funcs;
  bool matmul = false;
  natives.assign(kernels.size(), false);
  for (size_t i = 0; i < kernels.size(); ++i) {
    KernelWriter w(*kernels[i], chip);
    natives[i] = w.write(static_cast<int>(i), funcs);
    matmul = matmul || (natives[i] && w.uses_matmul());
  }
  std::ostringstream out;
  out << "// Generated by pypto's native engine for platform " << chip.platform << ".\n";
  out << "#include \"pypto/isa/optimized/tile_ops.h\"\n";
  out << "#include \"pypto/base/scalar_cast.h\"\n";
  if (matmul) out << "#include \"pypto/isa/optimized/matmul.h\"\n";
  out << "static inline bool pto_opt_valid(long long r, long long c, long long R, long long C) {\n"
         "  return r >= 0 && r <= R && c >= 0 && c <= C;\n}\n\n";
  out << funcs.str();
  return out.str();
}

}  // namespace pypto::engines
