// Chrome-trace JSON of a run's tasks: one lane (tid) per virtual core (AIC 0.., then AIV 0..),
// one complete event ("X") per task with its host worker in args, and an "s"/"f" flow pair
// per dependency edge from the end of the earlier task to the start of the later one.
#include "pypto/runtime/swimlane.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace pypto::runtime {

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) out += ' ';
    else out += c;
  }
  return out + "\"";
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace

void write_swimlane(const std::string& path, const std::vector<TaskRecord>& records, const isa::ChipSpec& chip) {
  const int aic = chip.aic_cores, aiv = chip.aiv_cores;
  const int host_lane = aic + aiv;  // tasks that found no free virtual core of their kind
  // The lanes of a task: its AIC or AIV, or the whole cluster of a mixed task.
  auto lanes = [&](const TaskRecord& r) -> std::vector<int> {
    if (r.vcore < 0) return {host_lane + r.worker};
    if (r.kind == CoreKind::AIC) return {r.vcore};
    if (r.kind == CoreKind::AIV) return {aic + r.vcore};
    return {r.vcore, aic + 2 * r.vcore, aic + 2 * r.vcore + 1};
  };
  std::ostringstream o;
  o << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  o << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":" << json_string(chip.platform + " (host wall clock)") << "}}";
  std::vector<bool> used(host_lane + 256, false);
  for (const TaskRecord& r : records)
    for (int l : lanes(r))
      if (l >= 0 && static_cast<size_t>(l) < used.size()) used[l] = true;
  for (int l = 0; l < static_cast<int>(used.size()); ++l) {
    if (!used[l]) continue;
    std::string name = l < aic ? "AIC " + std::to_string(l)
                       : l < host_lane ? "AIV " + std::to_string(l - aic)
                                       : "host worker " + std::to_string(l - host_lane);
    o << ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":0,\"tid\":" << l << ",\"args\":{\"name\":" << json_string(name) << "}}";
    o << ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":0,\"tid\":" << l << ",\"args\":{\"sort_index\":" << l << "}}";
  }
  for (size_t id = 0; id < records.size(); ++id) {
    const TaskRecord& r = records[id];
    for (int l : lanes(r)) {
      o << ",\n{\"ph\":\"X\",\"name\":" << json_string(r.kernel) << ",\"cat\":\"task\",\"pid\":0,\"tid\":" << l
        << ",\"ts\":" << num(r.start_us) << ",\"dur\":" << num(std::max(r.end_us - r.start_us, 0.001))
        << ",\"args\":{\"task\":" << id << ",\"kind\":\"" << core_kind_name(r.kind) << "\",\"vcore\":" << r.vcore
        << ",\"worker\":" << r.worker;
      if (r.block_num > 1) o << ",\"block_idx\":" << r.block_idx << ",\"block_num\":" << r.block_num;
      o << ",\"deps\":[";
      for (size_t i = 0; i < r.deps.size(); ++i) o << (i ? "," : "") << r.deps[i];
      o << "]}}";
    }
  }
  size_t flow = 0;
  for (size_t id = 0; id < records.size(); ++id) {
    const TaskRecord& r = records[id];
    for (size_t d : r.deps) {
      if (d >= records.size()) continue;
      const TaskRecord& from = records[d];
      ++flow;
      o << ",\n{\"ph\":\"s\",\"name\":\"dep\",\"cat\":\"dep\",\"id\":" << flow << ",\"pid\":0,\"tid\":" << lanes(from)[0]
        << ",\"ts\":" << num(std::max(from.end_us - 0.001, from.start_us)) << "}";
      o << ",\n{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"dep\",\"cat\":\"dep\",\"id\":" << flow << ",\"pid\":0,\"tid\":" << lanes(r)[0]
        << ",\"ts\":" << num(r.start_us) << "}";
    }
  }
  o << "\n]}\n";
  std::ofstream f(path);
  if (!f)
    fail(ErrorKind::kValue, {}, "cannot write the swimlane to '" + path + "'",
         "pass RunConfig(trace_path=...) or output_dir= naming a writable location");
  f << o.str();
}

}  // namespace pypto::runtime
