// The rank process's view of the distributed shared memory (include/pypto/engines/comm.h).
#include "pypto/engines/comm.h"

#include <cstring>

namespace pypto::engines::comm {

namespace {

Domain g_domain;
bool g_attached = false;

int32_t* i32(int64_t off) { return reinterpret_cast<int32_t*>(g_domain.base + off); }

}  // namespace

void attach(uintptr_t base, int64_t window_bytes, int rank, int nranks, double timeout_s) {
  g_domain = Domain{reinterpret_cast<uint8_t*>(base), window_bytes, rank, nranks, timeout_s};
  g_attached = base != 0 && nranks > 0 && nranks <= kMaxRanks;
}

void detach() {
  g_attached = false;
  g_domain = Domain{};
}

const Domain* domain() { return g_attached ? &g_domain : nullptr; }

void set_state(int32_t state) {
  if (!g_attached) return;
  __atomic_store_n(i32(kSlots + g_domain.rank * kSlotBytes), state, __ATOMIC_RELEASE);
}

void abort_segment(uintptr_t segment, int rank, const std::string& message) {
  auto* base = reinterpret_cast<uint8_t*>(segment);
  auto* flag = reinterpret_cast<int32_t*>(base + kAbortFlag);
  int32_t expected = 0;
  if (!__atomic_compare_exchange_n(flag, &expected, 2, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
  // Flag 2: the message is being written; 1: it is there.
  __atomic_store_n(reinterpret_cast<int32_t*>(base + kAbortRank), rank, __ATOMIC_RELAXED);
  std::string text = message.rfind("rank ", 0) == 0 ? message : "rank " + std::to_string(rank) + " failed: " + message;
  size_t n = std::min<size_t>(text.size(), kAbortTextBytes - 1);
  std::memcpy(base + kAbortText, text.data(), n);
  base[kAbortText + n] = 0;
  __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
}

std::string abort_domain(const std::string& message) {
  if (!g_attached) return message;
  abort_segment(reinterpret_cast<uintptr_t>(g_domain.base), g_domain.rank, "rank " + std::to_string(g_domain.rank) + " failed: " + message);
  return abort_message();
}

std::string abort_message() {
  if (!g_attached) return "";
  int32_t flag = __atomic_load_n(i32(kAbortFlag), __ATOMIC_ACQUIRE);
  if (flag == 0) return "";
  for (int spin = 0; flag == 2 && spin < 1000000; ++spin) flag = __atomic_load_n(i32(kAbortFlag), __ATOMIC_ACQUIRE);
  return std::string(reinterpret_cast<const char*>(g_domain.base + kAbortText));
}

}  // namespace pypto::engines::comm
