// Asynchronous kernel launches (pto.launch) on the runtime's task pool: a launch is one or
// more SPMD block tasks of a TaskPool (runtime/task_pool.h) owned by the launch stream, and
// each of its tasks depends on every task of the launch before it, so launches run in
// submission order (one stream, as on a device) while the blocks of one launch run on the
// pool's workers at once. Each queued launch holds references to its device buffers, so
// Python may drop a tensor while a kernel still uses it. The first failure is kept and
// raised by the next sync (or memcpy_d2h); later launches still run.
#pragma once
#include <memory>
#include <string>

#include "pypto/kernel/lane_program.h"
#include "pypto/kernel/lower_lanes.h"

namespace pypto::kernel {

// Queues a lowered kernel (its buffers are the `holds`) and returns at once. The kernel
// runs on `engine` ("sim" or "native"); independent chunks become SPMD blocks (run_lowered).
void enqueue_lowered(std::shared_ptr<const LoweredKernel> lowered, std::vector<std::shared_ptr<DeviceBuffer>> holds,
                     const std::string& platform, const std::string& engine);
// Queues a run of the warp model (kernels with barriers) and returns at once.
void enqueue_warps(std::shared_ptr<const LaneProgram> program, std::vector<LaunchArg> args, LaunchShape shape,
                   const std::string& platform);
// Waits for every queued launch; rethrows the first launch error since the last report.
void sync_launches();
// Waits at most `ms` milliseconds for the queued launches to end; true when none is left
// (sync_launches then returns at once). Lets the caller watch for Ctrl-C between waits.
bool wait_launches_for(int ms);
// Whether a launch on `platform` now would first wait for the queued ones (the caller then
// waits with wait_launches_for, watching for Ctrl-C).
bool launch_would_wait(const std::string& platform);
// Ctrl-C: stops every queued launch (a running kernel at its next loop iteration or warp
// step, a queued one before it starts), waits for them, and leaves the stream ready for the
// next launch. The cancellation is not reported as a launch error; an earlier launch's error
// stays pending.
void cancel_launches();
// Rethrows (and clears) a pending launch error without waiting.
void raise_launch_error();
// Launches queued or running.
int launches_in_flight();
// SPMD blocks (pool tasks) of the last launch; the stream pool's worker threads (0: none yet).
int last_launch_blocks();
int stream_workers();

}  // namespace pypto::kernel
