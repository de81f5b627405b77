// Waiting without sleeping, for the hand-overs between threads that take a few microseconds:
// a futex sleep costs the waiter tens of microseconds to wake on a loaded machine and the
// waker a system call. Every such wait is bounded and falls back to blocking.
#pragma once
#include <chrono>
#include <thread>
#if defined(__linux__)
#include <sched.h>
#endif

namespace pypto {

// One spin-wait iteration: tells the core this thread is waiting (x86 PAUSE, Arm YIELD).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// The CPUs this process may run on (its affinity mask on Linux: taskset, cpusets), else the
// machine's.
inline int usable_cpus() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
#endif
  return static_cast<int>(std::thread::hardware_concurrency());
}

// Spins until `ready()` holds or `max_us` microseconds have passed; returns ready(). On a
// machine with one CPU the thread that would make it true cannot run meanwhile: no spinning.
template <class Ready>
bool spin_until(Ready ready, long max_us) {
  static const bool one_cpu = usable_cpus() <= 1;
  if (one_cpu) return ready();
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(max_us);
  for (int i = 0;; ++i) {
    if (ready()) return true;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= end) return ready();
    cpu_relax();
  }
}

}  // namespace pypto
