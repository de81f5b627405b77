// Modelled issue timeline of lowered kernels (per-pipe in-order issue with tile RAW/WAR
// hazards and pipeline stage order), and the single-step executor behind pypto.debug.
#include "pypto/kernel/timeline.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "pypto/isa/instructions.h"
#include "pypto/engines/scalar_machine.h"

namespace pypto::kernel {

namespace {

int64_t tile_bytes(const isa::TileDesc& t) { return isa::allocated_tile_bytes(t.rows, t.cols, t.dtype, t.memory); }
int64_t valid_bytes(const isa::TileDesc& t) {
  return t.valid_rows.i * t.valid_cols.i * static_cast<int64_t>(dtype_bytes(t.dtype));
}

double cost(const isa::Kernel& k, const isa::Instr& in) {
  const isa::InstrDef* def = isa::find_instr(in.mnemonic);
  if (!def) return 1;
  auto tile_of = [&](const isa::Operand& o) -> const isa::TileDesc* {
    return o.kind == isa::Operand::kTile ? &k.tiles.at(o.index) : nullptr;
  };
  if (in.mnemonic == "TLOAD") {
    const isa::TileDesc* t = tile_of(in.outs[0]);
    return isa::transfer_cost_cycles(MemorySpace::DDR, t->memory, valid_bytes(*t));
  }
  if (in.mnemonic == "TSTORE") {
    const isa::TileDesc* t = tile_of(in.ins[0]);
    return isa::transfer_cost_cycles(t->memory, MemorySpace::DDR, valid_bytes(*t));
  }
  if (def->family == isa::InstrFamily::kMove) {
    const isa::TileDesc* s = tile_of(in.ins[0]);
    const isa::TileDesc* d = tile_of(in.outs[0]);
    return isa::transfer_cost_cycles(s->memory, d->memory, valid_bytes(in.mnemonic == "TINSERT" ? *s : *d));
  }
  if (def->family == isa::InstrFamily::kMatmul) {
    const isa::TileDesc* acc = tile_of(in.outs[0]);
    const isa::TileDesc* left = tile_of(in.ins[in.mnemonic == "TMATMUL_ACC" ? 1 : 0]);
    return isa::instr_cost_cycles(*def, left->dtype, acc->rows, acc->cols, left->cols);
  }
  const isa::TileDesc* d = tile_of(in.outs[0]);
  return isa::instr_cost_cycles(*def, d->dtype, d->valid_rows.i, d->valid_cols.i);
}

struct Range {
  int mem;
  int64_t lo, hi;
};
Range range_of(const isa::Kernel& k, const isa::Operand& o) {
  const isa::TileDesc& t = k.tiles.at(o.index);
  return {static_cast<int>(t.memory), t.addr, t.addr + tile_bytes(t)};
}

}  // namespace

std::vector<TimelineEntry> model_timeline(const LoweredKernel& lowered) {
  const isa::Kernel& k = lowered.kernel;
  std::map<int, double> pipe_free;
  struct Mark { Range r; double t; };
  std::vector<Mark> writes, reads;
  std::map<std::pair<int64_t, std::string>, double> stage_end;
  std::vector<TimelineEntry> out;
  auto overlap = [](const Range& a, const Range& b) { return a.mem == b.mem && a.lo < b.hi && b.lo < a.hi; };
  std::vector<int> visible(k.code.size(), -1);  // pc -> user-visible index
  for (size_t v = 0; v < lowered.lane_pcs.size(); ++v) visible.at(lowered.lane_pcs[v]) = static_cast<int>(v);
  auto model = [&](size_t i) {
    const isa::Instr& in = k.code[i];
    const InstrNote& note = lowered.notes[i];
    const isa::Pipe pipe = isa::pipe_of(in, k);
    double start = pipe_free[static_cast<int>(pipe)];
    std::vector<Range> ins, outs;
    for (const isa::Operand& o : in.ins) if (o.kind == isa::Operand::kTile) ins.push_back(range_of(k, o));
    for (const isa::Operand& o : in.outs) if (o.kind == isa::Operand::kTile) outs.push_back(range_of(k, o));
    for (const Range& r : ins) for (const Mark& w : writes) if (overlap(r, w.r)) start = std::max(start, w.t);
    for (const Range& r : outs) {
      for (const Mark& m : reads) if (overlap(r, m.r)) start = std::max(start, m.t);
      for (const Mark& m : writes) if (overlap(r, m.r)) start = std::max(start, m.t);
    }
    if (!note.after.empty()) {
      auto it = stage_end.find({note.iteration, note.after});
      if (it != stage_end.end()) start = std::max(start, it->second);
    }
    const double end = start + std::max(1.0, cost(k, in));
    pipe_free[static_cast<int>(pipe)] = end;
    for (const Range& r : ins) reads.push_back({r, end});
    for (const Range& r : outs) writes.push_back({r, end});
    if (!note.stage.empty()) {
      double& e = stage_end[{note.iteration, note.stage}];
      e = std::max(e, end);
    }
    // Forget marks that can no longer delay anything (keeps long kernels linear).
    if (writes.size() > 64) writes.erase(writes.begin(), writes.begin() + 32);
    if (reads.size() > 64) reads.erase(reads.begin(), reads.begin() + 32);
    out.push_back({visible[i], start, end, isa::pipe_name(pipe)});
  };
  // The modelled order is the executed order: the scalar code (loops over chunk bases,
  // chunk-range guards) runs on a scalar machine over the whole launch (chunk_lo = 0,
  // chunk_hi = all lanes). Flags and scalar code take no modelled time here: the hazards
  // the flags order are modelled directly.
  engines::ScalarMachine regs(k.num_regs, k.reg_is_float);
  if (lowered.chunk_range) {
    regs.set(0, engines::ScalarValue::of_int(0));
    regs.set(1, engines::ScalarValue::of_int(lowered.total_lanes));
  }
  const int n = static_cast<int>(k.code.size());
  for (int pc = 0; pc < n;) {
    if (k.code[pc].kind != isa::InstrKind::kTile) {
      pc = regs.step(k.code, pc);
      continue;
    }
    if (visible[pc] >= 0) model(static_cast<size_t>(pc));
    ++pc;
  }
  return out;
}

KernelStepper::KernelStepper(std::shared_ptr<LoweredKernel> lowered, const std::string& platform)
    : lowered_(std::move(lowered)), core_(*isa::chip_for_platform(platform)) {
  for (const isa::Instr& in : lowered_->kernel.code)
    if (in.kind != isa::InstrKind::kTile)
      fail(ErrorKind::kValue, in.span, "kernel '" + lowered_->kernel.name + "' was lowered with loops; the stepper runs straight-line code",
           "lower it with unroll=True (pypto.debug.debug_kernel does)");
  one_ = lowered_->kernel;
  one_.code.clear();
}

// Runs the next user-visible instruction. The set_flag / wait_flag InsertSync put around it
// carry no data and order pipes only; one instruction at a time is already in order.
void KernelStepper::step() {
  if (done()) fail(ErrorKind::kValue, {}, "the kernel has finished; no instruction left to step", "create a new debug_kernel context");
  one_.code = {lowered_->kernel.code[lowered_->lane_pcs[pc_]]};
  core_.run(one_, lowered_->args);
  ++pc_;
}

std::vector<float> KernelStepper::tile_values(int tile, int64_t from, int64_t count) {
  const isa::TileDesc& t = lowered_->kernel.tiles.at(tile);
  const int64_t n = t.rows * t.cols;
  std::vector<float> out;
  const uint8_t* base = core_.buffer(t.memory).data() + t.addr;
  for (int64_t i = from; i < std::min(n, from + count); ++i) {
    float f;
    std::memcpy(&f, base + i * 4, 4);
    out.push_back(f);
  }
  return out;
}

}  // namespace pypto::kernel
