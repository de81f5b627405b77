// Waiting without sleeping, for the hand-overs between threads that take a few microseconds:
// a futex sleep costs the waiter tens of microseconds to wake on a loaded machine and the
// waker a system call. Every such wait is bounded and falls back to blocking.
#pragma once
#include <chrono>

namespace pypto {

// One spin-wait iteration: tells the core this thread is waiting (x86 PAUSE, Arm YIELD).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until `ready()` holds or `max_us` microseconds have passed; returns ready().
template <class Ready>
bool spin_until(Ready ready, long max_us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(max_us);
  for (int i = 0;; ++i) {
    if (ready()) return true;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= end) return ready();
    cpu_relax();
  }
}

}  // namespace pypto
