// The cross-core FIFOs of a cluster (see cluster.h). One mutex and condition variable per
// mixed task: FIFO instructions are rare next to the work between them. A slot's lifetime
// is counted, not flagged: with pushes p, pops q and frees f of a FIFO, f <= q <= p <= f +
// depth; push #n uses slot n % depth.
#include "pypto/runtime/cluster.h"

#include <algorithm>
#include <cstring>
#include <variant>

#include "pypto/isa/instructions.h"

namespace pypto::runtime {

namespace {

thread_local ClusterPart* tl_part = nullptr;

std::string where(const Span& s) { return s.line > 0 ? s.str() : std::string("unknown line"); }

std::string shape_text(int64_t rows, int64_t cols, DataType dt) {
  return std::to_string(rows) + "x" + std::to_string(cols) + " " + dtype_name(dt);
}

}  // namespace

ClusterPart* current_cluster_part() { return tl_part; }

ClusterPartScope::ClusterPartScope(ClusterPart* part) : saved_(tl_part) { tl_part = part; }
ClusterPartScope::~ClusterPartScope() { tl_part = saved_; }

ClusterFifos::ClusterFifos(std::string task, int depth, std::vector<std::string> names)
    : task_(std::move(task)), depth_(std::max(depth, 1)), names_(std::move(names)) {
  names_.resize(3);
  parts_.resize(3);
  for (int aiv = 1; aiv < 3; ++aiv) {
    if (names_[aiv].empty()) continue;
    for (int dir = 0; dir < 2; ++dir) {
      Channel c;
      c.from = dir == 0 ? 0 : aiv;
      c.to = dir == 0 ? aiv : 0;
      c.slots.resize(depth_);
      channels_.push_back(std::move(c));
    }
  }
  for (int p = 0; p < 3; ++p)
    if (names_[p].empty()) parts_[p].state = State::kFinished;
}

std::string ClusterFifos::part_name(int part) const {
  static const char* roles[] = {"AIC", "AIV 0", "AIV 1"};
  return std::string(roles[part]) + " '" + names_[part] + "'";
}

std::string ClusterFifos::channel_name(const Channel& c) const {
  static const char* roles[] = {"AIC", "AIV 0", "AIV 1"};
  return std::string(roles[c.from]) + " -> " + roles[c.to];
}

std::string ClusterFifos::channel_state(const Channel& c) const {
  std::string s = channel_name(c) + " (depth " + std::to_string(depth_) + "): " + std::to_string(c.pushes) + " pushed, " +
                  std::to_string(c.pops) + " popped, " + std::to_string(c.frees) + " freed";
  for (uint64_t n = c.frees; n < c.pushes; ++n) {
    const Slot& slot = c.slots[n % depth_];
    s += "\n      slot " + std::to_string(n % depth_) + ": " + shape_text(slot.rows, slot.cols, slot.dtype) + " pushed at " +
         where(slot.push_span);
    s += n < c.pops ? ", popped at " + where(slot.pop_span) + ", not freed" : ", not popped";
  }
  return s;
}

ClusterFifos::Channel& ClusterFifos::channel(const ClusterPart& self, const TileCall& call, bool outgoing) {
  auto it = call.instr.attrs.find(isa::kPeerAttr);
  const std::string* peer = it == call.instr.attrs.end() ? nullptr : std::get_if<std::string>(&it->second);
  int other = -1;
  if (peer && *peer == "AIC") other = 0;
  if (peer && *peer == "AIV0") other = 1;
  if (peer && *peer == "AIV1") other = 2;
  if (other < 0 || (other == 0) == (self.part == 0))
    call.fail_runtime("in " + part_name(self.part) + " names peer '" + (peer ? *peer : std::string()) +
                          "', which is not a core across the cluster from it",
                      self.part == 0 ? "a cube (AIC) kernel talks to \"AIV0\" or \"AIV1\"" : "a vector (AIV) kernel talks to \"AIC\"");
  if (names_[other].empty())
    call.fail_runtime("in " + part_name(self.part) + " talks to " + (other == 2 ? "AIV 1" : "AIV 0") + ", but mixed task '" +
                          task_ + "' runs no kernel there",
                      "call a second AIV function in the Group function, or talk to AIV 0");
  const int from = outgoing ? self.part : other, to = outgoing ? other : self.part;
  for (Channel& c : channels_)
    if (c.from == from && c.to == to) return c;
  call.fail_runtime("no FIFO " + std::to_string(from) + " -> " + std::to_string(to), "report this bug");
}

bool ClusterFifos::deadlocked() const {
  for (const Part& p : parts_) {
    if (p.state == State::kFinished) continue;
    if (p.state != State::kWaiting || p.can_go()) return false;
  }
  return true;
}

std::string ClusterFifos::deadlock_report() const {
  std::string msg = "deadlock in mixed task '" + task_ + "': every part still running waits on a cross-core FIFO";
  for (int p = 0; p < 3; ++p) {
    if (names_[p].empty()) continue;
    const Part& part = parts_[p];
    msg += "\n  " + part_name(p) + (part.state == State::kFinished ? " has finished" : " waits at " + part.waits());
  }
  msg += "\n  FIFO state:";
  for (const Channel& c : channels_) msg += "\n    " + channel_state(c);
  return msg;
}

void ClusterFifos::wait(std::unique_lock<std::mutex>& lk, int part, const TileCall& call,
                        std::function<std::string()> waits, std::function<bool()> can_go) {
  Part& me = parts_[part];
  if (cancelled_) throw PartCancelled();
  if (can_go()) return;
  me.state = State::kWaiting;
  me.waits = std::move(waits);
  me.span = call.instr.span;
  me.can_go = std::move(can_go);
  for (;;) {
    if (cancelled_) {
      me.state = State::kRunning;
      throw PartCancelled();
    }
    if (deadlock_.empty() && me.can_go()) break;
    if (deadlock_.empty() && deadlocked()) {
      deadlock_ = deadlock_report();
      deadlock_span_ = call.instr.span;
      cv_.notify_all();
    }
    if (!deadlock_.empty()) {
      me.state = State::kRunning;
      fail(ErrorKind::kRuntime, deadlock_span_, deadlock_,
           "every TPUSH needs a TPOP in the peer, and every popped tile a TFREE before its producer pushes more than " +
               std::to_string(depth_) + " tiles (the FIFO depth) ahead: make the loop counts of the parts agree and free "
               "each popped tile after its last use");
    }
    cv_.wait(lk);
  }
  me.state = State::kRunning;
  me.can_go = nullptr;
}

void ClusterFifos::push(const ClusterPart& self, const TileCall& call) {
  std::unique_lock<std::mutex> lk(mu_);
  Channel& c = channel(self, call, true);
  const TileRef& src = call.in_tile(0);
  const Span at = call.instr.span;
  wait(lk, self.part, call,
       [this, &c, at, name = src.name] {
         return "TPUSH (" + where(at) + ") of tile '" + name + "' into " + channel_name(c) + ": all " + std::to_string(depth_) +
                " slots are taken (" + std::to_string(c.pushes - c.pops) + " pushed and not yet popped, " +
                std::to_string(c.pops - c.frees) + " popped and not yet freed)";
       },
       [&c, this] { return c.pushes - c.frees < static_cast<uint64_t>(depth_); });
  Slot& slot = c.slots[c.pushes % depth_];
  const double end = self.timing ? self.timing(slot.free_end) : 0;
  const int64_t eb = dtype_bytes(src.dtype);
  slot.dtype = src.dtype;
  slot.rows = src.valid_rows;
  slot.cols = src.valid_cols;
  slot.data.resize(static_cast<size_t>(slot.rows * slot.cols * eb));
  for (int64_t r = 0; r < slot.rows; ++r) std::memcpy(slot.data.data() + r * slot.cols * eb, src.at(r, 0), slot.cols * eb);
  slot.push_span = call.instr.span;
  slot.pushed_tile = src.name;
  slot.push_end = end;
  ++c.pushes;
  cv_.notify_all();
}

void ClusterFifos::pop(const ClusterPart& self, const TileCall& call) {
  std::unique_lock<std::mutex> lk(mu_);
  Channel& c = channel(self, call, false);
  const TileRef& dst = call.out_tile();
  const Span at = call.instr.span;
  wait(lk, self.part, call,
       [this, &c, at, name = dst.name] {
         return "TPOP (" + where(at) + ") into tile '" + name + "' from " + channel_name(c) + ": " +
                (c.pushes == 0 ? std::string("nothing has been pushed yet")
                               : "it has popped all " + std::to_string(c.pushes) + " tile(s) pushed so far");
       },
       [&c] { return c.pops < c.pushes; });
  Slot& slot = c.slots[c.pops % depth_];
  if (slot.dtype != dst.dtype || slot.rows != dst.valid_rows || slot.cols != dst.valid_cols)
    call.fail_runtime("in " + part_name(self.part) + " pops a " + shape_text(dst.valid_rows, dst.valid_cols, dst.dtype) +
                          " tile '" + dst.name + "', but the TPUSH at " + where(slot.push_span) + " in " +
                          part_name(c.from) + " pushed '" + slot.pushed_tile + "' as " +
                          shape_text(slot.rows, slot.cols, slot.dtype),
                      "pop with the pushed tile's shape and dtype (pl.tpop_from_" + std::string(self.part == 0 ? "aiv" : "aic") +
                          "([" + std::to_string(slot.rows) + ", " + std::to_string(slot.cols) + "], pl." + dtype_name(slot.dtype) +
                          ")), or push a tile of the popped shape");
  const double end = self.timing ? self.timing(slot.push_end) : 0;
  const int64_t eb = dtype_bytes(dst.dtype);
  for (int64_t r = 0; r < slot.rows; ++r) std::memcpy(dst.at(r, 0), slot.data.data() + r * slot.cols * eb, slot.cols * eb);
  (void)end;
  slot.pop_span = call.instr.span;
  slot.popped_tile = dst.name;
  slot.popped_into = dst.data;
  ++c.pops;
  cv_.notify_all();
}

void ClusterFifos::free(const ClusterPart& self, const TileCall& call) {
  std::unique_lock<std::mutex> lk(mu_);
  if (cancelled_) throw PartCancelled();
  Channel& c = channel(self, call, false);
  const TileRef& t = call.out_tile();
  if (c.frees >= c.pops)
    call.fail_runtime("in " + part_name(self.part) + " frees tile '" + t.name + "' but holds no popped tile of " +
                          channel_name(c) + " (" + std::to_string(c.pops) + " popped, " + std::to_string(c.frees) +
                          " freed already)",
                      "free each tile once, after the TPOP that produced it (t = pl.tpop_from_...; ...; pl.tfree_to_...(t))");
  Slot& slot = c.slots[c.frees % depth_];
  if (slot.popped_into != t.data)
    call.fail_runtime("in " + part_name(self.part) + " frees tile '" + t.name + "', but the oldest popped tile of " +
                          channel_name(c) + " is '" + slot.popped_tile + "' (popped at " + where(slot.pop_span) + ")",
                      "free popped tiles in the order they were popped, naming the tile each TPOP produced");
  slot.free_end = self.timing ? self.timing(0) : 0;
  ++c.frees;
  cv_.notify_all();
}

void ClusterFifos::finished(int part) {
  std::lock_guard<std::mutex> lk(mu_);
  parts_[part].state = State::kFinished;
  cv_.notify_all();
}

void ClusterFifos::failed(int part) {
  std::lock_guard<std::mutex> lk(mu_);
  parts_[part].state = State::kFailed;
  cancelled_ = true;
  cv_.notify_all();
}

void ClusterFifos::check_drained() {
  std::lock_guard<std::mutex> lk(mu_);
  for (const Channel& c : channels_) {
    if (c.pushes > c.pops) {
      const Slot& s = c.slots[c.pops % depth_];
      fail(ErrorKind::kRuntime, s.push_span,
           "mixed task '" + task_ + "' ended with " + std::to_string(c.pushes - c.pops) + " tile(s) in FIFO " +
               channel_name(c) + " that " + part_name(c.to) + " never popped (the oldest pushed here, tile '" +
               s.pushed_tile + "'); " + channel_state(c),
           "pop every tile the peer pushes: the TPUSH and TPOP loops of the two parts must run the same number of times");
    }
    if (c.pops > c.frees) {
      const Slot& s = c.slots[c.frees % depth_];
      fail(ErrorKind::kRuntime, s.pop_span,
           "mixed task '" + task_ + "' ended with " + std::to_string(c.pops - c.frees) + " tile(s) of FIFO " +
               channel_name(c) + " popped by " + part_name(c.to) + " and never freed (the oldest popped here into '" +
               s.popped_tile + "'); " + channel_state(c),
           std::string("release each popped tile after its last use with pl.tfree_to_") + (c.to == 0 ? "aiv(t, aiv=...)" : "aic(t)"));
    }
  }
}

}  // namespace pypto::runtime
