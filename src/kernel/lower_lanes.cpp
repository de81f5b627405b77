// Lane program -> PTO instructions by partial evaluation over the launch: uniform values
// fold to immediates, lane values become tile rows (tile.load / tile.add / ... / tile.store
// calls with valid widths for `if i < n`), and pipeline programs become cube ops per block
// with double-buffered locals (see docs/kernel-api.md, "How kernels are compiled"). Every
// tile operation is an op call built and type-checked by its op record (make_op_call) and
// lowered by the op's own lowering (KernelBuilder::lower_call), as codegen lowers the tile
// DSL; the kernel pipeline (InsertSync) then runs on the result.
#include <algorithm>
#include <cmath>
#include <map>
#include <limits>
#include <set>

#include "pypto/ops/kernel_builder.h"
#include "pypto/ops/op_registry.h"
#include "pypto/passes/pass.h"
#include "pypto/isa/chip.h"
#include "pypto/isa/instructions.h"
#include "pypto/base/scalar_ops.h"
#include "pypto/kernel/lower_lanes.h"
#include "pypto/isa/validate.h"

namespace pypto::kernel {

namespace {

// Lanes per tile row at most (a chunk of the grid per loop iteration; see docs/kernel-api.md).
constexpr int64_t kMaxChunkLanes = 16384;
// Registers of loop-lowered lane kernels: the chunk range parameters, then two scratch
// registers (guards and loop bounds), then loop counters and offsets.
constexpr int kChunkLoReg = 0, kChunkHiReg = 1, kScratchReg = 2, kFirstFreeReg = 4;

bool is_sync(const isa::Instr& in) {
  if (in.kind != isa::InstrKind::kTile) return false;
  const isa::InstrDef* def = isa::find_instr(in.mnemonic);
  return def != nullptr && def->family == isa::InstrFamily::kSync;
}

struct Val {
  enum Kind { kNone, kUniform, kAffine, kData, kPtr, kMask, kLocal } kind = kNone;
  double num = 0;          // kUniform
  bool is_float = false;   // kUniform
  int64_t off = 0;         // kAffine: gid + off; kPtr: element offset (plus gid when lane)
  bool lane = false;       // kPtr: offset varies with the lane (tensor + gid + off)
  int arg = -1;            // kPtr: launch argument
  int slot = -1;           // kData: tile slot; kLocal: local value id
  int64_t valid = 0;       // kMask: active lanes [0, valid) of the chunk
};

// The tile op of a lane operator on loaded values: tile-tile, and tile-scalar (scalar operand second).
const char* tile_op(const std::string& op, bool scalar) {
  static const std::map<std::string, std::pair<const char*, const char*>> ops = {
      {"+", {"tile.add", "tile.adds"}}, {"-", {"tile.sub", "tile.subs"}}, {"*", {"tile.mul", "tile.muls"}},
      {"/", {"tile.div", "tile.divs"}}, {"max", {"tile.maximum", "tile.maxs"}}, {"min", {"tile.minimum", "tile.mins"}}};
  auto it = ops.find(op);
  if (it == ops.end()) return nullptr;
  return scalar ? it->second.second : it->second.first;
}

double fold(const std::string& op, double a, double b, bool is_float, const Span& span) {
  if (op == "+") return a + b;
  if (op == "-") return a - b;
  if (op == "*") return a * b;
  if (op == "/") return a / b;
  if (op == "min") return std::min(a, b);
  if (op == "max") return std::max(a, b);
  if (op == "<") return a < b;
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  if (op == ">=") return a >= b;
  if (op == "==") return a == b;
  if (op == "!=") return a != b;
  if (op == "//" || op == "%") {  // base/scalar_ops.h: Python's rules; an integer divisor 0 is an error
    if (b == 0 && !is_float)
      fail(ErrorKind::kValue, span, "integer division by zero in '" + op + "' (the divisor is known at launch)",
           "guard the divisor, or check the kernel's arguments");
    const double r = op == "//" ? scalar::float_floor_div(a, b) : scalar::float_mod(a, b);
    return is_float ? r : r + 0.0;  // integers have no -0.0 (0 // -3 == 0)
  }
  fail(ErrorKind::kType, span, "operator '" + op + "' is not supported in a kernel", "use + - * / // % min max or a comparison");
}

class Lowerer {
 public:
  Lowerer(const LaneProgram& p, const std::vector<LaunchArg>& args, LaunchShape shape, const isa::ChipSpec& chip)
      : p_(p), args_(args), shape_(shape), chip_(chip) {
    out_.kernel.name = p.name;
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].buffer) continue;
      param_of_arg_[static_cast<int>(i)] = static_cast<int>(out_.args.size());
      engines::TensorView v;
      v.data = args[i].buffer->data(("launch of kernel '" + p.name + "'").c_str());
      v.dtype = DataType::FP32;
      v.shape = {1, args[i].buffer->nbytes() / 4};
      v.strides = engines::row_major_strides(v.shape);
      v.name = p.params[i];
      out_.args.push_back(engines::HostArg::of_tensor(v));
      isa::ParamDesc d;
      d.name = p.params[i];
      d.shape = v.shape;
      d.dir = ParamDirection::InOut;
      out_.kernel.params.push_back(d);
    }
  }

  LoweredKernel lanes(int64_t chunk_blocks, bool unroll) {
    const int64_t cap = chip_.capacity(MemorySpace::Vec);
    const int64_t per_lane = bytes_per_lane();
    const int64_t per_block = shape_.block * per_lane;
    if (per_block > cap)
      fail(ErrorKind::kCapacity, p_.ops.empty() ? Span{} : p_.ops[0].span,
           "kernel '" + p_.name + "' with blocks of " + std::to_string(shape_.block) + " lanes needs " +
               std::to_string(per_block) + " bytes of vector buffer (" + std::to_string(per_lane / 4) + " lane values x " +
               std::to_string(shape_.block) + " x 4 B), the chip has " + std::to_string(cap),
           "launch with a smaller block");
    const bool per_block_ids = p_.uses(LaneOpKind::kBlockId) || p_.uses(LaneOpKind::kLaneId);
    int64_t k = chunk_blocks > 0 ? chunk_blocks
                                 : std::min<int64_t>(cap / std::max<int64_t>(per_block, 1),
                                                     std::max<int64_t>(1, kMaxChunkLanes / shape_.block));
    if (per_block_ids) k = 1;
    k = std::max<int64_t>(1, std::min(k, shape_.grid));
    width_ = k * shape_.block;
    out_.chunk_lanes = width_;
    const int64_t total = shape_.grid * shape_.block;
    out_.total_lanes = total;
    ranged_ = !unroll;
    if (ranged_) num_regs_ = kFirstFreeReg;
    // Each chunk is lowered with immediate offsets; a chunk that repeats the first chunk of
    // the current run (see repeats) is dropped again and counted, so the code stays small.
    // Once a chunk repeats, the chunks up to the base where its lowering would change (see
    // holds_while) repeat too and are counted without being lowered.
    Run run;
    for (int64_t base = 0, blk = 0; base < total; base += width_, blk += k) {
      base_ = base;
      block_id_ = blk;
      chunk_ = std::min(width_, total - base);
      same_until_ = std::numeric_limits<int64_t>::max();
      holds_while(chunk_ == width_ ? total - width_ : base);
      const size_t begin = out_.kernel.code.size();
      run_body(0, static_cast<int>(p_.ops.size()));
      const Chunk c{begin, out_.kernel.code.size(), base};
      if (!unroll && run.count > 0 && c.end > c.begin) {
        std::vector<int> kinds;
        if (repeats(out_.kernel.code, run.first, c, &kinds) && (run.count == 1 || kinds == run.kinds)) {
          run.kinds = std::move(kinds);
          run.count += 1;
          out_.kernel.code.resize(begin);
          out_.notes.resize(begin);
          const int64_t more = (same_until_ - base) / width_;
          run.count += more;
          base += more * width_;
          blk += more * k;
          continue;
        }
      }
      const size_t moved = close_run(run, c.begin);  // the new chunk follows the closed run
      run = Run{Chunk{moved, moved + (c.end - c.begin), c.base}, {}, 1};
    }
    close_run(run, out_.kernel.code.size());
    if (ranged_) {
      // The chunk range [chunk_lo, chunk_hi) this run covers (lane bases): registers 0 and 1.
      for (const char* name : {"chunk_lo", "chunk_hi"}) {
        isa::ParamDesc d;
        d.name = name;
        d.is_tensor = false;
        d.dtype = DataType::INT64;
        d.dir = ParamDirection::In;
        out_.kernel.params.push_back(d);
      }
      out_.args.push_back(engines::HostArg::of_int(0));
      out_.args.push_back(engines::HostArg::of_int(total));
      out_.chunk_range = true;
      out_.independent_chunks = true;
      for (const auto& [buf, offs] : accesses_)
        if (written_.count(buf) && offs.size() != 1) out_.independent_chunks = false;
    }
    return finish();
  }

  // The vector-buffer bytes one lane needs: the first block lowered alone (one block per
  // tile row), counting its tile slots without the capacity check.
  int64_t bytes_per_lane() {
    Lowerer trial(p_, args_, shape_, chip_);
    trial.measuring_ = true;
    trial.width_ = trial.chunk_ = shape_.block;
    trial.run_body(0, static_cast<int>(p_.ops.size()));
    return trial.next_addr_[static_cast<int>(MemorySpace::Vec)] / shape_.block;
  }

  LoweredKernel pipeline() {
    out_.pipelined = true;
    out_.kernel.core = FunctionType::AIC;
    plan_locals();
    width_ = shape_.block;
    for (int64_t b = 0; b < shape_.grid; ++b) {
      base_ = b * shape_.block;
      block_id_ = b;
      chunk_ = shape_.block;
      parity_ = static_cast<int>(b % 2);
      run_body(0, static_cast<int>(p_.ops.size()));
    }
    return finish();
  }

 private:
  // The kernel pipeline (InsertSync's pipe flags, as for compiled kernels), then the notes of
  // the inserted set_flag / wait_flag and the user-visible instruction list (see lower_lanes.h).
  LoweredKernel finish() {
    out_.kernel.num_regs = num_regs_;
    out_.kernel.reg_is_float.assign(static_cast<size_t>(num_regs_), false);
    const size_t before = out_.kernel.code.size();
    passes::run_kernel_pipeline(out_.kernel);
    if (out_.kernel.code.size() != before) {
      std::vector<InstrNote> notes;
      notes.reserve(out_.kernel.code.size());
      size_t next = 0;
      for (const isa::Instr& in : out_.kernel.code) {
        if (is_sync(in)) {
          InstrNote n = next < out_.notes.size() ? out_.notes[next] : (out_.notes.empty() ? InstrNote{} : out_.notes.back());
          n.cls = "SYNC";
          n.tensor_arg = -1;
          n.tile = -1;
          notes.push_back(n);
        } else {
          notes.push_back(out_.notes.at(next++));
        }
      }
      out_.notes = std::move(notes);
    }
    out_.lane_pcs.clear();
    for (size_t pc = 0; pc < out_.kernel.code.size(); ++pc)
      if (out_.kernel.code[pc].kind == isa::InstrKind::kTile && !is_sync(out_.kernel.code[pc]))
        out_.lane_pcs.push_back(static_cast<int>(pc));
    return std::move(out_);
  }

  // ---- loops --------------------------------------------------------------------------
  // Chunks were lowered one after the other with immediate offsets. Consecutive chunks whose
  // code is the same except for tile-window offsets that advance with the chunk base (or stay
  // put) become one loop over a base register: LOOP r = first..last step width, with the
  // advancing offsets read from r (+ a constant). The rest (a partial last chunk, chunks that
  // differ) stays straight-line, so every lane computes exactly what the unrolled code does.
  struct Chunk {
    size_t begin, end;
    int64_t base;
  };

  static const isa::Scalar* window_offset(const isa::Instr& in) {
    if (in.kind != isa::InstrKind::kTile || (in.mnemonic != "TLOAD" && in.mnemonic != "TSTORE")) return nullptr;
    if (in.ins.size() < 2 || in.ins[1].kind != isa::Operand::kScalarList || in.ins[1].list.size() != 2) return nullptr;
    const isa::Scalar& s = in.ins[1].list[1];
    return s.kind == isa::Scalar::kImm && !s.is_float ? &s : nullptr;
  }
  static isa::Scalar* window_offset(isa::Instr& in) {
    return const_cast<isa::Scalar*>(window_offset(static_cast<const isa::Instr&>(in)));
  }
  static bool same_scalar(const isa::Scalar& a, const isa::Scalar& b) {
    return a.kind == b.kind && a.reg == b.reg && a.is_float == b.is_float && a.i == b.i &&
           (a.f == b.f || (std::isnan(a.f) && std::isnan(b.f)));
  }
  static bool same_operand(const isa::Operand& a, const isa::Operand& b) {
    if (a.kind != b.kind || a.index != b.index || !same_scalar(a.scalar, b.scalar) || a.list.size() != b.list.size()) return false;
    for (size_t i = 0; i < a.list.size(); ++i)
      if (!same_scalar(a.list[i], b.list[i])) return false;
    return true;
  }
  // Whether chunk q repeats chunk p: the same code except for tile-window offsets that are
  // the same or differ by exactly the difference of the chunk bases; `kinds` gets 0 or 1
  // per window offset accordingly.
  static bool repeats(const std::vector<isa::Instr>& code, const Chunk& p, const Chunk& q, std::vector<int>* kinds) {
    if (p.end - p.begin != q.end - q.begin) return false;
    kinds->clear();
    for (size_t t = 0; t < p.end - p.begin; ++t) {
      const isa::Instr& a = code[p.begin + t];
      const isa::Instr& b = code[q.begin + t];
      if (a.kind != b.kind || a.mnemonic != b.mnemonic || a.attrs != b.attrs || a.span.line != b.span.line ||
          a.span.file != b.span.file || a.outs.size() != b.outs.size() || a.ins.size() != b.ins.size())
        return false;
      for (size_t o = 0; o < a.outs.size(); ++o)
        if (!same_operand(a.outs[o], b.outs[o])) return false;
      const isa::Scalar* wa = window_offset(a);
      const isa::Scalar* wb = window_offset(b);
      if ((wa == nullptr) != (wb == nullptr)) return false;
      for (size_t o = 0; o < a.ins.size(); ++o) {
        if (wa && o == 1) {
          if (!same_scalar(a.ins[1].list[0], b.ins[1].list[0])) return false;
          const int64_t d = wb->i - wa->i;
          if (d != 0 && d != q.base - p.base) return false;
          kinds->push_back(d == 0 ? 0 : 1);
          continue;
        }
        if (!same_operand(a.ins[o], b.ins[o])) return false;
      }
    }
    return true;
  }

  struct Run {
    Chunk first{0, 0, 0};
    std::vector<int> kinds;  // per window offset of the first chunk: 0 fixed, 1 advancing
    int64_t count = 0;       // chunks (loop iterations)
  };

  // A run of two or more chunks becomes a loop; with chunk ranges, a single chunk is guarded
  // by `chunk_lo <= base < chunk_hi`. The run's first chunk is followed only by the chunk
  // just lowered (starting at `next_begin`), which is moved behind; returns where it starts.
  size_t close_run(const Run& run, size_t next_begin) {
    std::vector<isa::Instr>& code = out_.kernel.code;
    if (run.count == 0 || (run.count == 1 && (!ranged_ || run.first.end == run.first.begin))) return next_begin;
    std::vector<isa::Instr> body(std::make_move_iterator(code.begin() + run.first.begin),
                                 std::make_move_iterator(code.begin() + run.first.end));
    std::vector<isa::Instr> next(std::make_move_iterator(code.begin() + run.first.end), std::make_move_iterator(code.end()));
    std::vector<InstrNote> body_notes(out_.notes.begin() + run.first.begin, out_.notes.begin() + run.first.end);
    std::vector<InstrNote> next_notes(out_.notes.begin() + run.first.end, out_.notes.end());
    code.resize(run.first.begin);
    out_.notes.resize(run.first.begin);
    if (run.count >= 2)
      emit_loop(body, body_notes, Chunk{0, body.size(), run.first.base}, run.first.base + (run.count - 1) * width_,
                run.kinds, run.count);
    else
      emit_guarded(body, body_notes, run.first.base);
    const size_t moved = code.size();
    for (size_t i = 0; i < next.size(); ++i) {
      code.push_back(std::move(next[i]));
      out_.notes.push_back(std::move(next_notes[i]));
    }
    return moved;
  }

  void scalar_op(BinaryOp op, int dst, isa::Scalar a, isa::Scalar b, const Span& span, const InstrNote& note) {
    isa::Instr in;
    in.kind = isa::InstrKind::kScalarBin;
    in.sop = op;
    in.dst_reg = dst;
    in.a = a;
    in.b = b;
    in.span = span;
    out_.kernel.code.push_back(in);
    out_.notes.push_back(note);
  }

  // One chunk at lane base `base`, run when chunk_lo <= base < chunk_hi.
  void emit_guarded(std::vector<isa::Instr>& code, std::vector<InstrNote>& notes, int64_t base) {
    std::vector<isa::Instr>& out = out_.kernel.code;
    InstrNote sn = notes.front();
    sn.cls = "SCALAR";
    sn.tensor_arg = -1;
    sn.tile = -1;
    const Span span = code.front().span;
    const isa::Scalar b = isa::Scalar::imm(base);
    scalar_op(BinaryOp::Ge, kScratchReg, b, isa::Scalar::r(kChunkLoReg), span, sn);
    scalar_op(BinaryOp::Lt, kScratchReg + 1, b, isa::Scalar::r(kChunkHiReg), span, sn);
    scalar_op(BinaryOp::And, kScratchReg, isa::Scalar::r(kScratchReg), isa::Scalar::r(kScratchReg + 1), span, sn);
    isa::Instr cond;
    cond.kind = isa::InstrKind::kIf;
    cond.a = isa::Scalar::r(kScratchReg);
    cond.span = span;
    const size_t if_pc = out.size();
    out.push_back(cond);
    out_.notes.push_back(sn);
    for (size_t i = 0; i < code.size(); ++i) {
      out.push_back(std::move(code[i]));
      out_.notes.push_back(std::move(notes[i]));
    }
    isa::Instr endif;
    endif.kind = isa::InstrKind::kEndIf;
    endif.span = span;
    out[if_pc].jump = static_cast<int>(out.size());
    out.push_back(endif);
    out_.notes.push_back(sn);
  }

  void emit_loop(const std::vector<isa::Instr>& code, const std::vector<InstrNote>& notes, const Chunk& first,
                 int64_t last_base, const std::vector<int>& kinds, int64_t iterations) {
    std::vector<isa::Instr>& out = out_.kernel.code;
    const int r = num_regs_++;
    InstrNote ln = notes[first.begin];
    ln.cls = "LOOP";
    ln.tensor_arg = -1;
    ln.tile = -1;
    isa::Instr begin;
    begin.kind = isa::InstrKind::kLoopBegin;
    begin.dst_reg = r;
    begin.a = isa::Scalar::imm(first.base);
    begin.b = isa::Scalar::imm(last_base + 1);
    begin.step = isa::Scalar::imm(width_);
    begin.span = code[first.begin].span;
    if (ranged_) {  // bases in [max(first, chunk_lo), min(last + 1, chunk_hi)): bases are multiples of the width
      InstrNote sn = ln;
      sn.cls = "SCALAR";
      scalar_op(BinaryOp::Max, kScratchReg, begin.a, isa::Scalar::r(kChunkLoReg), begin.span, sn);
      scalar_op(BinaryOp::Min, kScratchReg + 1, begin.b, isa::Scalar::r(kChunkHiReg), begin.span, sn);
      begin.a = isa::Scalar::r(kScratchReg);
      begin.b = isa::Scalar::r(kScratchReg + 1);
    }
    const size_t begin_pc = out.size();
    out.push_back(begin);
    out_.notes.push_back(ln);
    // Window offsets that advance: r + (offset - base), one register per distinct constant.
    std::map<int64_t, isa::Scalar> at;
    size_t site = 0;
    for (size_t pc = first.begin; pc < first.end; ++pc) {
      if (const isa::Scalar* w = window_offset(code[pc]); w && kinds.at(site++) == 1) {
        const int64_t c = w->i - first.base;
        if (!at.count(c)) at[c] = c == 0 ? isa::Scalar::r(r) : isa::Scalar::r(num_regs_++);
      }
    }
    for (const auto& [c, reg] : at) {
      if (c == 0) continue;
      isa::Instr add;
      add.kind = isa::InstrKind::kScalarBin;
      add.sop = BinaryOp::Add;
      add.dst_reg = reg.reg;
      add.a = isa::Scalar::r(r);
      add.b = isa::Scalar::imm(c);
      add.span = begin.span;
      out.push_back(add);
      InstrNote sn = ln;
      sn.cls = "SCALAR";
      out_.notes.push_back(sn);
    }
    site = 0;
    for (size_t pc = first.begin; pc < first.end; ++pc) {
      isa::Instr in = code[pc];
      if (isa::Scalar* w = window_offset(in); w && kinds.at(site++) == 1) *w = at.at(w->i - first.base);
      out.push_back(std::move(in));
      InstrNote n = notes[pc];
      n.repeat = iterations;
      out_.notes.push_back(n);
    }
    isa::Instr end = begin;
    end.kind = isa::InstrKind::kLoopEnd;
    end.jump = static_cast<int>(begin_pc) + 1;
    out.push_back(end);
    out_.notes.push_back(ln);
    out[begin_pc].jump = static_cast<int>(out.size());
  }

  // ---- values -------------------------------------------------------------------------
  Val& val(int id) {
    if (id < 0 || static_cast<size_t>(id) >= vals_.size())
      fail(ErrorKind::kInternal, {}, "lane value #" + std::to_string(id) + " is undefined", "report this bug");
    return vals_[id];
  }
  void set(int id, Val v) {
    if (static_cast<size_t>(id) >= vals_.size()) vals_.resize(id + 1);
    vals_[id] = v;
  }
  static Val uniform(double x, bool f) { Val v; v.kind = Val::kUniform; v.num = x; v.is_float = f; return v; }
  void holds_while(int64_t max_base) { same_until_ = std::min(same_until_, max_base); }
  int64_t active() const { return masks_.empty() ? chunk_ : std::min(chunk_, masks_.back()); }

  int tile(int slot, int64_t valid, MemorySpace mem = MemorySpace::Vec, int64_t rows = 1, int64_t cols = 0) {
    if (cols == 0) cols = width_;
    auto key = std::make_tuple(slot, valid, static_cast<int>(mem));
    auto it = tiles_.find(key);
    if (it != tiles_.end()) return it->second;
    auto a = addr_.find({slot, static_cast<int>(mem)});
    int64_t addr;
    if (a != addr_.end()) {
      addr = a->second;
    } else {
      addr = next_addr_[static_cast<int>(mem)];
      next_addr_[static_cast<int>(mem)] += rows * cols * 4;
      if (!measuring_ && next_addr_[static_cast<int>(mem)] > chip_.capacity(mem))
        fail(ErrorKind::kCapacity, span_, "kernel '" + p_.name + "' needs more than the " + std::to_string(chip_.capacity(mem)) +
                 " bytes of " + memory_space_name(mem) + " on " + chip_.platform,
             "use smaller tiles or fewer local buffers");
      addr_[{slot, static_cast<int>(mem)}] = addr;
    }
    isa::TileDesc d;
    d.name = "v" + std::to_string(slot) + (valid == cols ? "" : "_" + std::to_string(valid));
    d.memory = mem;
    d.rows = rows;
    d.cols = cols;
    d.addr = addr;
    d.valid_rows = isa::Scalar::imm(rows);
    d.valid_cols = isa::Scalar::imm(mem == MemorySpace::Vec && rows == 1 ? valid : cols);
    out_.kernel.tiles.push_back(d);
    return tiles_[key] = static_cast<int>(out_.kernel.tiles.size()) - 1;
  }

  // The IR value of tile slot `t`: a Var whose TileType is the slot's (placed here: the
  // lowerer plans its own buffers), bound to the slot in the kernel builder.
  ir::VarPtr tile_var(int t) {
    auto it = tile_vars_.find(t);
    if (it != tile_vars_.end()) return it->second;
    const isa::TileDesc& d = out_.kernel.tiles.at(t);
    auto c = [](int64_t v) { return ir::ConstInt::make(v); };
    auto type = ir::TileType::make({c(d.rows), c(d.cols)}, d.dtype, d.memory, {c(d.valid_rows.i), c(d.valid_cols.i)},
                                   PadValue::null, d.addr);
    auto v = ir::Var::make(d.name, type, span_);
    kb_.bind_tile(v.get(), t);
    return tile_vars_[t] = v;
  }
  // Launch argument `param` (a kernel parameter index) as an IR tensor of its shape.
  ir::VarPtr tensor_var(int param) {
    auto it = tensor_vars_.find(param);
    if (it != tensor_vars_.end()) return it->second;
    const isa::ParamDesc& d = out_.kernel.params.at(param);
    std::vector<ir::ExprPtr> shape;
    for (int64_t e : d.shape) shape.push_back(ir::ConstInt::make(e));
    auto v = ir::Var::make(d.name, ir::TensorType::make(shape, DataType::FP32), span_);
    kb_.bind_tensor(v.get(), param);
    return tensor_vars_[param] = v;
  }
  static ir::ExprPtr index_list(const std::vector<int64_t>& xs) {
    std::vector<ir::ExprPtr> e;
    for (int64_t x : xs) e.push_back(ir::ConstInt::make(x));
    return ir::ListExpr::make(e);
  }

  // One tile op call: built and type-checked by the op's record, lowered by the op's own
  // lowering (the tile DSL's path through KernelBuilder). `dst` is the tile slot of the result
  // (-1: none): the lowering defines a fresh slot, which is replaced by `dst`, so a tile keeps
  // one slot and repeating chunks compare equal. `note` describes each emitted instruction.
  void call(const std::string& op, const std::vector<ir::ExprPtr>& args,
            const std::vector<std::pair<std::string, ir::ExprPtr>>& kwargs, const Attrs& attrs, int dst,
            InstrNote note) {
    ir::ExprPtr e = ops::make_op_call(op, args, kwargs, attrs, span_);
    std::vector<isa::Instr>& code = out_.kernel.code;
    const size_t first = code.size();
    const int fresh = static_cast<int>(out_.kernel.tiles.size());
    kb_.set_span(span_);
    kb_.lower_call(*e->as<ir::Call>(), dst >= 0 ? tile_var(dst) : nullptr);
    if (dst >= 0) {
      PYPTO_CHECK(out_.kernel.tiles.size() == static_cast<size_t>(fresh) + 1,
                  "lane lowering: the lowering of " + op + " defined " + std::to_string(out_.kernel.tiles.size() - fresh) +
                      " tiles, expected one");
      out_.kernel.tiles.pop_back();
      kb_.bind_tile(tile_var(dst).get(), dst);
      for (size_t pc = first; pc < code.size(); ++pc)
        for (auto* ops : {&code[pc].outs, &code[pc].ins})
          for (isa::Operand& o : *ops)
            if (o.kind == isa::Operand::kTile && o.index == fresh) o.index = dst;
    }
    note.stage = stage_;
    note.after = after_;
    note.iteration = block_id_;
    if (note.lanes == 0) note.lanes = active();
    if (note.first_lane == 0) note.first_lane = base_;
    for (size_t pc = first; pc < code.size(); ++pc) out_.notes.push_back(note);
  }

  int new_slot() { return next_slot_--; }  // temporaries: negative slots

  // A lane value as a data tile of the active width (uniforms are filled with TEXPANDS).
  int data_tile(const Val& v, const char* cls) {
    if (v.kind == Val::kData) return tile(v.slot, active());
    if (v.kind == Val::kUniform) {
      const int t = tile(new_slot(), active());
      call("tile.full", {}, {{"value", ir::ConstFloat::make(v.num)}},
           {{"shape", std::vector<int64_t>{1, width_}}, {"dtype", DataType::FP32}}, t, {"FILL", "", "", 0, 0, 0, -1, 0, t});
      return t;
    }
    fail(ErrorKind::kType, span_, std::string(cls) + " needs a loaded value or a number here, got a " + kind_name(v),
         "load the value with pto.load(ptr) first");
  }

  static std::string kind_name(const Val& v) {
    switch (v.kind) {
      case Val::kAffine: return "lane index";
      case Val::kPtr: return "pointer";
      case Val::kMask: return "condition";
      case Val::kLocal: return "local buffer";
      default: return "value";
    }
  }

  Val binary(const std::string& op, Val x, Val y) {
    const bool cmp = op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=";
    if (x.kind == Val::kUniform && y.kind == Val::kUniform) {
      const bool f = x.is_float || y.is_float || op == "/";
      return uniform(fold(op, x.num, y.num, f, span_), f && !cmp);
    }
    if (cmp) {
      std::string o = op;
      if (x.kind == Val::kUniform && y.kind == Val::kAffine) {
        std::swap(x, y);
        o = op == "<" ? ">" : op == "<=" ? ">=" : op == ">" ? "<" : op == ">=" ? "<=" : op;
      }
      if (x.kind == Val::kAffine && y.kind == Val::kUniform && (o == "<" || o == "<=")) {
        const int64_t bound = static_cast<int64_t>(std::ceil(y.num)) + (o == "<=" && y.num == std::floor(y.num) ? 1 : 0);
        Val m;
        m.kind = Val::kMask;
        m.valid = std::clamp<int64_t>(bound - x.off - base_, 0, chunk_);
        // a full row stays full while base <= bound - off - chunk; an empty one stays empty
        if (m.valid == chunk_) holds_while(bound - x.off - chunk_);
        else if (m.valid > 0) holds_while(base_);
        return m;
      }
      fail(ErrorKind::kType, span_, "condition '" + op + "' between a " + kind_name(x) + " and a " + kind_name(y) +
               " cannot become a tile mask",
           "write the bounds check as `if i < n` with i = pto.get_global_id() (+ offset) and n a number");
    }
    if ((x.kind == Val::kAffine || y.kind == Val::kAffine) && (op == "+" || op == "-")) {
      if (x.kind == Val::kAffine && y.kind == Val::kUniform) { x.off += static_cast<int64_t>(op == "+" ? y.num : -y.num); return x; }
      if (y.kind == Val::kAffine && x.kind == Val::kUniform && op == "+") { y.off += static_cast<int64_t>(x.num); return y; }
    }
    if (x.kind == Val::kPtr && op == "+" && !x.lane) {
      if (y.kind == Val::kUniform) { x.off += static_cast<int64_t>(y.num); return x; }
      if (y.kind == Val::kAffine) { x.off += y.off; x.lane = true; return x; }
    }
    if (x.kind == Val::kPtr && x.lane && y.kind == Val::kUniform && (op == "+" || op == "-")) {
      x.off += static_cast<int64_t>(op == "+" ? y.num : -y.num);
      return x;
    }
    if (x.kind == Val::kData || y.kind == Val::kData) {
      const bool commutes = op == "+" || op == "*" || op == "min" || op == "max";
      if (x.kind == Val::kUniform && commutes) std::swap(x, y);
      if (!tile_op(op, false))
        fail(ErrorKind::kType, span_, "operator '" + op + "' on loaded lane values is not supported", "use + - * / min max");
      const int slot = new_data_slot();
      if (active() > 0) {  // a chunk with no active lane computes nothing
        const int dst = tile(slot, active());
        InstrNote note;
        note.cls = op == "+" ? "ADD" : op == "-" ? "SUB" : op == "*" ? "MUL" : op == "/" ? "DIV" : op == "min" ? "MIN" : "MAX";
        note.tile = dst;
        if (x.kind == Val::kData && y.kind == Val::kUniform) {
          call(tile_op(op, true), {tile_var(tile(x.slot, active())), ir::ConstFloat::make(y.num)}, {}, {}, dst, note);
        } else {
          const int a = data_tile(x, "arithmetic"), b = data_tile(y, "arithmetic");
          call(tile_op(op, false), {tile_var(a), tile_var(b)}, {}, {}, dst, note);
        }
      }
      Val r;
      r.kind = Val::kData;
      r.slot = slot;
      return r;
    }
    fail(ErrorKind::kType, span_, "operator '" + op + "' between a " + kind_name(x) + " and a " + kind_name(y) +
             " is not supported in a tile-lowered kernel",
         "index tensors as `ptr + i` with i = pto.get_global_id() plus a number");
  }
  int new_data_slot() { return last_data_slot_ = next_data_slot_++; }

  // ---- memory -------------------------------------------------------------------------
  void check_window(const Val& ptr, int64_t lanes, const char* verb) {
    const int64_t numel = args_[ptr.arg].buffer->nbytes() / 4;
    if (lanes > 0) {  // which elements, relative to the lane, each buffer's accesses touch
      const DeviceBuffer* buf = args_[ptr.arg].buffer.get();
      accesses_[buf].insert(ptr.off);
      if (verb[0] == 'w') written_.insert(buf);
    }
    const int64_t first = base_ + ptr.off;
    if (lanes > 0) holds_while(numel - ptr.off - lanes);  // the window stays inside the tensor
    if (lanes > 0 && (first < 0 || first + lanes > numel))
      fail(ErrorKind::kValue, span_,
           std::string("lanes ") + std::to_string(base_) + ".." + std::to_string(base_ + lanes - 1) + " " + verb +
               " elements " + std::to_string(first) + ".." + std::to_string(first + lanes - 1) + " of '" +
               p_.params[ptr.arg] + "', which holds " + std::to_string(numel) + " fp32 elements",
           "guard the access with `if i < n` or allocate a larger tensor");
  }
  const Val& lane_ptr(int id, const char* what) {
    const Val& p = val(id);
    if (p.kind != Val::kPtr || !p.lane)
      fail(ErrorKind::kType, span_, std::string(what) + " needs a per-lane pointer `tensor + i` (i = pto.get_global_id()), got a " +
               (p.kind == Val::kPtr ? "pointer that is the same for every lane" : kind_name(p)),
           "add the lane index to the tensor: pto.load(a + i)");
    return p;
  }
  void store(const Val& ptr, int t, const char* cls) {
    const int64_t lanes = active();
    if (lanes == 0) return;
    check_window(ptr, lanes, "write");
    InstrNote note;
    note.cls = cls;
    note.tensor_arg = ptr.arg;
    note.tensor_offset = base_ + ptr.off;
    note.tile = t;
    call("tile.store", {tile_var(t), index_list({0, base_ + ptr.off}), tensor_var(param_of_arg_.at(ptr.arg))}, {}, {}, -1,
         note);
  }

  // ---- the body -----------------------------------------------------------------------
  void run_body(int from, int to) {
    masks_.clear();
    next_slot_ = -1;
    next_data_slot_ = 0;
    for (int pc = from; pc < to; ++pc) {
      const LaneOp& op = p_.ops[pc];
      span_ = op.span;
      step(op);
    }
  }

  void step(const LaneOp& op) {
    switch (op.kind) {
      case LaneOpKind::kConst: set(op.dst, uniform(op.value, op.is_float)); break;
      case LaneOpKind::kParam: {
        const LaunchArg& a = args_.at(op.args[0]);
        Val v;
        if (a.buffer) { v.kind = Val::kPtr; v.arg = op.args[0]; }
        else v = uniform(a.is_float ? a.f : static_cast<double>(a.i), a.is_float);
        set(op.dst, v);
        break;
      }
      case LaneOpKind::kGlobalId: { Val v; v.kind = Val::kAffine; v.off = 0; set(op.dst, v); break; }
      case LaneOpKind::kLaneId: { holds_while(base_); Val v; v.kind = Val::kAffine; v.off = -base_; set(op.dst, v); break; }
      case LaneOpKind::kBlockId: holds_while(base_); set(op.dst, uniform(static_cast<double>(block_id_), false)); break;
      case LaneOpKind::kBinary: set(op.dst, binary(op.name, val(op.args[0]), val(op.args[1]))); break;
      case LaneOpKind::kIf: {
        const Val& c = val(op.args[0]);
        int64_t valid;
        if (c.kind == Val::kMask) valid = c.valid;
        else if (c.kind == Val::kUniform) valid = c.num != 0 ? chunk_ : 0;
        else fail(ErrorKind::kType, span_, "`if` needs a bounds check `i < n` or a number, got a " + kind_name(c),
                  "write `if i < n` with i = pto.get_global_id()");
        masks_.push_back(std::min(active(), valid));
        break;
      }
      case LaneOpKind::kEndIf: masks_.pop_back(); break;
      case LaneOpKind::kLoad: {
        const Val& ptr = lane_ptr(op.args[0], "pto.load");
        Val v;
        v.kind = Val::kData;
        v.slot = new_data_slot();
        const int t = tile(v.slot, active());
        if (active() > 0) {
          check_window(ptr, active(), "read");
          InstrNote note;
          note.cls = "LOAD";
          note.tensor_arg = ptr.arg;
          note.tensor_offset = base_ + ptr.off;
          note.tile = t;
          call("tile.load", {tensor_var(param_of_arg_.at(ptr.arg)), index_list({0, base_ + ptr.off})},
               {{"valid_shape", index_list({1, active()})}}, {{"shape", std::vector<int64_t>{1, width_}}}, t, note);
        }
        set(op.dst, v);
        break;
      }
      case LaneOpKind::kStore: {
        const Val& ptr = lane_ptr(op.args[0], "pto.store");
        if (active() == 0) break;
        store(ptr, data_tile(val(op.args[1]), "pto.store"), "STORE");
        break;
      }
      case LaneOpKind::kFma:
      case LaneOpKind::kMad: {
        const Val& ptr = lane_ptr(op.args[0], op.kind == LaneOpKind::kFma ? "pto.fma" : "pto.mad");
        if (active() == 0) break;
        const std::string first = op.kind == LaneOpKind::kFma ? "+" : "*";
        Val r = binary(first, val(op.args[1]), val(op.args[2]));
        const Val& c = val(op.args[3]);
        if (!(c.kind == Val::kUniform && c.num == 0)) r = binary("+", r, c);
        if (r.kind == Val::kData) out_.notes.back().cls = op.kind == LaneOpKind::kFma ? "FMA" : "MAD";
        store(ptr, data_tile(r, "pto.fma"), "STORE");
        break;
      }
      case LaneOpKind::kBarrier:
      case LaneOpKind::kBarrierBlock:
        fail(ErrorKind::kInternal, span_, "barriers run on the warp simulator", "report this bug");
      case LaneOpKind::kStageBegin: stage_ = op.name; after_ = op.after; break;
      case LaneOpKind::kStageEnd: stage_.clear(); after_.clear(); break;
      case LaneOpKind::kPipelineRun: break;
      case LaneOpKind::kAllocLocal: { Val v; v.kind = Val::kLocal; v.slot = op.dst; set(op.dst, v); fresh_[op.dst] = true; break; }
      case LaneOpKind::kWaitAll: break;
      case LaneOpKind::kAsyncLoad: async_load(op); break;
      case LaneOpKind::kMma: mma(op); break;
      case LaneOpKind::kStoreLocal: store_local(op); break;
    }
  }

  // ---- pipelines ----------------------------------------------------------------------
  struct Role { MemorySpace mem = MemorySpace::Vec; int64_t rows = 1, cols = 0; };

  double uniform_of(int id) {
    for (const LaneOp& op : p_.ops) {
      if (op.dst != id) continue;
      if (op.kind == LaneOpKind::kConst) return op.value;
      if (op.kind == LaneOpKind::kParam && !args_.at(op.args[0]).buffer) {
        const LaunchArg& a = args_[op.args[0]];
        return a.is_float ? a.f : static_cast<double>(a.i);
      }
      if (op.kind == LaneOpKind::kBinary) return fold(op.name, uniform_of(op.args[0]), uniform_of(op.args[1]), false, op.span);
      fail(ErrorKind::kType, op.span, "a local buffer's size and the mma sizes must be numbers known at launch",
           "compute them from scalar kernel arguments and constants");
    }
    fail(ErrorKind::kInternal, {}, "value #" + std::to_string(id) + " has no definition", "report this bug");
  }

  void plan_locals() {
    for (const LaneOp& op : p_.ops) {
      if (op.kind == LaneOpKind::kAllocLocal) roles_[op.dst] = Role{MemorySpace::Vec, 1, static_cast<int64_t>(uniform_of(op.args[0]))};
    }
    for (const LaneOp& op : p_.ops) {
      if (op.kind != LaneOpKind::kMma) continue;
      span_ = op.span;
      const int64_t m = static_cast<int64_t>(uniform_of(op.args[3])), n = static_cast<int64_t>(uniform_of(op.args[4])),
                    k = static_cast<int64_t>(uniform_of(op.args[5]));
      const int c = local_id(op.args[0]), a = local_id(op.args[1]), b = local_id(op.args[2]);
      auto check = [&](int id, int64_t need, const char* what) {
        if (roles_[id].cols < need)
          fail(ErrorKind::kValue, op.span, std::string("pto.mma's ") + what + " local holds " + std::to_string(roles_[id].cols) +
                   " elements, the " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " product needs " +
                   std::to_string(need),
               "allocate it with pto.alloc_local(rows * cols)");
      };
      check(a, m * k, "A");
      check(b, k * n, "B");
      check(c, m * n, "C");
      roles_[a] = Role{MemorySpace::Left, m, k};
      roles_[b] = Role{MemorySpace::Right, k, n};
      roles_[c] = Role{MemorySpace::Acc, m, n};
    }
  }
  int local_id(int value_id) {
    for (const LaneOp& op : p_.ops)
      if (op.dst == value_id && op.kind == LaneOpKind::kAllocLocal) return value_id;
    fail(ErrorKind::kType, span_, "expected a buffer from pto.alloc_local", "pass the result of pto.alloc_local(n)");
  }
  // The tile of local `id` for this iteration (double buffered by block parity).
  int local_tile(int id, MemorySpace mem) {
    const Role& r = roles_.at(id);
    const int slot = 1000000 + id * 4 + parity_ * 2 + (mem == MemorySpace::Mat ? 1 : 0);
    return tile(slot, r.cols, mem, r.rows, r.cols);
  }
  // A pointer + byte count as a tile window: the tensor viewed with rows of `cols` elements.
  int window(const Val& ptr, int64_t nbytes, const Role& r, std::vector<int64_t>* offsets, const char* what) {
    if (ptr.kind != Val::kPtr || ptr.lane)
      fail(ErrorKind::kType, span_, std::string(what) + " needs `tensor + offset` with a number offset", "compute the offset from the block id");
    if (nbytes != r.rows * r.cols * 4)
      fail(ErrorKind::kValue, span_, std::string(what) + " moves " + std::to_string(nbytes) + " bytes but its local is " +
               std::to_string(r.rows) + "x" + std::to_string(r.cols) + " fp32 (" + std::to_string(r.rows * r.cols * 4) + " bytes)",
           "move rows * cols * 4 bytes");
    const int64_t numel = args_[ptr.arg].buffer->nbytes() / 4;
    if (ptr.off < 0 || ptr.off + r.rows * r.cols > numel || ptr.off % r.cols != 0 || numel % r.cols != 0)
      fail(ErrorKind::kValue, span_, std::string(what) + " at element " + std::to_string(ptr.off) + " of '" + p_.params[ptr.arg] +
               "' (" + std::to_string(numel) + " elements) is not a whole " + std::to_string(r.rows) + "x" + std::to_string(r.cols) + " block",
           "use offsets that are multiples of the tile width and stay inside the tensor");
    const auto key = std::make_pair(ptr.arg, r.cols);
    if (!view_param_.count(key)) {
      engines::TensorView v = out_.args[param_of_arg_.at(ptr.arg)].tensor;
      v.shape = {numel / r.cols, r.cols};
      v.strides = engines::row_major_strides(v.shape);
      out_.args.push_back(engines::HostArg::of_tensor(v));
      isa::ParamDesc d = out_.kernel.params[param_of_arg_.at(ptr.arg)];
      d.shape = v.shape;
      out_.kernel.params.push_back(d);
      view_param_[key] = static_cast<int>(out_.args.size()) - 1;
    }
    *offsets = {ptr.off / r.cols, 0};
    return view_param_[key];
  }
  void async_load(const LaneOp& op) {
    const int id = local_id(op.args[0]);
    const Role& r = roles_.at(id);
    const Val& ptr = val(op.args[1]);
    std::vector<int64_t> offs;
    const int t = window(ptr, static_cast<int64_t>(uniform_of_val(op.args[2])), r, &offs, "pto.async_load");
    InstrNote note;
    note.cls = "LOAD";
    note.tensor_arg = ptr.arg;
    note.tensor_offset = ptr.off;
    note.lanes = r.rows * r.cols;
    const bool cube = r.mem == MemorySpace::Left || r.mem == MemorySpace::Right;
    const MemorySpace at = cube ? MemorySpace::Mat : r.mem;
    const int staged = local_tile(id, at);
    note.tile = staged;
    call("tile.load", {tensor_var(t), index_list(offs)}, {}, {{"shape", std::vector<int64_t>{r.rows, r.cols}}, {"target_memory", at}},
         staged, note);
    if (cube) {
      const int dst = local_tile(id, r.mem);
      note.cls = "MOV";
      note.tile = dst;
      note.tensor_arg = -1;
      call("tile.move", {tile_var(staged)}, {}, {{"target_memory", r.mem}}, dst, note);
    }
  }
  double uniform_of_val(int id) {
    const Val& v = val(id);
    if (v.kind != Val::kUniform) fail(ErrorKind::kType, span_, "a byte count must be a number", "pass rows * cols * 4");
    return v.num;
  }
  void mma(const LaneOp& op) {
    const int c = local_id(op.args[0]), a = local_id(op.args[1]), b = local_id(op.args[2]);
    const int acc = local_tile(c, MemorySpace::Acc);
    InstrNote note;
    note.cls = "MMA";
    note.tile = acc;
    note.lanes = roles_[c].rows * roles_[c].cols;
    const ir::VarPtr l = tile_var(local_tile(a, MemorySpace::Left)), r = tile_var(local_tile(b, MemorySpace::Right));
    if (fresh_[c]) call("tile.matmul", {l, r}, {}, {}, acc, note);
    else call("tile.matmul_acc", {tile_var(acc), l, r}, {}, {}, acc, note);
    fresh_[c] = false;
  }
  void store_local(const LaneOp& op) {
    const int id = local_id(op.args[1]);
    const Role& r = roles_.at(id);
    const Val& ptr = val(op.args[0]);
    std::vector<int64_t> offs;
    const int t = window(ptr, static_cast<int64_t>(uniform_of_val(op.args[2])), r, &offs, "pto.store");
    const int src = local_tile(id, r.mem);
    InstrNote note;
    note.cls = "STORE";
    note.tensor_arg = ptr.arg;
    note.tensor_offset = ptr.off;
    note.tile = src;
    note.lanes = r.rows * r.cols;
    call("tile.store", {tile_var(src), index_list(offs), tensor_var(t)}, {}, {}, -1, note);
  }

  const LaneProgram& p_;
  const std::vector<LaunchArg>& args_;
  LaunchShape shape_;
  isa::ChipSpec chip_;
  LoweredKernel out_;
  std::vector<Val> vals_;
  std::map<int, int> param_of_arg_;
  std::map<std::pair<int, int64_t>, int> view_param_;
  std::map<std::tuple<int, int64_t, int>, int> tiles_;
  std::map<std::pair<int, int>, int64_t> addr_;
  std::map<int, int64_t> next_addr_;
  std::map<int, Role> roles_;
  std::map<int, bool> fresh_;
  std::map<int, ir::VarPtr> tile_vars_, tensor_vars_;  // IR values of tile slots and kernel parameters
  std::vector<int64_t> masks_;
  int64_t width_ = 0, base_ = 0, chunk_ = 0, block_id_ = 0;
  int parity_ = 0, next_slot_ = -1, next_data_slot_ = 0, last_data_slot_ = 0, num_regs_ = 0;
  bool measuring_ = false;  // bytes_per_lane's trial: no capacity check
  // The largest chunk base for which the chunk being lowered would give the same code (with
  // window offsets moving with the base): every use of the base narrows it (holds_while).
  int64_t same_until_ = std::numeric_limits<int64_t>::max();
  bool ranged_ = false;     // lanes(): the code runs the chunks with bases in [chunk_lo, chunk_hi)
  std::map<const DeviceBuffer*, std::set<int64_t>> accesses_;  // lane-relative element offsets
  std::set<const DeviceBuffer*> written_;
  std::string stage_, after_;
  Span span_;
  // Lowers the op calls (call()) into out_.kernel, as codegen's statement lowering does.
  ops::KernelBuilder kb_{out_.kernel.code, num_regs_, out_.kernel.reg_is_float, &out_.kernel.tiles};
};

}  // namespace

void check_launch_shape(const LaneProgram& program, LaunchShape shape) {
  if (shape.grid < 1 || shape.block < 1)
    fail(ErrorKind::kValue, {}, "launch of '" + program.name + "' with grid " + std::to_string(shape.grid) + " and block " +
             std::to_string(shape.block), "use positive grid and block sizes");
  if (shape.grid > kMaxLaunchLanes / shape.block)  // grid * block > the limit, without overflow
    fail(ErrorKind::kCapacity, {}, "launch of '" + program.name + "' with grid " + std::to_string(shape.grid) +
             " x block " + std::to_string(shape.block) + " has more than " + std::to_string(kMaxLaunchLanes) +
             " lanes (2**32, the most one launch may have)",
         "launch ceil(n / block) blocks for n elements: grid=((n + block - 1) // block, 1, 1)");
}

bool lowers_to_tiles(const LaneProgram& program) {
  return !program.uses(LaneOpKind::kBarrier) && !program.uses(LaneOpKind::kBarrierBlock);
}

LoweredKernel lower_lanes(const LaneProgram& program, const std::vector<LaunchArg>& args, LaunchShape shape,
                          const std::string& platform, int64_t chunk_blocks, bool unroll) {
  if (args.size() != program.params.size())
    fail(ErrorKind::kValue, program.ops.empty() ? Span{} : program.ops[0].span,
         "kernel '" + program.name + "' takes " + std::to_string(program.params.size()) + " arguments, got " +
             std::to_string(args.size()),
         "pass args=(...) with one entry per kernel parameter");
  check_launch_shape(program, shape);
  if (!isa::chip_for_platform(platform)) fail(ErrorKind::kPlatform, {}, "unknown platform '" + platform + "'", "use a2a3sim");
  Lowerer l(program, args, shape, *isa::chip_for_platform(platform));
  if (program.uses(LaneOpKind::kPipelineRun) || program.uses(LaneOpKind::kMma)) return l.pipeline();
  return l.lanes(chunk_blocks, unroll);
}

}  // namespace pypto::kernel
