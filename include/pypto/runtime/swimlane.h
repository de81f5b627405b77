// The chip swimlane of a run: each task's wall-clock span on the host, placed on the lane of
// the virtual core it was dispatched to, with dependency edges as flow arrows; written as
// Chrome-trace JSON (Perfetto, chrome://tracing, `pypto report`).
#pragma once
#include <string>
#include <vector>

#include "pypto/isa/chip.h"
#include "pypto/runtime/task_pool.h"

namespace pypto::runtime {

// `s` as a JSON string literal: quotes and backslashes escaped, control characters as spaces
// (the swimlane's and the DFX files' one escaping).
std::string json_string(const std::string& s);

// Writes `records` (task id = index) to `path`; a file that cannot be written is a user error.
// `epoch_us` (TaskPool::epoch_us, when >= 0) goes into "otherData" so that the swimlanes of
// several processes (the ranks of a distributed run) can be laid on one clock.
void write_swimlane(const std::string& path, const std::vector<TaskRecord>& records, const isa::ChipSpec& chip,
                    double epoch_us = -1);

}  // namespace pypto::runtime
