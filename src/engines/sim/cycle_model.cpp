// The cycle model and race checker of the sim engine (see cycle_model.h). Functional
// execution stays in program order; this file only computes when each instruction would
// run on its pipe and whether the program's flags order every cross-pipe dependency.
#include "pypto/engines/cycle_model.h"

#include <algorithm>
#include <variant>

#include "pypto/isa/instructions.h"
#include "pypto/engines/cluster.h"

namespace pypto::engines {

namespace {

std::string attr_str(const isa::Instr& in, const std::string& key) {
  auto it = in.attrs.find(key);
  if (it == in.attrs.end()) return "";
  if (auto* s = std::get_if<std::string>(&it->second)) return *s;
  return "";
}

int64_t attr_int(const isa::Instr& in, const std::string& key) {
  auto it = in.attrs.find(key);
  if (it == in.attrs.end()) return 0;
  if (auto* i = std::get_if<int64_t>(&it->second)) return *i;
  return 0;
}

isa::Pipe attr_pipe(const isa::Instr& in, const std::string& key) {
  isa::Pipe p;
  const std::string name = attr_str(in, key);
  if (!isa::pipe_from_name(name, &p))
    fail(ErrorKind::kValue, in.span, in.mnemonic + ": attribute '" + key + "' is '" + name + "', not a pipe",
         "use one of S, V, MTE1, MTE2, MTE3, M, FIX");
  return p;
}

// The bytes of `t` that a TLOAD / TSTORE (or TPREFETCH) moves: from the element at its
// offsets to the last element of the tile's valid region (the last two dimensions move with
// the tile's rows and columns). Other instructions (MGATHER / MSCATTER: any element) and
// offsets the library will reject get the whole view. Computed on addresses, never
// dereferenced.
std::pair<uintptr_t, uintptr_t> tensor_window(const isa::Instr& instr, const TileCall& call, const TensorView& t) {
  auto [vlo, vhi] = t.byte_range();
  const std::pair<uintptr_t, uintptr_t> whole{reinterpret_cast<uintptr_t>(vlo), reinterpret_cast<uintptr_t>(vhi)};
  const TileRef* tile = nullptr;
  if (instr.mnemonic == "TLOAD" && !call.outs.empty() && call.outs[0].kind == isa::Operand::kTile) tile = &call.outs[0].tile;
  if (instr.mnemonic == "TSTORE" && !call.ins.empty() && call.ins[0].kind == isa::Operand::kTile) tile = &call.ins[0].tile;
  if (tile == nullptr || call.ins.size() < 2 || call.ins[1].kind != isa::Operand::kScalarList) return whole;
  const std::vector<int64_t>& off = call.ins[1].list;
  const size_t rank = t.shape.size();
  if (rank == 0 || off.size() != rank || t.strides.size() != rank || tile->valid_rows < 1 || tile->valid_cols < 1) return whole;
  std::vector<int64_t> last = off;
  auto [rd, cd] = isa::box_dims(instr, static_cast<int>(rank));
  if (cd < 0 || cd >= static_cast<int>(rank) || rd >= static_cast<int>(rank)) return whole;
  // Offsets near INT64_MAX (which the library rejects) overflow here: the whole view then.
  if (__builtin_add_overflow(last[cd], tile->valid_cols - 1, &last[cd])) return whole;
  if (rd >= 0 && __builtin_add_overflow(last[rd], tile->valid_rows - 1, &last[rd])) return whole;
  int64_t first_elem = 0, last_elem = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (off[d] < 0 || last[d] >= t.shape[d]) return whole;
    int64_t f = 0, l = 0;
    if (__builtin_mul_overflow(off[d], t.strides[d], &f) || __builtin_mul_overflow(last[d], t.strides[d], &l) ||
        __builtin_add_overflow(first_elem, f, &first_elem) || __builtin_add_overflow(last_elem, l, &last_elem))
      return whole;
  }
  const int64_t eb = dtype_bytes(t.dtype);
  const auto base = reinterpret_cast<uintptr_t>(t.data);
  int64_t lo = 0, hi = 0;
  if (__builtin_mul_overflow(std::min(first_elem, last_elem), eb, &lo) ||
      __builtin_mul_overflow(std::max(first_elem, last_elem) + 1, eb, &hi))
    return whole;
  return {base + static_cast<uintptr_t>(lo), base + static_cast<uintptr_t>(hi)};
}

std::string where(const Span& s, int pc) {
  return (s.line > 0 ? s.str() + ", " : std::string()) + "pc " + std::to_string(pc);
}

}  // namespace

CycleModel::CycleModel(const isa::Kernel& kernel, bool record_events) : kernel_(kernel), record_(record_events) {
  timeline_.kernel = kernel.name;
}

void CycleModel::scalar() { now_ += 1; }

double CycleModel::cost_of(const isa::Instr& instr, const TileCall& call) const {
  const isa::InstrDef* def = isa::find_instr(instr.mnemonic);
  if (def == nullptr) return 1;
  auto memory_of = [&](const isa::Operand& o) {
    return o.kind == isa::Operand::kTile ? kernel_.tiles.at(o.index).memory : MemorySpace::DDR;
  };
  auto valid_bytes = [](const TileRef& t) { return t.valid_rows * t.valid_cols * dtype_bytes(t.dtype); };
  if (def->name == "TLOAD" || def->name == "MGATHER")
    return isa::transfer_cost_cycles(MemorySpace::DDR, memory_of(instr.outs.at(0)), valid_bytes(call.out_tile()));
  if (def->name == "TSTORE" || def->name == "MSCATTER")
    return isa::transfer_cost_cycles(memory_of(instr.ins.at(0)), MemorySpace::DDR, valid_bytes(call.in_tile(0)));
  if (def->name == "TINSERT" && memory_of(instr.ins.at(0)) == MemorySpace::Acc)  // the fixpipe moves src's bytes
    return isa::transfer_cost_cycles(MemorySpace::Acc, MemorySpace::Mat, valid_bytes(call.in_tile(0)));
  if (def->name == "TMOV")
    return isa::transfer_cost_cycles(memory_of(instr.ins.at(0)), memory_of(instr.outs.at(0)), valid_bytes(call.out_tile()));
  if (def->name == "TPUSH")  // into the peer's buffer: UB of an AIV, L1 of the AIC
    return isa::transfer_cost_cycles(memory_of(instr.ins.at(0)), isa::fifo_landing_memory(isa::fifo_peer(instr)),
                                     valid_bytes(call.in_tile(0)));
  if (def->name == "TPOP" || def->name == "TFREE") return isa::instr_cost_cycles(*def, DataType::FP32, 0, 0);
  if (def->family == isa::InstrFamily::kMatmul) {
    const bool acc_in = def->name == "TMATMUL_ACC" || def->name == "TGEMV_ACC";
    const TileRef& left = call.in_tile(acc_in ? 1 : 0);
    const TileRef& acc = call.out_tile();
    return isa::instr_cost_cycles(*def, left.dtype, acc.valid_rows, acc.valid_cols, left.valid_cols);
  }
  // Vector work: over the larger of the destination's and the first source's valid region.
  const TileRef* t = nullptr;
  for (const auto& o : call.outs)
    if (o.kind == isa::Operand::kTile) { t = &o.tile; break; }
  for (const auto& o : call.ins)
    if (o.kind == isa::Operand::kTile && (t == nullptr || valid_bytes(o.tile) > valid_bytes(*t))) { t = &o.tile; break; }
  if (t == nullptr) return isa::instr_cost_cycles(*def, DataType::FP32, 0, 0);
  return isa::instr_cost_cycles(*def, t->dtype, t->valid_rows, t->valid_cols);
}

double CycleModel::sync(const isa::Instr& in, double not_before) {
  const int64_t event = attr_int(in, "event");
  const ClusterPart* part = current_cluster_part();
  const bool cross_part = part != nullptr && part->fifos != nullptr;
  double result = -1;
  if (in.mnemonic == "SET_FLAG") {
    const isa::Pipe src = attr_pipe(in, "src"), dst = attr_pipe(in, "dst");
    const int s = static_cast<int>(src);
    flags_[{s, static_cast<int>(dst), event}].push_back({std::max(pipe_free_[s], now_), clock_[s]});
  } else if (in.mnemonic == "WAIT_FLAG") {
    const isa::Pipe src = attr_pipe(in, "src"), dst = attr_pipe(in, "dst");
    const int d = static_cast<int>(dst);
    auto& q = flags_[{static_cast<int>(src), d, event}];
    if (q.empty())
      fail(ErrorKind::kRuntime, in.span,
           "wait_flag(" + std::string(isa::pipe_name(src)) + ", " + isa::pipe_name(dst) + ", event " +
               std::to_string(event) + ") in kernel '" + kernel_.name + "' has no earlier matching set_flag: the " +
               isa::pipe_name(dst) + " pipe would wait forever",
           "issue set_flag(PIPE_" + std::string(isa::pipe_name(src)) + ", PIPE_" + isa::pipe_name(dst) +
               ", EVENT_ID" + std::to_string(event) + ") on the producer side first");
    const Flag f = q.front();
    q.pop_front();
    pipe_free_[d] = std::max({pipe_free_[d], f.time, now_});
    for (int p = 0; p < 7; ++p) clock_[d][p] = std::max(clock_[d][p], f.clock[p]);
  } else if (in.mnemonic == "SYNC_SET") {
    // Fires once the pipe's earlier instructions have ended, and reaches the peer one signal
    // latency later. In a mixed task the reference library hands the time to the other side
    // of the cluster (ClusterFifos::event_set); in a task of one core the core pairs it itself.
    const int p = static_cast<int>(attr_pipe(in, "pipe"));
    result = std::max(pipe_free_[p], now_) + sync_cost(in);
    if (!cross_part) events_[event].push_back({result, clock_[p]});
  } else if (in.mnemonic == "SYNC_WAIT") {
    // Holds the pipe until the matching set has fired: in a mixed task `not_before`, the
    // cycle the peer's set fired (the part waited for it in ClusterFifos::event_wait).
    const int p = static_cast<int>(attr_pipe(in, "pipe"));
    double fired = not_before;
    if (!cross_part) {
      auto& q = events_[event];
      if (q.empty())
        fail(ErrorKind::kRuntime, in.span,
             "pl.system.sync_wait(" + std::to_string(event) + ") in kernel '" + kernel_.name +
                 "' has no earlier sync_set of event " + std::to_string(event) + " to pair with: the " +
                 isa::pipe_name(static_cast<isa::Pipe>(p)) + " pipe would wait forever",
             "set the event first with pl.system.sync_set(" + std::to_string(event) +
                 ", pipe=...) (in a mixed task, on the other side of the cluster)");
      const Flag f = q.front();
      q.pop_front();
      fired = f.time;
      for (int k = 0; k < 7; ++k) clock_[p][k] = std::max(clock_[p][k], f.clock[k]);
    }
    pipe_free_[p] = std::max({pipe_free_[p], fired, now_});
  } else if (in.mnemonic == "FENCE") {
    // Later global-memory accesses (MTE2 / MTE3 / FIX) start after every earlier write to
    // global memory (MTE3, FIX) has ended, and are ordered after them.
    const int gm[] = {static_cast<int>(isa::Pipe::MTE2), static_cast<int>(isa::Pipe::MTE3), static_cast<int>(isa::Pipe::FIX)};
    const int writers[] = {static_cast<int>(isa::Pipe::MTE3), static_cast<int>(isa::Pipe::FIX)};
    double t = now_;
    for (int w : writers) t = std::max(t, pipe_free_[w]);
    for (int q : gm) {
      pipe_free_[q] = std::max(pipe_free_[q], t);
      for (int w : writers) clock_[q][w] = std::max(clock_[q][w], clock_[w][w]);
    }
  } else if (in.mnemonic == "SYNCALL") {
    // Every core of the launch arrives: this core's pipes all drain first (the launch is one
    // core here, see LowerProgram's check), then the handshake: hard (FFTS) one signal
    // latency, soft a counter increment stored to and polled from global memory.
    join_all_pipes();
    const bool soft = attr_str(in, "mode") == "soft";
    const double handshake = soft ? isa::transfer_cost_cycles(MemorySpace::Vec, MemorySpace::DDR, 32) +
                                        isa::transfer_cost_cycles(MemorySpace::DDR, MemorySpace::Vec, 32)
                                  : sync_cost(in);
    now_ += handshake;
    pipe_free_.fill(now_);
    if (record_) timeline_.events.push_back({in.mnemonic, isa::Pipe::S, now_ - handshake, now_, -1, in.span.line});
  } else if (in.mnemonic == "CACHEINVALID") {
    // The scalar unit invalidates its data cache: a round trip to global memory.
    const double start = now_;
    now_ += sync_cost(in);
    if (record_) timeline_.events.push_back({in.mnemonic, isa::Pipe::S, start, now_, -1, in.span.line});
  } else if (in.mnemonic != "PIPE_BARRIER") {
    // SET_FFTS: one scalar-issue cycle; it orders nothing between the pipes of this core.
  } else {  // PIPE_BARRIER: "ALL" joins every pipe; one pipe waits for its earlier instructions
    const std::string which = attr_str(in, "pipe");
    if (which == "ALL" || which == "PIPE_ALL" || which.empty()) {
      join_all_pipes();
    } else {
      // The pipe's later instructions start after its earlier ones have ended (a pipe runs
      // in order in this model, so only the dispatcher's view changes: the barrier issues
      // once the pipe is free).
      const int p = static_cast<int>(attr_pipe(in, "pipe"));
      pipe_free_[p] = std::max(pipe_free_[p], now_);
    }
  }
  now_ += 1;
  return result >= 0 ? result : now_;
}

double CycleModel::sync_cost(const isa::Instr& in) const {
  const isa::InstrDef* def = isa::find_instr(in.mnemonic);
  return def == nullptr ? 1 : isa::instr_cost_cycles(*def, DataType::FP32, 0, 0);
}

void CycleModel::join_all_pipes() {
  double t = now_;
  Clock joined{};
  for (int p = 0; p < 7; ++p) {
    t = std::max(t, pipe_free_[p]);
    for (int k = 0; k < 7; ++k) joined[k] = std::max(joined[k], clock_[p][k]);
  }
  pipe_free_.fill(t);
  now_ = t;
  clock_.fill(joined);
}

void CycleModel::check_and_record(const isa::Instr& instr, int pc, isa::Pipe pipe, uintptr_t lo, uintptr_t hi,
                                  const std::string& what, bool write, uint64_t seq) {
  const int q = static_cast<int>(pipe);
  for (const Access& a : accesses_) {
    if (a.pipe == pipe || a.hi <= lo || hi <= a.lo || !(a.write || write)) continue;
    if (clock_[q][static_cast<int>(a.pipe)] >= a.seq) continue;  // ordered by a flag chain or barrier
    const std::string P = isa::pipe_name(a.pipe), Q = isa::pipe_name(pipe);
    const char* kind = a.write ? (write ? "writes" : "reads") : "writes";
    fail(ErrorKind::kRuntime, instr.span,
         "race in kernel '" + kernel_.name + "': " + instr.mnemonic + " (" + where(instr.span, pc) + ") on pipe " + Q +
             " " + kind + " " + what + " while " + a.instr + " (" + where(a.span, a.pc) + ") on pipe " + P +
             " may still be " + (a.write ? "writing" : "reading") + " it; no flag orders " + P +
             " before " + Q,
         "insert set_flag(PIPE_" + P + ", PIPE_" + Q + ", EVENT_ID0) after the " + a.instr + " and wait_flag(PIPE_" + P +
             ", PIPE_" + Q + ", EVENT_ID0) before the " + instr.mnemonic +
             ", or let the compiler insert sync (compiled kernels get it from the InsertSync step)");
  }
  // Drop what this access supersedes: same pipe, covered range, and not a write hidden by a read.
  std::erase_if(accesses_, [&](const Access& a) {
    return a.pipe == pipe && a.lo >= lo && a.hi <= hi && (write || !a.write);
  });
  accesses_.push_back({lo, hi, pipe, seq, write, what, instr.mnemonic, instr.span, pc});
}

double CycleModel::issue(int pc, const isa::Instr& instr, const TileCall& call, double not_before) {
  const isa::InstrDef* def = isa::find_instr(instr.mnemonic);
  if (def != nullptr && def->family == isa::InstrFamily::kSync) return sync(instr, not_before);
  const isa::Pipe pipe = isa::pipe_of(instr, kernel_);
  const int q = static_cast<int>(pipe);
  const uint64_t seq = ++seq_[q];
  // Tiles by their bytes; a global tensor by the span of the window the instruction moves
  // (tensors passed twice, e.g. in place as input and output, are told apart by window).
  auto record = [&](const OperandValue& o, bool write) {
    if (o.kind == isa::Operand::kTile) {
      const auto lo = reinterpret_cast<uintptr_t>(o.tile.data);
      check_and_record(instr, pc, pipe, lo, lo + static_cast<uintptr_t>(o.tile.bytes()), "tile '" + o.tile.name + "'",
                       write, seq);
    } else if (o.kind == isa::Operand::kTensor && o.tensor != nullptr) {
      auto [lo, hi] = tensor_window(instr, call, *o.tensor);
      if (lo != hi) check_and_record(instr, pc, pipe, lo, hi, "tensor '" + o.tensor->name + "'", write, seq);
    }
  };
  for (const auto& o : call.ins) record(o, false);
  for (const auto& o : call.outs) record(o, true);
  clock_[q][q] = seq;

  const double cost = cost_of(instr, call);
  double start, end;
  if (pipe == isa::Pipe::S) {
    // The scalar unit runs it in line; a cross-core wait (not_before) stalls the dispatcher.
    start = std::max(now_, not_before);
    if (def != nullptr && def->family == isa::InstrFamily::kCrossCore) start = std::max(start, pipe_free_[q]);
    end = now_ = start + cost;
    pipe_free_[q] = std::max(pipe_free_[q], end);
  } else {
    start = std::max({pipe_free_[q], now_, not_before});
    end = pipe_free_[q] = start + cost;
    now_ += 1;  // dispatch
  }
  timeline_.busy[q] += end - start;
  timeline_.end_cycles = std::max(timeline_.end_cycles, end);
  if (record_) timeline_.events.push_back({instr.mnemonic, pipe, start, end, pc, instr.span.line});
  return end;
}

Timeline CycleModel::finish() {
  for (double t : pipe_free_) timeline_.end_cycles = std::max(timeline_.end_cycles, t);
  timeline_.end_cycles = std::max(timeline_.end_cycles, now_);
  return std::move(timeline_);
}

}  // namespace pypto::engines
