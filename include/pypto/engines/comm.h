// The distributed runtime's shared memory as one rank process sees it (pld, docs/distributed.md).
// The driver maps one POSIX shm segment into every rank process: a header (per-rank state for
// the deadlock watchdog, the abort flag), then one window per rank, all windows of one size, so
// a window tensor's element of rank r lies at the same offset in peer p's window, shifted by
// (p - r) * window_bytes. The memory instructions REMOTE_LOAD / REMOTE_STORE / SIGNAL_NOTIFY /
// SIGNAL_WAIT (src/engines/sim/reference_memory.cpp) reach peers through this; Python only
// maps the segment and passes its address here (pypto._core.comm_attach).
//
// Two transports implement the same Transport interface: the shm one (one segment, pointers and
// CPU atomics) and the MPI one (src/engines/comm/comm_mpi.cpp: every rank's header and window
// in one MPI RMA window, reached with MPI_Put / MPI_Get / MPI_Accumulate / MPI_Fetch_and_op).
// Both see the same layout: rank r's "region" is the header (kHeaderBytes) then its window.
// In the shm segment every rank's header is the one header; under MPI each rank has its own,
// so state shared by all (notify count, abort flag and text) is always rank 0's header and a
// rank's watchdog slot is in its own header.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

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

// Element types that MPI_Accumulate can add natively (the others: a compare-and-swap loop).
enum class AddType { kNone, kI8, kI16, kI32, kI64, kU8, kU16, kU32, kU64, kF32, kF64 };

// How a rank reaches (peer, disp): disp counts bytes from the start of the peer's region
// (header, then window). Every call is complete (visible at the target) when it returns.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  // The peer's window in this address space (shm), or null (MPI: reach it with get / put).
  virtual uint8_t* direct(int peer) = 0;
  virtual void get(int peer, int64_t disp, void* dst, int64_t bytes) = 0;
  virtual void put(int peer, int64_t disp, const void* src, int64_t bytes) = 0;
  // Adds `count` elements of `type` at src into the peer's memory, element-wise atomic; false
  // when the transport has no native add of `type` (the caller then uses update()).
  virtual bool add(int peer, int64_t disp, const void* src, int64_t count, AddType type) = 0;
  // Rewrites the `size`-byte word (1, 2, 4 or 8) at (peer, disp) with fn(old) as one atomic step.
  virtual void update(int peer, int64_t disp, int size, const std::function<void(uint8_t*)>& fn) = 0;
  // Int32 / int64 cells: atomic (acquire) load, atomic add (release: earlier puts and this
  // rank's local stores are visible before it), atomic store (release), compare-and-swap.
  virtual int32_t load32(int peer, int64_t disp) = 0;
  virtual int64_t load64(int peer, int64_t disp) = 0;
  virtual void add32(int peer, int64_t disp, int32_t value) = 0;
  virtual void add64(int peer, int64_t disp, int64_t value) = 0;
  virtual void store32(int peer, int64_t disp, int32_t value) = 0;
  virtual int32_t cas32(int peer, int64_t disp, int32_t expected, int32_t desired) = 0;
  // A full fence between this rank's local accesses to its own region and remote ones.
  virtual void sync() = 0;
};

struct Domain {
  uint8_t* base = nullptr;  // shm: the segment; MPI: this rank's region (its header, then its window)
  int64_t window_bytes = 0;
  int rank = -1, nranks = 0;
  double timeout_s = 120;
  Transport* transport = nullptr;
  // This rank's header (its own slot lies at kSlots + rank * kSlotBytes) and window.
  uint8_t* header() const { return base; }
  uint8_t* window = nullptr;
  // The id of a cell at byte `offset` of rank `peer`'s window: the same in every transport
  // (the offset in the shm segment). The deadlock report and the trace name cells by it.
  int64_t cell_id(int peer, int64_t offset) const { return kHeaderBytes + peer * window_bytes + offset; }
};

// Attaches this process to a segment mapped at `base` (rank `rank` of `nranks`); detach() forgets it.
void attach(uintptr_t base, int64_t window_bytes, int rank, int nranks, double timeout_s);
// Attaches to an MPI RMA window (handles from mpi4py: MPI._handleof(win), of the datatypes
// and ops, see comm_mpi.cpp) whose local memory at `base` is this rank's header then window.
// Throws std::runtime_error when libmpi's functions cannot be found.
void attach_mpi(uintptr_t base, int64_t window_bytes, int rank, int nranks, double timeout_s, uintptr_t win,
                const std::vector<uintptr_t>& handles);
std::unique_ptr<Transport> make_mpi_transport(uintptr_t win, int rank, const std::vector<uintptr_t>& handles);
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
