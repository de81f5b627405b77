// pld.system.defer_wait (docs/distributed.md): a signal wait that does not hold its core. The
// kernel's SIGNAL_WAIT with attrs{defer} whose condition does not hold yet is recorded for the
// thread that runs the kernel (src/engines/sim/reference_memory.cpp) and the kernel goes on;
// after the kernel the task pool takes the recorded conditions as one poll, frees the core and
// completes the task (its dependents start) once the poll says every condition holds.
#pragma once
#include <functional>

namespace pypto::engines {

// poll(idle) is true once every deferred condition holds (later reads are acquired), false
// while one does not; it throws (after marking the domain failed) on a deadlock, a timeout or
// another rank's failure, as a blocking wait does. `idle`: this rank has nothing else to run,
// so its watchdog slot shows the wait (the deadlock watchdog counts it as blocked).
using DeferredPoll = std::function<bool(bool idle)>;

// The conditions the kernel that last ran on this thread deferred (empty function: none), and
// forgets them.
DeferredPoll take_deferred_poll();
// Forgets this thread's deferred conditions (the kernel failed).
void drop_deferred_waits();

// The most deferred waits one task may hold (PyPTO's limit).
constexpr int kMaxDeferredWaits = 64;

}  // namespace pypto::engines
