// Asynchronous kernel launches (pto.launch): a background worker runs launches in order;
// each queued launch holds references to its device buffers, so Python may drop a tensor
// while a kernel still uses it. The first failure is kept and raised by the next sync.
#pragma once
#include <functional>
#include <string>

#include "pypto/kernel/lane_program.h"

namespace pypto::kernel {

struct LaunchJob {
  std::string kernel;
  std::vector<std::shared_ptr<DeviceBuffer>> holds;  // released when the job ends
  std::function<void()> work;
};

// Queues `job` on the background worker and returns at once.
void enqueue_launch(LaunchJob job);
// Waits for every queued launch; rethrows the first launch error since the last sync.
void sync_launches();
// Rethrows (and clears) a pending launch error without waiting.
void raise_launch_error();
// Launches queued or running.
int launches_in_flight();

}  // namespace pypto::kernel
