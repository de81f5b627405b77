// Chrome-trace JSON of a run's tasks: one lane (tid) per virtual core (AIC 0.., then AIV 0..),
// one complete event ("X") per task with its host worker in args, and an "s"/"f" flow pair
// per dependency edge from the end of the earlier task to the start of the later one. With
// the sim engine each task also carries its modelled cycles, and process 1 lays the tasks
// out on the modelled clock.
#include "pypto/runtime/swimlane.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace pypto::runtime {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) out += ' ';
    else out += c;
  }
  return out + "\"";
}

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace

void write_swimlane(const std::string& path, const std::vector<TaskRecord>& records, const isa::ChipSpec& chip,
                    double epoch_us) {
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
  o << "{\"displayTimeUnit\":\"ns\",";
  if (epoch_us >= 0) o << "\"otherData\":{\"epoch_us\":" << num(epoch_us) << "},";
  o << "\"traceEvents\":[\n";
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
      if (r.cycles >= 0) o << ",\"modelled_cycles\":" << num(r.cycles);
      if (r.block_num > 1) o << ",\"block_idx\":" << r.block_idx << ",\"block_num\":" << r.block_num;
      if (r.retired) o << ",\"retired\":true";
      o << ",\"deps\":[";
      for (size_t i = 0; i < r.deps.size(); ++i) o << (i ? "," : "") << r.deps[i];
      o << "]}}";
    }
  }
  // With the sim engine, a second process shows what the chip would do: tasks in
  // submission order, each starting when its dependencies' modelled ends allow, on the
  // lowest-numbered virtual core of its kind that is free by then (else the one that frees
  // first; a mixed task takes a cluster), lasting its modelled cycles (1 us of trace time =
  // clock_ghz * 1000 cycles).
  bool modelled = false;
  for (const TaskRecord& r : records) modelled |= r.cycles >= 0;
  if (modelled) {
    const double cycles_per_us = chip.clock_ghz * 1000.0;
    o << ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":"
      << json_string(chip.platform + " (modelled cycles)") << "}}";
    std::vector<double> end(records.size(), 0), free_at(static_cast<size_t>(aic + aiv), 0);
    std::vector<bool> lane_named(free_at.size(), false);
    std::ostringstream tasks;
    for (size_t id = 0; id < records.size(); ++id) {
      const TaskRecord& r = records[id];
      double ready = 0;
      for (size_t d : r.deps)
        if (d < id) ready = std::max(ready, end[d]);
      // Candidate lane sets of this task's kind.
      std::vector<std::vector<int>> options;
      if (r.kind == CoreKind::AIC)
        for (int c = 0; c < aic; ++c) options.push_back({c});
      else if (r.kind == CoreKind::AIV)
        for (int v = 0; v < aiv; ++v) options.push_back({aic + v});
      else
        for (int c = 0; c < aic && 2 * c + 1 < aiv; ++c) options.push_back({c, aic + 2 * c, aic + 2 * c + 1});
      if (options.empty()) continue;
      auto free_of = [&](const std::vector<int>& ls) {
        double f = 0;
        for (int l : ls) f = std::max(f, free_at[l]);
        return f;
      };
      const std::vector<int>* pick = nullptr;
      for (auto& ls : options)
        if (free_of(ls) <= ready) { pick = &ls; break; }
      if (!pick) {
        pick = &options[0];
        for (auto& ls : options)
          if (free_of(ls) < free_of(*pick)) pick = &ls;
      }
      const double start = std::max(ready, free_of(*pick));
      end[id] = start + std::max(r.cycles, 0.0);
      for (int l : *pick) {
        free_at[l] = end[id];
        lane_named[l] = true;
        tasks << ",\n{\"ph\":\"X\",\"name\":" << json_string(r.kernel) << ",\"cat\":\"modelled\",\"pid\":1,\"tid\":" << l
              << ",\"ts\":" << num(start / cycles_per_us) << ",\"dur\":" << num(std::max(r.cycles, 0.0) / cycles_per_us)
              << ",\"args\":{\"task\":" << id << ",\"start_cycle\":" << num(start) << ",\"cycles\":" << num(r.cycles)
              << "}}";
      }
    }
    for (size_t l = 0; l < lane_named.size(); ++l)
      if (lane_named[l])
        o << ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":" << l << ",\"args\":{\"name\":"
          << json_string(static_cast<int>(l) < aic ? "AIC " + std::to_string(l) : "AIV " + std::to_string(l - aic)) << "}}";
    o << tasks.str();
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
