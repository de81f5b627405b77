// The distributed runtime's shared memory as one rank process sees it (pld, docs/distributed.md).
// The driver maps one POSIX shm segment into every rank process: a header (per-rank state for
// the deadlock watchdog, the abort flag), then one window per rank, all windows of one size, so
// a window tensor's element of rank r lies at the same offset in peer p's window, shifted by
// (p - r) * window_bytes. The memory instructions REMOTE_LOAD / REMOTE_STORE / SIGNAL_NOTIFY /
// SIGNAL_WAIT (src/engines/sim/reference_memory.cpp) reach peers through this; Python only
// maps the segment and passes its address here (pypto._core.comm_attach).
#pragma once
#include <cstdint>
#include <string>

namespace pypto::engines::comm {

// The header's layout (bytes from the segment start). All fields are accessed atomically.
constexpr int64_t kHeaderBytes = 64 * 1024;
constexpr int kMaxRanks = 64;
constexpr int64_t kNotifyCount = 0;   // int64: notifies so far (the watchdog sees progress)
constexpr int64_t kAbortFlag = 8;     // int32: 1 once a rank failed
constexpr int64_t kAbortRank = 12;    // int32: the rank that failed first
constexpr int64_t kSlots = 1024;      // kMaxRanks slots of kSlotBytes
constexpr int64_t kSlotBytes = 512;
constexpr int64_t kAbortText = 40 * 1024;  // the first failure's message (NUL-terminated)
constexpr int64_t kAbortTextBytes = 16 * 1024;

// A rank's state in its slot: busy (compiling, running: the default of a zeroed header),
// waiting on a signal cell, or done with the current dispatch.
enum RankState : int32_t { kBusy = 0, kWaiting = 1, kDone = 2 };

struct Domain {
  uint8_t* base = nullptr;  // the segment
  int64_t window_bytes = 0;
  int rank = -1, nranks = 0;
  double timeout_s = 120;
};

// Attaches this process to a segment mapped at `base` (rank `rank` of `nranks`); detach() forgets it.
void attach(uintptr_t base, int64_t window_bytes, int rank, int nranks, double timeout_s);
void detach();
const Domain* domain();  // null when this process is no rank

// This rank's state (kBusy / kDone), set by the rank process around each dispatch.
void set_state(int32_t state);
// Marks the domain failed by this rank with `message` (the first failure wins); returns the
// message stored (the first one).
std::string abort_domain(const std::string& message);
// The same on a segment this process is not attached to (the driver, for a rank process that died).
void abort_segment(uintptr_t segment, int rank, const std::string& message);
// "" when no rank failed, else "rank k failed: ...".
std::string abort_message();

}  // namespace pypto::engines::comm
