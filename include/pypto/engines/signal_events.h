// The signal events of a rank process (pld: SIGNAL_NOTIFY and the SIGNAL_WAIT it released),
// recorded while a distributed run asks for its swimlane: the driver draws an arrow from each
// notify to the wait it released in the swimlane of all ranks (pypto.jit.distributed).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace pypto::engines {

struct SignalEvent {
  char kind;            // 'n': a notify, 'w': a wait whose condition held (it returns, or its task completes)
  double t_us;          // steady clock (CLOCK_MONOTONIC), microseconds
  int rank;             // the rank that notified / waited
  int peer;             // notify: the rank whose cell changed; wait: = rank
  int64_t cell_offset;  // the cell, from the segment start (one numbering for every rank)
  int64_t value;        // notify: the value added or set; wait: the expected value
  std::string where;    // file:line of the instruction
};

// Starts (on) or stops recording; stopping forgets what was recorded.
void record_signal_events(bool on);
// The events recorded since the last call, in order.
std::vector<SignalEvent> take_signal_events();

}  // namespace pypto::engines
