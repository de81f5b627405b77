// Running compiled programs: an orchestration (HostProgram) as tasks on a worker pool, or a
// single kernel on one virtual core, on a chosen platform and engine.
#pragma once
#include <atomic>
#include <string>
#include <vector>

#include "pypto/isa/chip.h"
#include "pypto/isa/program.h"
#include "pypto/runtime/tensor.h"

namespace pypto::runtime {

// What a run reports besides its outputs.
struct RunStats {
  double modelled_cycles = 0;  // cycle model: until the last virtual core finishes
};

// What the task runtime did during a run (for tests, benchmarks and reports).
struct RuntimeStats {
  size_t tasks = 0;
  size_t max_in_flight = 0;          // most tasks submitted but unfinished at once
  size_t ring_waits = 0;             // times submission blocked on the full ring
  int64_t peak_tensor_bytes = 0;     // most bytes of pl.create_tensor tensors alive at once
  size_t tensors_created = 0, tensors_freed_early = 0;  // freed before the run ended
};

struct RunOptions {
  std::string platform = "a2a3sim";
  std::string engine = "sim";
  int num_workers = 0;  // 0 = one worker per host CPU
  std::string trace_path;     // non-empty: write the modelled timeline as Chrome-trace JSON
  RunStats* stats = nullptr;  // non-null: filled in when the run finishes
  size_t ring_size = 1024;           // tasks in flight at most; submission blocks when full (0 = unbounded)
  std::string swimlane_path;         // non-empty: write the chip swimlane (Chrome-trace JSON) here
  RuntimeStats* runtime_stats = nullptr;  // non-null: filled in when the run finishes
  // Set by the caller (Ctrl-C) to stop the run: no new tasks start, the run raises "interrupted".
  const std::atomic<bool>* interrupt = nullptr;
};

// Interprets the host code of `program`: scalar control flow, tensor allocation and kernel
// calls submitted as tasks. Returns when every task has finished; the first task error is
// rethrown here. `args` are in the program's parameter order.
void run_host_program(const isa::HostProgram& program, const std::vector<HostArg>& args, const RunOptions& options);
// Runs one kernel on one virtual core of the chosen platform, on the calling thread.
void run_kernel(const isa::Kernel& kernel, const std::vector<HostArg>& args, const RunOptions& options);
// Engines this build can run ("sim").
std::vector<std::string> engine_names();
// The chip for `options.platform` after checking the platform and the engine; unknown or
// unavailable ones are user errors listing the choices.
isa::ChipSpec resolve_run_target(const RunOptions& options);

}  // namespace pypto::runtime
