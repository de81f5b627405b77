// Reference semantics of the pld memory instructions (REMOTE_LOAD / REMOTE_STORE on a peer
// rank's window, SIGNAL_NOTIFY / SIGNAL_WAIT on signal cells): they reach the shared memory of
// the distributed domain (pypto/engines/comm.h), an engine structure, so they are here and
// not in their records (src/isa/families/memory.cpp), which hold TLOAD / TSTORE / MGATHER /
// MSCATTER. REMOTE_LOAD / REMOTE_STORE run the records' TLOAD / TSTORE (and isa::tensor_window)
// on the peer's window, or on a staged copy of its bytes where the transport (MPI) maps none.
#include <algorithm>
#include <atomic>
#include <climits>
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

// The transport of the domain (shm: pointers into peers' windows; MPI: get / put).
comm::Transport& transport_of(const comm::Domain& d) { return *d.transport; }

// Checks that `peer` is a rank and `t` a window tensor of this rank; returns the byte offset
// of t's data in this rank's window.
int64_t window_offset(const TileCall& call, const TensorView& t, int64_t peer) {
  const comm::Domain& d = domain_of(call);
  if (peer < 0 || peer >= d.nranks)
    call.fail_runtime("peer " + std::to_string(peer) + " is outside the domain of " + std::to_string(d.nranks) + " ranks",
                      "give a peer in [0, " + std::to_string(d.nranks) + "), e.g. (rank + 1) % nranks");
  const uint8_t* mine = d.window;
  auto [lo, hi] = t.byte_range();
  if (lo < mine || hi > mine + d.window_bytes)
    call.fail_runtime("tensor '" + t.name + "' is not a window of this rank (pld.window of a pld.alloc_window_buffer)",
                      "pass the pld.window(buf, shape, dtype=) view of the window buffer to the kernel");
  return static_cast<const uint8_t*>(t.data) - mine;
}

// `t` as it lies in peer `peer`'s window: the same offset in that rank's window. With a
// transport that cannot address peers (MPI), the view's data points at this rank's window
// (callers reach the peer through the transport).
TensorView peer_view(const TileCall& call, const TensorView& t, int64_t peer) {
  const comm::Domain& d = domain_of(call);
  const int64_t off = window_offset(call, t, peer);
  TensorView v = t;
  if (uint8_t* w = transport_of(d).direct(static_cast<int>(peer))) v.data = w + off;
  v.name = t.name + "@rank" + std::to_string(peer);
  return v;
}

// The byte runs (window offsets, lengths) of the elements a tile covers in window `w`,
// contiguous runs merged, in address order of each row.
std::vector<std::pair<int64_t, int64_t>> element_runs(isa::TensorWindow& w, const uint8_t* window, int64_t rows, int64_t cols,
                                                      int64_t esize) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t off = w.at(r, c) - window;
      if (!runs.empty() && runs.back().first + runs.back().second == off) runs.back().second += esize;
      else runs.emplace_back(off, esize);
    }
  return runs;
}

// A view of `t` whose bytes [lo, lo + n) of the window lie in `buf`.
TensorView staged_view(const TensorView& t, const uint8_t* window, std::vector<uint8_t>& buf, int64_t lo) {
  TensorView v = t;
  v.data = buf.data() + ((static_cast<const uint8_t*>(t.data) - window) - lo);
  return v;
}

void remote_load(const TileCall& call) {
  const comm::Domain& d = domain_of(call);
  const TensorView& t = *call.ins.at(0).tensor;
  const int64_t peer = call.ins.at(2).scalar.as_int();
  TensorView v = peer_view(call, t, peer);
  TileCall c{call.instr, call.outs, call.ins};
  if (transport_of(d).direct(static_cast<int>(peer)) == nullptr) {
    // Fetch the bytes the tile covers into a copy of their span (one get of the span, or one
    // per contiguous run when the runs are under a quarter of it), then load from the copy.
    const TileRef& dst = call.out_tile();
    isa::TensorWindow w = isa::tensor_window(call, t, call.ins.at(1).list, dst, "loaded from");
    auto runs = element_runs(w, d.window, dst.valid_rows, dst.valid_cols, dtype_bytes(t.dtype));
    int64_t lo = INT64_MAX, hi = 0, covered = 0;
    for (auto [off, n] : runs) lo = std::min(lo, off), hi = std::max(hi, off + n), covered += n;
    static thread_local std::vector<uint8_t> buf;
    buf.assign(std::max<int64_t>(hi - lo, 1), 0);
    if (!runs.empty() && covered * 4 >= hi - lo)
      transport_of(d).get(static_cast<int>(peer), comm::kHeaderBytes + lo, buf.data(), hi - lo);
    else
      for (auto [off, n] : runs) transport_of(d).get(static_cast<int>(peer), comm::kHeaderBytes + off, buf.data() + (off - lo), n);
    v = staged_view(v, d.window, buf, runs.empty() ? 0 : lo);
  }
  c.ins[0].tensor = &v;
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  isa::find_instr("TLOAD")->reference(c);  // the isa record's TLOAD on the peer's window
}

comm::AddType add_type(DataType t) {
  switch (t) {
    case DataType::INT8: return comm::AddType::kI8;
    case DataType::INT16: return comm::AddType::kI16;
    case DataType::INT32: return comm::AddType::kI32;
    case DataType::INT64: return comm::AddType::kI64;
    case DataType::UINT8: return comm::AddType::kU8;
    case DataType::UINT16: return comm::AddType::kU16;
    case DataType::UINT32: return comm::AddType::kU32;
    case DataType::UINT64: return comm::AddType::kU64;
    case DataType::FP32: return comm::AddType::kF32;
    default: return comm::AddType::kNone;  // FP16, BF16 (no MPI type): update() loop
  }
}

void remote_store(const TileCall& call) {
  const comm::Domain& d = domain_of(call);
  const TensorView& t = *call.outs.at(0).tensor;
  const int peer = static_cast<int>(call.ins.at(2).scalar.as_int());
  TensorView v = peer_view(call, t, peer);
  TileCall c{call.instr, call.outs, call.ins};
  comm::Transport& tr = transport_of(d);
  if (tr.direct(peer) != nullptr) {
    c.outs[0].tensor = &v;
    isa::find_instr("TSTORE")->reference(c);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    return;
  }
  // Convert the tile into a staging copy, then put (or atomically add) the covered runs.
  const TileRef& src = call.in_tile(0);
  isa::TensorWindow w = isa::tensor_window(call, t, call.ins.at(1).list, src, "stored to");
  const std::string atomic = call.attr_string("atomic", "none");
  if (atomic != "none" && atomic != "add") call.fail_runtime("unknown atomic mode '" + atomic + "'", "use \"add\"");
  const int64_t es = dtype_bytes(t.dtype);
  auto runs = element_runs(w, d.window, src.valid_rows, src.valid_cols, es);
  if (runs.empty()) return;
  int64_t lo = INT64_MAX, hi = 0;
  for (auto [off, n] : runs) lo = std::min(lo, off), hi = std::max(hi, off + n);
  std::vector<uint8_t> buf(hi - lo);
  TensorView staged = staged_view(v, d.window, buf, lo);
  isa::TensorWindow sw = isa::tensor_window(call, staged, call.ins.at(1).list, src, "stored to");
  for (int64_t r = 0; r < src.valid_rows; ++r)
    for (int64_t col = 0; col < src.valid_cols; ++col) convert_element(sw.at(r, col), t.dtype, src.at(r, col), src.dtype);
  for (auto [off, n] : runs) {
    const uint8_t* bytes = buf.data() + (off - lo);
    const int64_t disp = comm::kHeaderBytes + off;
    if (atomic == "none") {
      tr.put(peer, disp, bytes, n);
    } else if (!tr.add(peer, disp, bytes, n / es, add_type(t.dtype))) {
      for (int64_t e = 0; e < n; e += es) {  // FP16 / BF16 (no MPI type): a compare-and-swap loop per element
        if (dtype_is_float(t.dtype)) {
          const float add = read_float(bytes + e, t.dtype);
          tr.update(peer, disp + e, static_cast<int>(es), [&](uint8_t* x) { write_float(x, t.dtype, read_float(x, t.dtype) + add); });
        } else {
          const int64_t add = read_int(bytes + e, t.dtype);
          tr.update(peer, disp + e, static_cast<int>(es), [&](uint8_t* x) { write_int(x, t.dtype, read_int(x, t.dtype) + add); });
        }
      }
    }
  }
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

// This rank's slot: in its own header (shm: the one header, where every rank's slot lies).
Slot* my_slot(const comm::Domain& d) {
  return reinterpret_cast<Slot*>(d.header() + comm::kSlots + d.rank * comm::kSlotBytes);
}

// A copy of rank r's slot (through the transport: under MPI it is in rank r's memory).
Slot read_slot(const comm::Domain& d, int rank) {
  Slot s;
  d.transport->get(rank, comm::kSlots + rank * comm::kSlotBytes, &s, sizeof s);
  return s;
}

// The current value of the cell with id `cell` (comm::Domain::cell_id).
int32_t cell_value(const comm::Domain& d, int64_t cell) {
  const int64_t w = cell - comm::kHeaderBytes;
  return d.transport->load32(static_cast<int>(w / d.window_bytes), comm::kHeaderBytes + w % d.window_bytes);
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
  const comm::Domain& d = domain_of(call);
  window_offset(call, t, peer);  // checks the peer and the window
  // The cell in my window gives its offset, the same in the peer's window.
  const int64_t off = reinterpret_cast<uint8_t*>(signal_cell(call, t, call.ins.at(0).list)) - d.window;
  const int32_t value = static_cast<int32_t>(call.ins.at(2).scalar.as_int());
  const std::string op = call.attr_string("op", "AtomicAdd");
  // Release: publishing writes land before the signal is seen (shm: a fence; MPI: sync + flush).
  __atomic_thread_fence(__ATOMIC_RELEASE);
  if (op == "Set") d.transport->store32(static_cast<int>(peer), comm::kHeaderBytes + off, value);
  else d.transport->add32(static_cast<int>(peer), comm::kHeaderBytes + off, value);
  const int64_t cell = d.cell_id(static_cast<int>(peer), off);
  Slot* me = my_slot(d);
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
  __atomic_store_n(&rec.cell_offset, cell, __ATOMIC_RELEASE);
  record_signal('n', d.rank, static_cast<int>(peer), cell, value, call.instr.span);
  d.transport->add64(0, comm::kNotifyCount, 1);  // (release: the slot's record is visible with it)
}

// Who notified the cell at `cell_offset` (from the notify rings of every rank), e.g.
// "notified by rank 1 (added 1 at progs.py:81)", or "nobody notified it".
std::string notifiers_of(const comm::Domain& d, int64_t cell_offset) {
  std::string out;
  for (int r = 0; r < d.nranks; ++r) {
    const Slot copy = read_slot(d, r);
    const Slot* s = &copy;
    std::string mine;
    for (const NotifyRecord& rec : s->recent) {
      if (rec.cell_offset != cell_offset) continue;
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
  // `offset`: of my cell in my window.
  WaitWatch(const comm::Domain& d, Span span, std::string where, int64_t offset, int64_t expected, bool ge)
      : d_(d), span_(std::move(span)), where_(std::move(where)), disp_(comm::kHeaderBytes + offset),
        cell_(d.cell_id(d.rank, offset)), expected_(expected), ge_(ge),
        start_(std::chrono::steady_clock::now()), last_check_(start_), quiet_since_(start_), blocked_since_(start_) {
    seen_notifies_ = notifies();
  }

  // The condition held: a wait event for the swimlane's notify -> wait arrows.
  void released() const {
    record_signal('w', d_.rank, d_.rank, cell_, expected_, span_);
  }

  bool holds() const {
    const int32_t v = d_.transport->load32(d_.rank, disp_);
    return ge_ ? v >= expected_ : v == expected_;
  }

  void block() {
    if (blocked_) return;
    Slot* slot = my_slot(d_);
    put_text(slot->where, sizeof slot->where, where_);
    __atomic_store_n(&slot->cell_offset, cell_, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->expected, expected_, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->cmp_ge, ge_ ? 1 : 0, __ATOMIC_RELAXED);
    before_ = __atomic_load_n(&slot->state, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->state, comm::kWaiting, __ATOMIC_RELEASE);
    d_.transport->sync();  // (MPI: peers read the slot with MPI_Get)
    blocked_ = true;
  }

  void unblock() {
    if (!blocked_) return;
    __atomic_store_n(&my_slot(d_)->state, before_, __ATOMIC_RELEASE);
    d_.transport->sync();
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
    int64_t n = notifies();
    if (n != seen_notifies_) {
      seen_notifies_ = n;
      quiet_since_ = now;
    }
    bool all_blocked = blocked_;
    for (int r = 0; r < d_.nranks && all_blocked; ++r)
      all_blocked = (r == d_.rank ? __atomic_load_n(&my_slot(d_)->state, __ATOMIC_ACQUIRE)
                                  : d_.transport->load32(r, comm::kSlots + r * comm::kSlotBytes)) != comm::kBusy;
    if (!all_blocked) blocked_since_ = now;  // every rank must stay blocked (not just at one poll)
    const bool deadlock = now - std::max(quiet_since_, blocked_since_) > std::chrono::milliseconds(500);
    const bool timeout = now - start_ > std::chrono::duration<double>(d_.timeout_s);
    if ((!deadlock && !timeout) || holds()) return;
    std::string report = deadlock ? "deadlock: every rank waits or is done, and no signal changed for 0.5 s"
                                  : "timeout: waited " + std::to_string(static_cast<int>(d_.timeout_s)) + " s";
    for (int r = 0; r < d_.nranks; ++r) {
      const Slot copy = read_slot(d_, r);
      const Slot* s = &copy;
      int32_t st = s->state;
      if (st == comm::kWaiting) {
        const int64_t off = s->cell_offset;
        report += "; rank " + std::to_string(r) + " waits at " + std::string(s->where, strnlen(s->where, sizeof s->where)) +
                  " for " + (s->cmp_ge ? ">= " : "== ") + std::to_string(s->expected) + ", current value " +
                  std::to_string(cell_value(d_, off)) + ", " + notifiers_of(d_, off);
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
  int64_t notifies() const { return d_.transport->load64(0, comm::kNotifyCount); }

  const comm::Domain& d_;
  Span span_;
  std::string where_;
  int64_t disp_;  // of my cell in my region
  int64_t cell_;  // its id (comm::Domain::cell_id)
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
  window_offset(call, t, d.rank);  // checks that it is a window
  const int64_t offset = reinterpret_cast<uint8_t*>(signal_cell(call, t, call.ins.at(1).list)) - d.window;
  const int64_t expected = call.ins.at(2).scalar.as_int();
  const bool ge = call.attr_string("cmp", "Eq") == "Ge";
  std::string where = call.instr.span.str() + " (" + t.name + "[" + join(call.ins.at(1).list) + "])";
  auto watch = std::make_shared<WaitWatch>(d, call.instr.span, where, offset, expected, ge);
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
