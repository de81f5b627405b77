// The DFX outputs of a run (RunConfig's enable_dump_args, enable_dep_gen, enable_pmu),
// written under <output_dir>/dfx_outputs/:
//   args_dump/args_dump.json + args_dump/*.bin   tensor arguments of tasks, before and after each runs
//   deps.json                                    every task and the tasks it waited for
//   pmu.csv                                      per task, modelled busy cycles of each pipe (sim)
#pragma once
#include <mutex>
#include <string>
#include <vector>

#include "pypto/isa/program.h"
#include "pypto/runtime/task_pool.h"

namespace pypto::runtime {

// Collects the args dump of a run: `hook()` goes to TaskPool::set_dump_hook; each call writes
// the listed tensor arguments (row-major, contiguous) to <dir>/args_dump/; `finish()` writes
// args_dump.json describing every file.
class ArgsDumper {
 public:
  explicit ArgsDumper(std::string dfx_dir);
  DumpHook hook();
  void finish();

 private:
  struct Entry {
    size_t task;
    int arg;
    bool after;
    std::string json;
  };
  void dump(size_t id, const isa::Kernel& kernel, const std::vector<engines::HostArg>& args, const std::vector<int>& which, bool after);
  std::string dir_;
  std::mutex mu_;
  std::vector<Entry> entries_;
};

// deps.json: {"tasks": [{"id", "kernel", "block_idx", "block_num", "deps": [...]}], "edges": [[from, to], ...]}.
void write_deps_json(const std::string& path, const std::vector<TaskRecord>& records);
// scope_stats/scope_stats.jsonl: one JSON line per kernel launched (a pl.at scope / InCore
// call): {"scope", "tasks", "host_us", "modelled_cycles"} (cycles: sim engine, else -1).
void write_scope_stats(const std::string& path, const std::vector<TaskRecord>& records);
// pmu.csv: task,kernel,core,cycles,<one column per pipe> (busy cycles; empty on the native engine).
void write_pmu_csv(const std::string& path, const std::vector<TaskRecord>& records);

}  // namespace pypto::runtime
