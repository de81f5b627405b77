// Cancellation of a running kernel: the run's interrupt flag (RunOptions::interrupt, set by
// Ctrl-C) as the calling thread sees it. The task pool's workers and a mixed task's part
// threads install it around each task (CancelScope); the scalar machine checks it at every
// loop back-edge (both engines' kernels and host programs) and the native engine's
// generated code reads it at every loop iteration (pto_frame::cancel), so a long kernel
// stops within one iteration of the flag being set.
#pragma once
#include <atomic>
#include <stdexcept>

namespace pypto::engines {

// Thrown out of a kernel whose run was interrupted (the run then reports the interrupt).
class RunCancelled : public std::runtime_error {
 public:
  RunCancelled() : std::runtime_error("the run was interrupted (Ctrl-C)") {}
};

inline thread_local const std::atomic<bool>* tl_cancel_flag = nullptr;

// The calling thread's flag (null: the run cannot be cancelled).
inline const std::atomic<bool>* current_cancel_flag() { return tl_cancel_flag; }

// Throws RunCancelled when the calling thread's run has been interrupted.
inline void check_cancelled() {
  const std::atomic<bool>* f = tl_cancel_flag;
  if (f != nullptr && f->load(std::memory_order_relaxed)) throw RunCancelled();
}

// Installs `flag` as the calling thread's flag for its lifetime.
class CancelScope {
 public:
  explicit CancelScope(const std::atomic<bool>* flag) : saved_(tl_cancel_flag) { tl_cancel_flag = flag; }
  ~CancelScope() { tl_cancel_flag = saved_; }
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const std::atomic<bool>* saved_;
};

}  // namespace pypto::engines
