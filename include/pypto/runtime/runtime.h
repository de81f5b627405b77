// Running compiled programs: an orchestration (HostProgram) as tasks on a worker pool, or a
// single kernel on one virtual core, on a chosen platform and engine.
#pragma once
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

struct RunOptions {
  std::string platform = "a2a3sim";
  std::string engine = "sim";
  int num_workers = 0;  // 0 = one worker per host CPU
  std::string trace_path;     // non-empty: write the modelled timeline as Chrome-trace JSON
  RunStats* stats = nullptr;  // non-null: filled in when the run finishes
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
