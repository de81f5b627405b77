// RunConfig's field table, cache key and the runtime options of a run (run_config.h).
#include "pypto/runtime/run_config.h"

#include <filesystem>
#include <sstream>

#include "pypto/runtime/runtime.h"

namespace pypto::runtime {

namespace {

void put(std::ostream& os, const std::string& v) { os << '"' << v << '"'; }
void put(std::ostream& os, const std::optional<std::string>& v) {
  if (v) put(os, *v);
  else os << "None";
}
void put(std::ostream& os, const std::optional<int64_t>& v) {
  if (v) os << *v;
  else os << "None";
}
void put(std::ostream& os, bool v) { os << (v ? "True" : "False"); }
template <typename T>
void put(std::ostream& os, const T& v) {
  os << v;
}

}  // namespace

const std::vector<ConfigField>& run_config_fields() {
  static const std::vector<ConfigField> fields = {
#define PYPTO_RUN_CONFIG_ROW(type, name, def, use, doc) {#name, ConfigUse::use, doc},
      PYPTO_RUN_CONFIG_FIELDS(PYPTO_RUN_CONFIG_ROW)
#undef PYPTO_RUN_CONFIG_ROW
  };
  return fields;
}

std::string RunConfig::compile_key() const {
  std::ostringstream os;
#define PYPTO_RUN_CONFIG_KEY(type, name, def, use, doc) \
  if (ConfigUse::use == ConfigUse::kCompile) {          \
    os << #name << '=';                                 \
    put(os, name);                                      \
    os << ';';                                          \
  }
  PYPTO_RUN_CONFIG_FIELDS(PYPTO_RUN_CONFIG_KEY)
#undef PYPTO_RUN_CONFIG_KEY
  return os.str();
}

bool RunConfig::any_dfx() const {
  return enable_chip_swimlane != 0 || enable_dump_args != 0 || enable_pmu != 0 || enable_dep_gen || enable_scope_stats;
}

std::string run_output_dir(const RunConfig& config, const std::string& fallback) {
  return config.output_dir && !config.output_dir->empty() ? *config.output_dir : fallback;
}

RunOptions run_options(const RunConfig& config, const std::string& output_dir) {
  namespace fs = std::filesystem;
  RunOptions options;
  options.platform = config.platform.value_or(options.platform);
  options.engine = config.engine;
  options.num_workers = config.num_workers;
  options.ring_size = static_cast<size_t>(config.ring_size);
  const std::string dir = run_output_dir(config, output_dir);
  // enable_chip_swimlane writes the task swimlane (to trace_path if given); otherwise
  // trace_path records the modelled timeline (the sim engine's cycle model).
  if (config.enable_chip_swimlane != 0) {
    options.swimlane_path = config.trace_path && !config.trace_path->empty()
                                ? *config.trace_path
                                : (fs::path(dir) / "swimlane.json").string();
    const fs::path parent = fs::absolute(options.swimlane_path).parent_path();
    std::error_code ec;
    fs::create_directories(parent, ec);
  } else {
    options.trace_path = config.trace_path.value_or("");
  }
  options.dfx_dir = config.dfx_dir && !config.dfx_dir->empty() ? *config.dfx_dir : (fs::path(dir) / "dfx_outputs").string();
  options.dump_args = config.enable_dump_args;
  options.dep_gen = config.enable_dep_gen;
  options.pmu = config.enable_pmu != 0;
  options.scope_stats = config.enable_scope_stats;
  return options;
}

}  // namespace pypto::runtime
