// Collects the per-task timelines of a run onto virtual cores and writes Chrome-trace JSON:
// one process per core, one thread per pipe, one complete ("X") event per instruction.
#include "pypto/runtime/trace.h"

#include <algorithm>
#include <fstream>

#include "pypto/base/error.h"

namespace pypto::runtime {

using namespace engines;  // the runtime drives the engines: their types unqualified

namespace {
constexpr double kCyclesPerUs = 1850.0;  // 1.85 GHz, the clock of chip-model.md's figures

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}
}  // namespace

void TraceRecorder::add(int core, const Timeline& timeline) {
  std::lock_guard<std::mutex> lk(mu_);
  if (core >= static_cast<int>(core_clock_.size())) core_clock_.resize(core + 1, 0.0);
  placed_.push_back({core, core_clock_[core], timeline});
  core_clock_[core] += timeline.end_cycles;
}

void TraceRecorder::add_group(const std::vector<int>& cores, const std::vector<Timeline>& timelines) {
  std::lock_guard<std::mutex> lk(mu_);
  double offset = 0, length = 0;
  for (size_t i = 0; i < cores.size(); ++i) {
    if (cores[i] >= static_cast<int>(core_clock_.size())) core_clock_.resize(cores[i] + 1, 0.0);
    offset = std::max(offset, core_clock_[cores[i]]);
    if (i < timelines.size()) length = std::max(length, timelines[i].end_cycles);
  }
  for (size_t i = 0; i < cores.size() && i < timelines.size(); ++i) placed_.push_back({cores[i], offset, timelines[i]});
  for (int c : cores) core_clock_[c] = offset + length;
}

void TraceRecorder::set_core_name(int core, const std::string& name) {
  std::lock_guard<std::mutex> lk(mu_);
  if (core >= static_cast<int>(core_names_.size())) core_names_.resize(core + 1);
  core_names_[core] = name;
}

double TraceRecorder::makespan() const {
  std::lock_guard<std::mutex> lk(mu_);
  double m = 0;
  for (double c : core_clock_) m = std::max(m, c);
  return m;
}

void TraceRecorder::write_chrome_json(const std::string& path) const {
  std::lock_guard<std::mutex> lk(mu_);
  std::ofstream f(path);
  if (!f)
    fail(ErrorKind::kValue, {}, "cannot write the trace to '" + path + "'", "pass a trace_path in a writable directory");
  f << "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"clock_ghz\": 1.85}, \"traceEvents\": [\n";
  bool first = true;
  auto sep = [&] {
    if (!first) f << ",\n";
    first = false;
  };
  for (size_t core = 0; core < core_clock_.size(); ++core) {
    sep();
    const std::string name = core < core_names_.size() && !core_names_[core].empty() ? core_names_[core]
                                                                                       : "core " + std::to_string(core);
    f << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << core << ", \"args\": {\"name\": \""
      << escape(name) << "\"}}";
    for (int p = 0; p < 7; ++p) {
      sep();
      f << "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " << core << ", \"tid\": " << p
        << ", \"args\": {\"name\": \"" << isa::pipe_name(static_cast<isa::Pipe>(p)) << "\"}}";
    }
  }
  for (const Placed& pl : placed_)
    for (const TimelineEvent& e : pl.timeline.events) {
      sep();
      f << "{\"ph\": \"X\", \"name\": \"" << escape(e.name) << "\", \"pid\": " << pl.core
        << ", \"tid\": " << static_cast<int>(e.pipe) << ", \"ts\": " << (pl.offset + e.start) / kCyclesPerUs
        << ", \"dur\": " << (e.end - e.start) / kCyclesPerUs << ", \"args\": {\"kernel\": \""
        << escape(pl.timeline.kernel) << "\", \"pc\": " << e.pc << ", \"line\": " << e.line
        << ", \"start_cycle\": " << pl.offset + e.start << ", \"end_cycle\": " << pl.offset + e.end << "}}";
    }
  f << "\n]}\n";
}

}  // namespace pypto::runtime
