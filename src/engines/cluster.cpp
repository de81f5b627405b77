// The cross-core FIFOs of a cluster (see cluster.h). One mutex and condition variable per
// mixed task: FIFO instructions are rare next to the work between them. A slot's lifetime
// is counted, not flagged: with pushes p, pops q and frees f of a FIFO, f <= q <= p <= f +
// depth; push #n uses slot n % depth.
#include "pypto/engines/cluster.h"

#include <algorithm>
#include <cstring>
#include <variant>

#include "pypto/isa/instructions.h"

namespace pypto::engines {

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

ClusterFifos::ClusterFifos(std::string task, int depth, std::vector<std::string> names, std::map<int64_t, int> depths)
    : task_(std::move(task)), depth_(std::max(depth, 1)), names_(std::move(names)), depths_(std::move(depths)) {
  names_.resize(3);
  parts_.resize(3);
  for (int p = 0; p < 3; ++p)
    if (names_[p].empty()) parts_[p].state = State::kFinished;
}

int ClusterFifos::depth_of(int64_t id) const {
  auto it = depths_.find(id);
  return it == depths_.end() ? depth_ : std::max(it->second, 1);
}

static int64_t instr_int(const TileCall& call, const char* key) {
  auto it = call.instr.attrs.find(key);
  const int64_t* v = it == call.instr.attrs.end() ? nullptr : std::get_if<int64_t>(&it->second);
  return v ? *v : 0;
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
  std::string s = channel_name(c) + (c.id ? " pipe " + std::to_string(c.id) : std::string()) + " (depth " +
                  std::to_string(c.depth) + "): " + std::to_string(c.pushes) + " pushed, " +
                  std::to_string(c.pops) + " popped, " + std::to_string(c.frees) + " freed";
  for (uint64_t n = c.frees; n < c.pushes; ++n) {
    const Slot& slot = c.slots[n % c.depth];
    s += "\n      slot " + std::to_string(n % c.depth) + ": " + shape_text(slot.rows, slot.cols, slot.dtype) + " pushed at " +
         where(slot.push_span);
    s += n < c.pops ? ", popped at " + where(slot.pop_span) + ", not freed" : ", not popped";
  }
  return s;
}

ClusterFifos::Channel& ClusterFifos::channel(const ClusterPart& self, const TileCall& call, bool outgoing, int forced) {
  auto it = call.instr.attrs.find(isa::kPeerAttr);
  const std::string* peer = it == call.instr.attrs.end() ? nullptr : std::get_if<std::string>(&it->second);
  int other = forced;
  if (other < 0 && peer && *peer == "AIC") other = 0;
  if (other < 0 && peer && *peer == "AIV0") other = 1;
  if (other < 0 && peer && *peer == "AIV1") other = 2;
  if (other < 0 || (other == 0) == (self.part == 0))
    call.fail_runtime("in " + part_name(self.part) + " names peer '" + (peer ? *peer : std::string()) +
                          "', which is not a core across the cluster from it",
                      self.part == 0 ? "a cube (AIC) kernel talks to \"AIV0\" or \"AIV1\"" : "a vector (AIV) kernel talks to \"AIC\"");
  if (names_[other].empty())
    call.fail_runtime("in " + part_name(self.part) + " talks to " + (other == 2 ? "AIV 1" : "AIV 0") + ", but mixed task '" +
                          task_ + "' runs no kernel there",
                      "call a second AIV function in the Group function, or talk to AIV 0");
  const int from = outgoing ? self.part : other, to = outgoing ? other : self.part;
  const int64_t id = instr_int(call, "id");
  for (Channel& c : channels_)
    if (c.from == from && c.to == to && c.id == id) return c;
  Channel c;
  c.from = from;
  c.to = to;
  c.id = id;
  c.depth = depth_of(id);
  c.slots.resize(c.depth);
  channels_.push_back(std::move(c));
  return channels_.back();
}

void ClusterFifos::fill_slot(Channel& c, const TileCall& call, const TileRef& src, int64_t r0, int64_t nr, int64_t c0,
                             int64_t nc, double end) {
  Slot& slot = c.slots[c.pushes % c.depth];
  const int64_t eb = dtype_bytes(src.dtype);
  slot.dtype = src.dtype;
  slot.rows = nr;
  slot.cols = nc;
  slot.data.resize(static_cast<size_t>(nr * nc * eb));
  for (int64_t r = 0; r < nr; ++r) std::memcpy(slot.data.data() + r * nc * eb, src.at(r0 + r, c0), nc * eb);
  slot.push_span = call.instr.span;
  slot.pushed_tile = src.name;
  slot.push_end = end;
  ++c.pushes;
}

bool ClusterFifos::deadlocked() const {
  for (const Part& p : parts_) {
    if (p.state == State::kFinished) continue;
    if (p.state != State::kWaiting || p.can_go()) return false;
  }
  return true;
}

std::string ClusterFifos::deadlock_report() const {
  std::string msg = "deadlock in mixed task '" + task_ + "': every part still running waits on a cross-core FIFO or event";
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
               "each popped tile after its last use; every pl.system.sync_wait needs a sync_set of its event in the peer");
    }
    cv_.wait(lk);
  }
  me.state = State::kRunning;
  me.can_go = nullptr;
}

void ClusterFifos::push(const ClusterPart& self, const TileCall& call) {
  std::unique_lock<std::mutex> lk(mu_);
  const int64_t split = self.part == 0 ? instr_int(call, "split") : 0;
  const TileRef& src = call.in_tile(0);
  const Span at = call.instr.span;
  auto room = [this, at, &src](Channel& c) {
    return std::make_pair(
        std::function<std::string()>([this, &c, at, name = src.name] {
          return "TPUSH (" + where(at) + ") of tile '" + name + "' into " + channel_name(c) + ": all " +
                 std::to_string(c.depth) + " slots are taken (" + std::to_string(c.pushes - c.pops) +
                 " pushed and not yet popped, " + std::to_string(c.pops - c.frees) + " popped and not yet freed)";
        }),
        std::function<bool()>([&c] { return c.pushes - c.frees < static_cast<uint64_t>(c.depth); }));
  };
  if (split == 0) {
    Channel& c = channel(self, call, true);
    auto [waits, can_go] = room(c);
    wait(lk, self.part, call, waits, can_go);
    const double end = self.timing ? self.timing(c.slots[c.pushes % c.depth].free_end) : 0;
    fill_slot(c, call, src, 0, src.valid_rows, 0, src.valid_cols, end);
    cv_.notify_all();
    return;
  }
  // split: the cube's tile is halved between AIV 0 (top / left) and AIV 1 (bottom / right).
  const int64_t extent = split == 1 ? src.valid_rows : src.valid_cols;
  if (extent % 2 != 0)
    call.fail_runtime("in " + part_name(self.part) + " splits tile '" + src.name + "' " +
                          (split == 1 ? "by rows" : "by columns") + " between the two vector cores, but its valid " +
                          (split == 1 ? "rows" : "columns") + " (" + std::to_string(extent) + ") are odd",
                      "push a tile whose valid extent along the split is even");
  Channel& c0 = channel(self, call, true, 1);
  Channel& c1 = channel(self, call, true, 2);
  auto [w0, g0] = room(c0);
  auto [w1, g1] = room(c1);
  wait(lk, self.part, call, w0, g0);
  wait(lk, self.part, call, w1, g1);
  const double end0 = self.timing ? self.timing(std::max(c0.slots[c0.pushes % c0.depth].free_end,
                                                         c1.slots[c1.pushes % c1.depth].free_end))
                                  : 0;
  const int64_t h = extent / 2;
  if (split == 1) {
    fill_slot(c0, call, src, 0, h, 0, src.valid_cols, end0);
    fill_slot(c1, call, src, h, h, 0, src.valid_cols, end0);
  } else {
    fill_slot(c0, call, src, 0, src.valid_rows, 0, h, end0);
    fill_slot(c1, call, src, 0, src.valid_rows, h, h, end0);
  }
  cv_.notify_all();
}

void ClusterFifos::pop(const ClusterPart& self, const TileCall& call) {
  std::unique_lock<std::mutex> lk(mu_);
  const int64_t split = self.part == 0 ? instr_int(call, "split") : 0;
  const TileRef& dst = call.out_tile();
  const Span at = call.instr.span;
  auto filled = [this, at, &dst](Channel& c) {
    return std::make_pair(std::function<std::string()>([this, &c, at, name = dst.name] {
                            return "TPOP (" + where(at) + ") into tile '" + name + "' from " + channel_name(c) + ": " +
                                   (c.pushes == 0 ? std::string("nothing has been pushed yet")
                                                  : "it has popped all " + std::to_string(c.pushes) +
                                                        " tile(s) pushed so far");
                          }),
                          std::function<bool()>([&c] { return c.pops < c.pushes; }));
  };
  std::vector<Channel*> from;
  if (split == 0) {
    from.push_back(&channel(self, call, false));
  } else {  // split: the halves the two vector cores pushed, joined (AIV 0 top / left)
    from.push_back(&channel(self, call, false, 1));
    from.push_back(&channel(self, call, false, 2));
  }
  for (Channel* c : from) {
    auto [waits, can_go] = filled(*c);
    wait(lk, self.part, call, waits, can_go);
  }
  int64_t rows = 0, cols = 0;
  for (Channel* c : from) {
    const Slot& slot = c->slots[c->pops % c->depth];
    rows = split == 2 ? slot.rows : rows + slot.rows;
    cols = split == 2 ? cols + slot.cols : slot.cols;
  }
  for (size_t k = 0; k < from.size(); ++k) {
    const Slot& slot = from[k]->slots[from[k]->pops % from[k]->depth];
    const Slot& first = from[0]->slots[from[0]->pops % from[0]->depth];
    const bool halves_agree = k == 0 || (split == 1 ? slot.cols == first.cols : slot.rows == first.rows);
    if (slot.dtype != dst.dtype || rows != dst.valid_rows || cols != dst.valid_cols || !halves_agree) {
      std::string pushed = shape_text(slot.rows, slot.cols, slot.dtype);
      if (split) pushed += " (one half; the two halves join to " + shape_text(rows, cols, slot.dtype) + ")";
      call.fail_runtime("in " + part_name(self.part) + " pops a " + shape_text(dst.valid_rows, dst.valid_cols, dst.dtype) +
                            " tile '" + dst.name + "', but the TPUSH at " + where(slot.push_span) + " in " +
                            part_name(from[k]->from) + " pushed '" + slot.pushed_tile + "' as " + pushed,
                        "pop with the pushed tile's shape and dtype (pl.tpop_from_" +
                            std::string(self.part == 0 ? "aiv" : "aic") + "([" + std::to_string(rows) + ", " +
                            std::to_string(cols) + "], pl." + dtype_name(slot.dtype) +
                            ")), or push a tile of the popped shape");
    }
  }
  const int64_t eb = dtype_bytes(dst.dtype);
  double pushed_end = 0;
  for (Channel* c : from) pushed_end = std::max(pushed_end, c->slots[c->pops % c->depth].push_end);
  if (self.timing) self.timing(pushed_end);
  int64_t r0 = 0, c0 = 0;
  for (Channel* c : from) {
    Slot& slot = c->slots[c->pops % c->depth];
    for (int64_t r = 0; r < slot.rows; ++r)
      std::memcpy(dst.at(r0 + r, c0), slot.data.data() + r * slot.cols * eb, slot.cols * eb);
    (split == 2 ? c0 : r0) += split == 2 ? slot.cols : slot.rows;
    slot.pop_span = call.instr.span;
    slot.popped_tile = dst.name;
    slot.popped_into = dst.data;
    ++c->pops;
  }
  cv_.notify_all();
}

void ClusterFifos::free(const ClusterPart& self, const TileCall& call) {
  std::unique_lock<std::mutex> lk(mu_);
  if (cancelled_) throw PartCancelled();
  const int64_t split = self.part == 0 ? instr_int(call, "split") : 0;
  std::vector<Channel*> of;
  if (split == 0) of.push_back(&channel(self, call, false));
  else {
    of.push_back(&channel(self, call, false, 1));
    of.push_back(&channel(self, call, false, 2));
  }
  const TileRef& t = call.out_tile();
  const double freed_end = self.timing ? self.timing(0) : 0;
  for (Channel* cp : of) {
    Channel& c = *cp;
    if (c.frees >= c.pops)
      call.fail_runtime("in " + part_name(self.part) + " frees tile '" + t.name + "' but holds no popped tile of " +
                            channel_name(c) + " (" + std::to_string(c.pops) + " popped, " + std::to_string(c.frees) +
                            " freed already)",
                        "free each tile once, after the TPOP that produced it (t = pl.tpop_from_...; ...; pl.tfree_to_...(t))");
    Slot& slot = c.slots[c.frees % c.depth];
    if (slot.popped_into != t.data)
      call.fail_runtime("in " + part_name(self.part) + " frees tile '" + t.name + "', but the oldest popped tile of " +
                            channel_name(c) + " is '" + slot.popped_tile + "' (popped at " + where(slot.pop_span) + ")",
                        "free popped tiles in the order they were popped, naming the tile each TPOP produced");
    slot.free_end = freed_end;
    ++c.frees;
  }
  cv_.notify_all();
}

void ClusterFifos::event_set(const ClusterPart& self, int64_t event, double fired) {
  std::unique_lock<std::mutex> lk(mu_);
  if (cancelled_) throw PartCancelled();
  if (self.part == 0) {
    for (int p = 1; p < 3; ++p)
      if (!names_[p].empty()) events_[{p, event}].push_back(fired);
  } else {
    events_[{0, event}].push_back(fired);
  }
  cv_.notify_all();
}

double ClusterFifos::event_wait(const ClusterPart& self, const isa::Instr& instr, int64_t event) {
  std::unique_lock<std::mutex> lk(mu_);
  const TileCall call{instr, {}, {}};
  auto& q = events_[{self.part, event}];
  const std::string peer = self.part == 0 ? "a vector core" : "the cube core";
  wait(lk, self.part, call,
       [this, &self, event, peer, at = instr.span] {
         return "pl.system.sync_wait (" + where(at) + ") of event " + std::to_string(event) + " in " + part_name(self.part) +
                ": " + peer + " has not set it (pl.system.sync_set)";
       },
       [&q] { return !q.empty(); });
  const double fired = q.front();
  q.pop_front();
  return fired;
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
      const Slot& s = c.slots[c.pops % c.depth];
      fail(ErrorKind::kRuntime, s.push_span,
           "mixed task '" + task_ + "' ended with " + std::to_string(c.pushes - c.pops) + " tile(s) in FIFO " +
               channel_name(c) + " that " + part_name(c.to) + " never popped (the oldest pushed here, tile '" +
               s.pushed_tile + "'); " + channel_state(c),
           "pop every tile the peer pushes: the TPUSH and TPOP loops of the two parts must run the same number of times");
    }
    if (c.pops > c.frees) {
      const Slot& s = c.slots[c.frees % c.depth];
      fail(ErrorKind::kRuntime, s.pop_span,
           "mixed task '" + task_ + "' ended with " + std::to_string(c.pops - c.frees) + " tile(s) of FIFO " +
               channel_name(c) + " popped by " + part_name(c.to) + " and never freed (the oldest popped here into '" +
               s.popped_tile + "'); " + channel_state(c),
           std::string("release each popped tile after its last use with pl.tfree_to_") + (c.to == 0 ? "aiv(t, aiv=...)" : "aic(t)"));
    }
  }
}

}  // namespace pypto::engines
