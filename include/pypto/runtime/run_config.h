// RunConfig: the options of one compile-and-run, with their one set of defaults. Python's
// pypto.runtime.RunConfig (pypto/jit/config.py) takes its defaults from here and builds one
// (`RunConfig.options()`); the bindings hand it to the runtime whole (run_options below).
//
// Each field is listed once, in PYPTO_RUN_CONFIG_FIELDS: its type, name, default, whether
// the compile step reads it (kCompile: a change compiles again, so it is part of the jit
// cache key; kRun: only runs read it) and what it does. The struct, the binding (named
// fields), the field table and the cache key are generated from the list.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pypto::runtime {

struct RunOptions;

enum class ConfigUse { kCompile, kRun };

// X(type, name, default, use, doc)
#define PYPTO_RUN_CONFIG_FIELDS(X)                                                                                    \
  X(std::optional<std::string>, platform, std::nullopt, kCompile,                                                    \
    "chip: \"a2a3sim\" / \"a5sim\" (None: the backend of pypto.backend.set_backend_type)")                          \
  X(bool, dump_passes, false, kCompile, "write passes_dump/ (the program after each pass that changed it)")          \
  X(bool, save_kernels, false, kCompile, "write kernels/ (.pto) at compile time")                                   \
  X(std::optional<std::string>, save_kernels_dir, std::nullopt, kCompile, "where save_kernels writes")               \
  X(std::optional<std::string>, output_dir, std::nullopt, kCompile, "build directory (build_output/<entry>)")        \
  X(std::string, verify, "basic", kCompile, "checks between passes: \"off\", \"basic\", \"roundtrip\"")             \
  X(bool, compile_profiling, false, kCompile, "write report/pipeline_profile.{txt,json}")                           \
  X(std::string, engine, "native", kRun, "\"native\" (compiled kernels) or \"sim\" (reference interpreter)")         \
  X(int, num_workers, 0, kRun, "host threads of the task pool (0: one per host CPU)")                               \
  X(std::optional<std::string>, trace_path, std::nullopt, kRun, "write the modelled timeline (or the swimlane) here") \
  X(int64_t, ring_size, 1024, kRun, "tasks in flight at most (0: unbounded)")                                       \
  X(int, enable_chip_swimlane, 0, kRun, "write the task swimlane (Chrome-trace JSON)")                              \
  X(int, enable_dump_args, 0, kRun, "1: tensors tagged by pl.dump_tag / dumps=; 2: every tensor argument")          \
  X(int, enable_pmu, 0, kRun, "pmu.csv: per task, modelled busy cycles of each pipe")                               \
  X(bool, enable_dep_gen, false, kRun, "deps.json: every task and the tasks it waited for")                          \
  X(bool, enable_scope_stats, false, kRun, "scope_stats/scope_stats.jsonl")                                          \
  X(std::optional<std::string>, dfx_dir, std::nullopt, kRun,                                                        \
    "where the DFX files go (None: <output_dir>/dfx_outputs; a rank of a distributed run: .../rank{r}/d{k})")     \
  X(bool, codegen_only, false, kRun, "compile, do not run")                                                         \
  X(int, device_id, 0, kRun, "accepted (one virtual chip)")                                                         \
  X(double, rtol, 1e-5, kRun, "relative tolerance of run(golden=...)")                                               \
  X(double, atol, 1e-5, kRun, "absolute tolerance of run(golden=...)")                                               \
  X(std::optional<std::string>, golden_data_dir, std::nullopt, kRun, "where run() keeps inputs and golden outputs")  \
  X(std::optional<int64_t>, aicpu_thread_num, std::nullopt, kRun, "accepted (the task pool schedules on the host)") \
  X(bool, analyze_auto_scopes_for_deps, false, kRun, "accepted (every scope's dependencies are analysed)")           \
  X(bool, dump_ptoas_passes, false, kRun, "accepted (no ptoas runs here)")

struct RunConfig {
#define PYPTO_RUN_CONFIG_MEMBER(type, name, def, use, doc) type name = def;
  PYPTO_RUN_CONFIG_FIELDS(PYPTO_RUN_CONFIG_MEMBER)
#undef PYPTO_RUN_CONFIG_MEMBER

  // The fields the compile step reads, printed: equal keys compile to the same program.
  std::string compile_key() const;
  // Whether a DFX output is asked for (swimlane, args dump, PMU, dependencies, scope stats).
  bool any_dfx() const;
};

struct ConfigField {
  const char* name;
  ConfigUse use;
  const char* doc;
};
// Every field of RunConfig, in order.
const std::vector<ConfigField>& run_config_fields();

// The runtime's options of a run with `config`, whose build directory is `output_dir`
// (config.output_dir when set): the swimlane goes to trace_path or <dir>/swimlane.json
// (the directory is made), the DFX files under config.dfx_dir, else <dir>/dfx_outputs.
RunOptions run_options(const RunConfig& config, const std::string& output_dir);
// The build directory of a run: config.output_dir when set, else `fallback`.
std::string run_output_dir(const RunConfig& config, const std::string& fallback);

}  // namespace pypto::runtime
