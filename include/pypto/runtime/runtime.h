// Running compiled programs: an orchestration (HostProgram) as tasks on a worker pool, or a
// single kernel on one virtual core, on a chosen platform and engine.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pypto/isa/chip.h"
#include "pypto/isa/program.h"
#include "pypto/engines/tensor.h"
#include "pypto/runtime/run_config.h"

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
  std::string engine = RunConfig{}.engine;  // the defaults are RunConfig's (run_config.h)
  int num_workers = RunConfig{}.num_workers;  // 0 = one worker per host CPU
  std::string trace_path;     // non-empty: write the modelled timeline as Chrome-trace JSON
  RunStats* stats = nullptr;  // non-null: filled in when the run finishes
  size_t ring_size = static_cast<size_t>(RunConfig{}.ring_size);  // tasks in flight at most (0 = unbounded)
  std::string swimlane_path;         // non-empty: write the chip swimlane (Chrome-trace JSON) here
  RuntimeStats* runtime_stats = nullptr;  // non-null: filled in when the run finishes
  // Set by the caller (Ctrl-C) to stop the run: no new tasks start, the run raises "interrupted".
  const std::atomic<bool>* interrupt = nullptr;
  // DFX outputs (RunConfig's enable_* flags), written under `dfx_dir` (<output_dir>/dfx_outputs):
  std::string dfx_dir;
  int dump_args = 0;     // 1: args_dump/ of the tensors tagged by pl.dump_tag / dumps=; 2: of every tensor argument
  bool dep_gen = false;  // deps.json: every task and the tasks it waited for
  bool scope_stats = false;  // scope_stats/scope_stats.jsonl: tasks and time per launched kernel
  bool pmu = false;      // pmu.csv: per task, modelled busy cycles of each pipe (sim engine)
};

// Interprets the host code of `program`: scalar control flow, tensor allocation and kernel
// calls submitted as tasks. Returns when every task has finished; the first task error is
// rethrown here. `args` are in the program's parameter order.
void run_host_program(const isa::HostProgram& program, const std::vector<engines::HostArg>& args, const RunOptions& options);
class TaskPool;
struct PreparedProgram;  // a program's footprints, host-code analyses and loaded kernels

// `program` prepared once for many runs (pypto.jit's compiled programs keep one per platform,
// engine and kernel-compile environment): run_prepared is run_host_program without the per-run
// preparation (validation, footprints, finding the native kernels) and without starting and
// joining a worker pool: it takes an idle pool of the process (one is made when none is idle)
// and gives it back after the run. `program` must outlive the PreparedRun.
struct PreparedRun {
  std::shared_ptr<PreparedProgram> prepared;
  std::string platform;  // the pool's platform
};
PreparedRun prepare_run(const isa::HostProgram& program, const RunOptions& options);
void run_prepared(const PreparedRun& run, const std::vector<engines::HostArg>& args, const RunOptions& options);
// A virtual chip that stays up between runs (`pypto.runtime.ChipWorker`): one worker pool
// whose threads and per-worker cores persist, and the programs loaded onto it (footprints
// analysed and native kernels loaded once). Runs are serialised: one at a time per worker.
class ChipWorker {
 public:
  // Checks platform and engine and starts the workers (options: platform, engine, num_workers).
  explicit ChipWorker(const RunOptions& options);
  ~ChipWorker();
  ChipWorker(const ChipWorker&) = delete;
  ChipWorker& operator=(const ChipWorker&) = delete;

  // Prepares `program` for runs and returns its handle (the same handle for the same
  // program). `program` must stay alive while the worker may run it.
  int load(const isa::HostProgram& program);
  // Runs a loaded program like run_host_program; platform, engine and workers are the
  // worker's own, the rest of `options` (ring size, trace, swimlane, stats) is per run.
  void run(int handle, const std::vector<engines::HostArg>& args, const RunOptions& options);
  // Stops the workers and forgets the loaded programs; later loads and runs are errors.
  void close();
  bool closed();
  size_t runs();        // runs started on this worker (failed ones included)
  int num_workers();    // host threads of the pool (0 once closed)
  const std::string& platform() const { return options_.platform; }
  const std::string& engine() const { return options_.engine; }

 private:
  RunOptions options_;
  isa::ChipSpec chip_;
  std::mutex mu_;
  std::unique_ptr<TaskPool> pool_;
  std::vector<std::shared_ptr<PreparedProgram>> programs_;
  size_t runs_ = 0;
};

// Runs one kernel on one virtual core of the chosen platform, on the calling thread.
void run_kernel(const isa::Kernel& kernel, const std::vector<engines::HostArg>& args, const RunOptions& options);
// Engines this build can run ("sim").
std::vector<std::string> engine_names();
// The chip for `options.platform` after checking the platform and the engine; unknown or
// unavailable ones are user errors listing the choices.
isa::ChipSpec resolve_run_target(const RunOptions& options);

}  // namespace pypto::runtime
