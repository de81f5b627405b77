// The rank process's view of the distributed shared memory (include/pypto/engines/comm.h):
// the domain, the shm transport (pointers and CPU atomics into one segment) and the abort flag.
#include "pypto/engines/comm.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "pypto/isa/element_ops.h"

namespace pypto::engines::comm {

namespace {

// Every rank's region in one segment: the header is shared (one for all), windows follow it.
class ShmTransport : public Transport {
 public:
  ShmTransport(uint8_t* base, int64_t window_bytes) : base_(base), window_bytes_(window_bytes) {}
  const char* name() const override { return "shm"; }
  uint8_t* direct(int peer) override { return base_ + kHeaderBytes + peer * window_bytes_; }
  uint8_t* at(int peer, int64_t disp) { return disp < kHeaderBytes ? base_ + disp : direct(peer) + (disp - kHeaderBytes); }
  void get(int peer, int64_t disp, void* dst, int64_t bytes) override {
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    std::memcpy(dst, at(peer, disp), bytes);
  }
  void put(int peer, int64_t disp, const void* src, int64_t bytes) override {
    std::memcpy(at(peer, disp), src, bytes);
    __atomic_thread_fence(__ATOMIC_RELEASE);
  }
  bool add(int, int64_t, const void*, int64_t, AddType) override { return false; }
  void update(int peer, int64_t disp, int size, const std::function<void(uint8_t*)>& fn) override {
    isa::element_ops::atomic_update(at(peer, disp), size, fn);
  }
  int32_t load32(int peer, int64_t disp) override { return __atomic_load_n(i32(peer, disp), __ATOMIC_ACQUIRE); }
  int64_t load64(int peer, int64_t disp) override {
    return __atomic_load_n(reinterpret_cast<int64_t*>(at(peer, disp)), __ATOMIC_ACQUIRE);
  }
  void add32(int peer, int64_t disp, int32_t v) override { __atomic_fetch_add(i32(peer, disp), v, __ATOMIC_ACQ_REL); }
  void add64(int peer, int64_t disp, int64_t v) override {
    __atomic_fetch_add(reinterpret_cast<int64_t*>(at(peer, disp)), v, __ATOMIC_ACQ_REL);
  }
  void store32(int peer, int64_t disp, int32_t v) override { __atomic_store_n(i32(peer, disp), v, __ATOMIC_RELEASE); }
  int32_t cas32(int peer, int64_t disp, int32_t expected, int32_t desired) override {
    __atomic_compare_exchange_n(i32(peer, disp), &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return expected;
  }
  void sync() override { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

 private:
  int32_t* i32(int peer, int64_t disp) { return reinterpret_cast<int32_t*>(at(peer, disp)); }
  uint8_t* base_;
  int64_t window_bytes_;
};

Domain g_domain;
bool g_attached = false;
std::unique_ptr<Transport> g_transport;

// The first failure wins: flag 0 -> 2 (writing the message) -> 1 (it is there), on rank 0's header.
void write_abort(Transport& t, int rank, const std::string& message) {
  if (t.cas32(0, kAbortFlag, 0, 2) != 0) return;
  t.store32(0, kAbortRank, rank);
  std::string text = message.rfind("rank ", 0) == 0 ? message : "rank " + std::to_string(rank) + " failed: " + message;
  text.resize(std::min<size_t>(text.size(), kAbortTextBytes - 1));
  text.push_back('\0');
  t.put(0, kAbortText, text.data(), static_cast<int64_t>(text.size()));
  t.store32(0, kAbortFlag, 1);
}

}  // namespace

void attach(uintptr_t base, int64_t window_bytes, int rank, int nranks, double timeout_s) {
  g_transport = std::make_unique<ShmTransport>(reinterpret_cast<uint8_t*>(base), window_bytes);
  g_domain = Domain{reinterpret_cast<uint8_t*>(base), window_bytes, rank, nranks, timeout_s, g_transport.get()};
  g_domain.window = g_transport->direct(rank);
  g_attached = base != 0 && nranks > 0 && nranks <= kMaxRanks;
}

void attach_mpi(uintptr_t base, int64_t window_bytes, int rank, int nranks, double timeout_s, uintptr_t win,
                const std::vector<uintptr_t>& handles) {
  std::unique_ptr<Transport> t = make_mpi_transport(win, rank, handles);  // throws before anything changes
  g_transport = std::move(t);
  g_domain = Domain{reinterpret_cast<uint8_t*>(base), window_bytes, rank, nranks, timeout_s, g_transport.get()};
  g_domain.window = g_domain.base + kHeaderBytes;
  g_attached = base != 0 && nranks > 0 && nranks <= kMaxRanks;
}

void detach() {
  g_attached = false;
  g_domain = Domain{};
  g_transport.reset();
}

const Domain* domain() { return g_attached ? &g_domain : nullptr; }

void set_state(int32_t state) {
  if (!g_attached) return;
  __atomic_store_n(reinterpret_cast<int32_t*>(g_domain.header() + kSlots + g_domain.rank * kSlotBytes), state,
                   __ATOMIC_RELEASE);
  g_transport->sync();
}

void abort_segment(uintptr_t segment, int rank, const std::string& message) {
  ShmTransport t(reinterpret_cast<uint8_t*>(segment), 0);
  write_abort(t, rank, message);
}

std::string abort_domain(const std::string& message) {
  if (!g_attached) return message;
  write_abort(*g_transport, g_domain.rank, "rank " + std::to_string(g_domain.rank) + " failed: " + message);
  return abort_message();
}

std::string abort_message() {
  if (!g_attached) return "";
  Transport& t = *g_transport;
  int32_t flag = t.load32(0, kAbortFlag);
  if (flag == 0) return "";
  for (int spin = 0; flag == 2 && spin < 100000; ++spin) {
    if (spin > 100) std::this_thread::yield();
    flag = t.load32(0, kAbortFlag);
  }
  std::string text(kAbortTextBytes, '\0');
  t.get(0, kAbortText, text.data(), kAbortTextBytes);
  return std::string(text.c_str());
}

}  // namespace pypto::engines::comm
