// Reference semantics of the pld memory instructions (REMOTE_LOAD / REMOTE_STORE on a peer
// rank's window, SIGNAL_NOTIFY / SIGNAL_WAIT on signal cells): they reach the shared memory of
// the distributed domain (pypto/engines/comm.h), an engine structure, so they are here and
// not in their records (src/isa/families/memory.cpp), which hold TLOAD / TSTORE / MGATHER /
// MSCATTER. REMOTE_LOAD / REMOTE_STORE are the records' TLOAD / TSTORE on the peer's window.
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>

#include "pypto/engines/comm.h"
#include "pypto/engines/deferred_wait.h"
#include "pypto/engines/signal_events.h"

#include "pypto/engines/reference.h"
#include "pypto/isa/instructions.h"

namespace pypto::engines {

namespace {

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

// --- pld: peers' windows and signal cells (include/pypto/engines/comm.h) -----------------

const comm::Domain& domain_of(const TileCall& call) {
  const comm::Domain* d = comm::domain();
  if (!d)
    call.fail_runtime("this process is no rank of a distributed domain, so a window tensor has no peers",
                      "run the program through a @pl.jit.host function with RunConfig(distributed_config="
                      "pypto.runtime.DistributedConfig(device_ids=[0, 1]))");
  return *d;
}

// `t` as it lies in peer `peer`'s window: the same offset in that rank's window.
TensorView peer_view(const TileCall& call, const TensorView& t, int64_t peer) {
  const comm::Domain& d = domain_of(call);
  if (peer < 0 || peer >= d.nranks)
    call.fail_runtime("peer " + std::to_string(peer) + " is outside the domain of " + std::to_string(d.nranks) + " ranks",
                      "give a peer in [0, " + std::to_string(d.nranks) + "), e.g. (rank + 1) % nranks");
  const uint8_t* mine = d.base + comm::kHeaderBytes + d.rank * d.window_bytes;
  auto [lo, hi] = t.byte_range();
  if (lo < mine || hi > mine + d.window_bytes)
    call.fail_runtime("tensor '" + t.name + "' is not a window of this rank (pld.window of a pld.alloc_window_buffer)",
                      "pass the pld.window(buf, shape, dtype=) view of the window buffer to the kernel");
  TensorView v = t;
  v.data = static_cast<uint8_t*>(t.data) + (peer - d.rank) * d.window_bytes;
  v.name = t.name + "@rank" + std::to_string(peer);
  return v;
}

void remote_load(const TileCall& call) {
  TensorView v = peer_view(call, *call.ins.at(0).tensor, call.ins.at(2).scalar.as_int());
  TileCall c{call.instr, call.outs, call.ins};
  c.ins[0].tensor = &v;
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  isa::find_instr("TLOAD")->reference(c);  // the isa record's TLOAD on the peer's window
}

void remote_store(const TileCall& call) {
  TensorView v = peer_view(call, *call.outs.at(0).tensor, call.ins.at(2).scalar.as_int());
  TileCall c{call.instr, call.outs, call.ins};
  c.outs[0].tensor = &v;
  isa::find_instr("TSTORE")->reference(c);
  __atomic_thread_fence(__ATOMIC_RELEASE);
}

// The INT32 signal cell of `t` at `offsets` (one per dim, inside the tensor).
int32_t* signal_cell(const TileCall& call, const TensorView& t, const std::vector<int64_t>& offsets) {
  if (t.dtype != DataType::INT32)
    call.fail_runtime("signal tensor " + t.describe() + " is not INT32", "make signals pld.window(buf, shape, dtype=pl.INT32)");
  if (offsets.size() != t.shape.size())
    call.fail_runtime("signal " + t.describe() + " takes " + std::to_string(t.shape.size()) + " offsets, got " +
                      std::to_string(offsets.size()), "give one offset per dimension of the signal");
  for (size_t i = 0; i < offsets.size(); ++i)
    if (offsets[i] < 0 || offsets[i] >= t.shape[i])
      call.fail_runtime("signal cell [" + join(offsets) + "] is outside " + t.describe(), "index a cell of the signal tensor");
  return reinterpret_cast<int32_t*>(t.element(offsets));
}

// A rank's slot of the header (comm::kSlots): what it waits for, its last notify and its
// recent notifies (the deadlock report names the cell each waiting rank wants and who
// notified that cell).
struct NotifyRecord {
  int64_t cell_offset;  // of the notified cell, from the segment start (0: empty)
  int32_t value;
  int32_t set;          // NotifyOp.Set (else AtomicAdd)
  int32_t line;         // of the notify in the kernel's file
  int32_t pad;
};
constexpr int kNotifyRecords = 8;
struct Slot {
  int32_t state, pad;
  int64_t cell_offset, expected, cmp_ge;
  int64_t notify_count;  // notifies this rank made (the ring below holds the last kNotifyRecords)
  char where[128];
  char notified[96];
  char notify_file[32];  // the file (its last 31 characters) of the notifies in the ring
  NotifyRecord recent[kNotifyRecords];
};
static_assert(sizeof(Slot) <= comm::kSlotBytes);

Slot* slot_of(const comm::Domain& d, int rank) {
  return reinterpret_cast<Slot*>(d.base + comm::kSlots + rank * comm::kSlotBytes);
}

void put_text(char* dst, size_t cap, const std::string& text) {
  size_t n = std::min(text.size(), cap - 1);
  std::memcpy(dst, text.data(), n);
  dst[n] = 0;
}

std::atomic<bool> g_record_signals{false};
std::mutex g_signal_mu;
std::vector<SignalEvent> g_signal_events;

double steady_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void record_signal(char kind, int rank, int peer, int64_t cell_offset, int64_t value, const Span& span) {
  if (!g_record_signals.load(std::memory_order_relaxed)) return;
  SignalEvent e{kind, steady_us(), rank, peer, cell_offset, value, span.str()};
  std::lock_guard<std::mutex> lk(g_signal_mu);
  g_signal_events.push_back(std::move(e));
}

void signal_notify(const TileCall& call) {
  const TensorView& t = *call.outs.at(0).tensor;
  const int64_t peer = call.ins.at(1).scalar.as_int();
  TensorView v = peer_view(call, t, peer);
  int32_t* cell = signal_cell(call, v, call.ins.at(0).list);
  const int32_t value = static_cast<int32_t>(call.ins.at(2).scalar.as_int());
  const std::string op = call.attr_string("op", "AtomicAdd");
  __atomic_thread_fence(__ATOMIC_RELEASE);  // publishing writes land before the signal is seen
  if (op == "Set") __atomic_store_n(cell, value, __ATOMIC_RELEASE);
  else __atomic_fetch_add(cell, value, __ATOMIC_ACQ_REL);
  const comm::Domain& d = domain_of(call);
  Slot* me = slot_of(d, d.rank);
  put_text(me->notified, sizeof(Slot::notified),
           std::string(op == "Set" ? "set " : "added ") + std::to_string(value) + (op == "Set" ? " into " : " to ") +
               "rank " + std::to_string(peer) + "'s " + t.name + "[" + join(call.ins.at(0).list) +
               "] at " + call.instr.span.str());
  // The ring of recent notifies (written by this rank only; read by a reporting rank).
  const int64_t k = __atomic_fetch_add(&me->notify_count, 1, __ATOMIC_RELAXED);
  NotifyRecord& rec = me->recent[k % kNotifyRecords];
  const std::string& file = call.instr.span.file;
  put_text(me->notify_file, sizeof me->notify_file, file.size() < 31 ? file : file.substr(file.size() - 31));
  rec.value = value;
  rec.set = op == "Set";
  rec.line = call.instr.span.line;
  __atomic_store_n(&rec.cell_offset, reinterpret_cast<uint8_t*>(cell) - d.base, __ATOMIC_RELEASE);
  record_signal('n', d.rank, static_cast<int>(peer), reinterpret_cast<uint8_t*>(cell) - d.base, value, call.instr.span);
  __atomic_fetch_add(reinterpret_cast<int64_t*>(d.base + comm::kNotifyCount), 1, __ATOMIC_RELEASE);
}

// Who notified the cell at `cell_offset` (from the notify rings of every rank), e.g.
// "notified by rank 1 (added 1 at progs.py:81)", or "nobody notified it".
std::string notifiers_of(const comm::Domain& d, int64_t cell_offset) {
  std::string out;
  for (int r = 0; r < d.nranks; ++r) {
    const Slot* s = slot_of(d, r);
    std::string mine;
    for (const NotifyRecord& rec : s->recent) {
      if (__atomic_load_n(&rec.cell_offset, __ATOMIC_ACQUIRE) != cell_offset) continue;
      std::string file(s->notify_file, strnlen(s->notify_file, sizeof s->notify_file));
      const size_t slash = file.rfind('/');
      if (slash != std::string::npos) file = file.substr(slash + 1);
      std::string one = std::string(rec.set ? "set " : "added ") + std::to_string(rec.value) + " at " + file + ":" +
                        std::to_string(rec.line);
      if (mine.find(one) == std::string::npos) mine += (mine.empty() ? "" : ", ") + one;
    }
    if (!mine.empty()) out += (out.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + " (" + mine + ")";
  }
  return out.empty() ? "nobody notified it" : "notified by " + out;
}

// The watchdog of one wait on this rank's cell: while `block()`ed the rank's slot shows the
// wait; check() fails, naming every waiting rank's cell, its expected and current value and
// who notified it, when every rank waits or is done and no notify happened for 0.5 s (a
// deadlock), after the domain's timeout, or when another rank failed.
class WaitWatch {
 public:
  WaitWatch(const comm::Domain& d, Span span, std::string where, int32_t* cell, int64_t expected, bool ge)
      : d_(d), span_(std::move(span)), where_(std::move(where)), cell_(cell), expected_(expected), ge_(ge),
        start_(std::chrono::steady_clock::now()), last_check_(start_), quiet_since_(start_), blocked_since_(start_) {
    seen_notifies_ = __atomic_load_n(notifies(), __ATOMIC_ACQUIRE);
  }

  // The condition held: a wait event for the swimlane's notify -> wait arrows.
  void released() const {
    record_signal('w', d_.rank, d_.rank, reinterpret_cast<uint8_t*>(cell_) - d_.base, expected_, span_);
  }

  bool holds() const {
    const int32_t v = __atomic_load_n(cell_, __ATOMIC_ACQUIRE);
    return ge_ ? v >= expected_ : v == expected_;
  }

  void block() {
    if (blocked_) return;
    Slot* slot = slot_of(d_, d_.rank);
    put_text(slot->where, sizeof slot->where, where_);
    __atomic_store_n(&slot->cell_offset, reinterpret_cast<uint8_t*>(cell_) - d_.base, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->expected, expected_, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->cmp_ge, ge_ ? 1 : 0, __ATOMIC_RELAXED);
    before_ = __atomic_load_n(&slot->state, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->state, comm::kWaiting, __ATOMIC_RELEASE);
    blocked_ = true;
  }

  void unblock() {
    if (!blocked_) return;
    __atomic_store_n(&slot_of(d_, d_.rank)->state, before_, __ATOMIC_RELEASE);
    blocked_ = false;
  }

  // Between polls (every 20 ms at most): throws on another rank's failure, a deadlock or the timeout.
  void check() {
    auto now = std::chrono::steady_clock::now();
    if (now - last_check_ < std::chrono::milliseconds(20)) return;
    last_check_ = now;
    std::string stop = comm::abort_message();
    if (!stop.empty()) {
      unblock();
      fail(ErrorKind::kRuntime, span_, "SIGNAL_WAIT: stopped waiting on " + where_ + ": " + stop);
    }
    int64_t n = __atomic_load_n(notifies(), __ATOMIC_ACQUIRE);
    if (n != seen_notifies_) {
      seen_notifies_ = n;
      quiet_since_ = now;
    }
    bool all_blocked = blocked_;
    for (int r = 0; r < d_.nranks; ++r)
      all_blocked = all_blocked && __atomic_load_n(&slot_of(d_, r)->state, __ATOMIC_ACQUIRE) != comm::kBusy;
    if (!all_blocked) blocked_since_ = now;  // every rank must stay blocked (not just at one poll)
    const bool deadlock = now - std::max(quiet_since_, blocked_since_) > std::chrono::milliseconds(500);
    const bool timeout = now - start_ > std::chrono::duration<double>(d_.timeout_s);
    if ((!deadlock && !timeout) || holds()) return;
    std::string report = deadlock ? "deadlock: every rank waits or is done, and no signal changed for 0.5 s"
                                  : "timeout: waited " + std::to_string(static_cast<int>(d_.timeout_s)) + " s";
    for (int r = 0; r < d_.nranks; ++r) {
      Slot* s = slot_of(d_, r);
      int32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
      if (st == comm::kWaiting) {
        const int64_t off = __atomic_load_n(&s->cell_offset, __ATOMIC_RELAXED);
        auto* c = reinterpret_cast<int32_t*>(d_.base + off);
        report += "; rank " + std::to_string(r) + " waits at " + std::string(s->where, strnlen(s->where, sizeof s->where)) +
                  " for " + (__atomic_load_n(&s->cmp_ge, __ATOMIC_RELAXED) ? ">= " : "== ") +
                  std::to_string(__atomic_load_n(&s->expected, __ATOMIC_RELAXED)) + ", current value " +
                  std::to_string(__atomic_load_n(c, __ATOMIC_ACQUIRE)) + ", " + notifiers_of(d_, off);
      } else {
        report += "; rank " + std::to_string(r) + (st == comm::kDone ? " is done" : " is running");
      }
      if (s->notified[0]) report += " (its last notify " + std::string(s->notified, strnlen(s->notified, sizeof s->notified)) + ")";
      else report += " (it notified nobody)";
    }
    unblock();
    comm::abort_domain(report);
    fail(ErrorKind::kRuntime, span_, "SIGNAL_WAIT: " + report,
         "check that every wait has a matching notify (peer, cell and value), e.g. that notify targets the peer's cell "
         "and wait reads this rank's own cell");
  }

 private:
  int64_t* notifies() const { return reinterpret_cast<int64_t*>(d_.base + comm::kNotifyCount); }

  const comm::Domain& d_;
  Span span_;
  std::string where_;
  int32_t* cell_;
  int64_t expected_;
  bool ge_;
  bool blocked_ = false;
  int32_t before_ = comm::kBusy;
  std::chrono::steady_clock::time_point start_, last_check_, quiet_since_, blocked_since_;
  int64_t seen_notifies_ = 0;
};

// The conditions deferred by the kernel running on this thread (pld.system.defer_wait).
thread_local std::vector<std::shared_ptr<WaitWatch>> t_deferred;

// Blocks until my cell satisfies the comparison (or, attrs{defer}, records it for the task
// pool and returns). Polls with acquire loads and sleeps between polls (1 us growing to 1 ms),
// so a waiting worker thread gives its CPU away; the watchdog (WaitWatch) stops a wait that
// can never end.
void signal_wait(const TileCall& call) {
  const comm::Domain& d = domain_of(call);
  const TensorView& t = *call.ins.at(0).tensor;
  TensorView mine = peer_view(call, t, d.rank);  // checks that it is a window
  int32_t* cell = signal_cell(call, mine, call.ins.at(1).list);
  const int64_t expected = call.ins.at(2).scalar.as_int();
  const bool ge = call.attr_string("cmp", "Eq") == "Ge";
  std::string where = call.instr.span.str() + " (" + t.name + "[" + join(call.ins.at(1).list) + "])";
  auto watch = std::make_shared<WaitWatch>(d, call.instr.span, where, cell, expected, ge);
  if (watch->holds()) {
    watch->released();
    return;
  }
  if (call.attr_string("defer", "") == "1") {
    if (t_deferred.size() >= static_cast<size_t>(kMaxDeferredWaits))
      call.fail_runtime("a task defers more than " + std::to_string(kMaxDeferredWaits) + " waits",
                        "split the kernel, or wait (pld.system.wait) for some of the signals");
    t_deferred.push_back(std::move(watch));
    return;
  }
  watch->block();
  int64_t sleep_us = 1;
  while (!watch->holds()) {
    std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
    sleep_us = std::min<int64_t>(sleep_us * 2, 1000);
    watch->check();
  }
  watch->unblock();
  watch->released();
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

}  // namespace

DeferredPoll take_deferred_poll() {
  if (t_deferred.empty()) return {};
  std::vector<std::shared_ptr<WaitWatch>> pending = std::move(t_deferred);
  t_deferred.clear();
  return [pending = std::move(pending)](bool idle) mutable {
    WaitWatch* open = nullptr;  // the first condition that does not hold yet
    for (auto& w : pending)
      if (!w->holds()) {
        open = w.get();
        break;
      }
    for (auto& w : pending)
      if (w.get() != open) w->unblock();  // at most one shows in the rank's watchdog slot
    if (open == nullptr) {
      for (auto& w : pending) w->released();
      __atomic_thread_fence(__ATOMIC_ACQUIRE);
      return true;
    }
    if (idle) open->block();
    else open->unblock();
    open->check();
    return false;
  };
}

void drop_deferred_waits() { t_deferred.clear(); }

void record_signal_events(bool on) {
  std::lock_guard<std::mutex> lk(g_signal_mu);
  g_record_signals.store(on);
  if (!on) g_signal_events.clear();
}

std::vector<SignalEvent> take_signal_events() {
  std::lock_guard<std::mutex> lk(g_signal_mu);
  std::vector<SignalEvent> out = std::move(g_signal_events);
  g_signal_events.clear();
  return out;
}

void add_memory_instrs(ReferenceTable& t) {
  t["REMOTE_LOAD"] = remote_load;
  t["REMOTE_STORE"] = remote_store;
  t["SIGNAL_NOTIFY"] = signal_notify;
  t["SIGNAL_WAIT"] = signal_wait;
}

}  // namespace pypto::engines
