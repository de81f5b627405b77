// The modelled timeline of a whole run: each task's kernel timeline placed on the virtual
// core (worker) that ran it, after that core's previous task; written as Chrome-trace JSON
// (open it in Perfetto or chrome://tracing; 1 us of trace time = 1850 cycles at 1.85 GHz).
#pragma once
#include <mutex>
#include <string>
#include <vector>

#include "pypto/engines/cycle_model.h"

namespace pypto::runtime {

class TraceRecorder {
 public:
  // Appends `timeline` to virtual core `core`; thread-safe.
  void add(int core, const engines::Timeline& timeline);
  // The parts of a mixed task: timelines[i] on cores[i], all starting together once every
  // one of those cores is free; the cores stay busy until the last part ends.
  void add_group(const std::vector<int>& cores, const std::vector<engines::Timeline>& timelines);
  // The name a core's process shows (default "core N").
  void set_core_name(int core, const std::string& name);
  // Modelled cycles until the last core finishes.
  double makespan() const;
  // Writes Chrome-trace JSON; a file that cannot be written is a user error.
  void write_chrome_json(const std::string& path) const;

 private:
  struct Placed {
    int core;
    double offset;
    engines::Timeline timeline;
  };
  mutable std::mutex mu_;
  std::vector<Placed> placed_;
  std::vector<double> core_clock_;
  std::vector<std::string> core_names_;
};

}  // namespace pypto::runtime
