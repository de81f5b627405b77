// The sync family: the flags and barriers between the pipes of a core and the pl.system ops
// (cross-core events, the GM fence, cache invalidation, the all-core barrier). They move no
// data; the sim cycle model times them (docs/simulator.md, "pl.system"). SYNC_SET / SYNC_WAIT
// reach the cluster of a mixed task, an engine structure: their reference functions are the
// engines' (src/engines/sim/reference_cross_core.cpp).
#include "families.h"

namespace pypto::isa::families {

namespace {

void no_data(const TileCall&) {}  // timing only (cycle model)

}  // namespace

void add_sync_family(std::vector<InstrDef>& t) {
  auto add = [&](const char* name, CostFigures cost, const char* summary, ReferenceFn reference) {
    t.push_back(instr(name, InstrFamily::kSync, Pipe::S, "", "", kAny, cost, summary, kNoTile, std::move(reference)));
  };
  add("SET_FLAG", vec(0, 1), "signal event attrs{event} from pipe attrs{src} to pipe attrs{dst}", no_data);
  add("WAIT_FLAG", vec(0, 1), "pipe attrs{dst} waits for event attrs{event} from pipe attrs{src}", no_data);
  add("PIPE_BARRIER", vec(0, 1), "pipe attrs{pipe} (or ALL) waits for every earlier instruction of that pipe (all pipes)", no_data);
  // A cross-core event signals in one transfer startup (30 cycles, as a TPOP handshake), a
  // cache invalidation is a round trip to global memory (30), the others take one issue cycle
  // plus the waits they impose on the pipes.
  add("SYNC_SET", vec(0, 30), "cross-core event attrs{event} set from pipe attrs{pipe} once its earlier instructions end (pl.system.sync_set)", {});
  add("SYNC_WAIT", vec(0, 1), "pipe attrs{pipe} waits for cross-core event attrs{event} (pl.system.sync_wait)", {});
  add("SET_FFTS", vec(0, 1), "FFTS base address setup (A3; pl.system.set_ffts)", no_data);
  add("FENCE", vec(0, 1), "global-memory fence: later global-memory accesses wait for earlier writes to end (pl.system.fence)", no_data);
  add("CACHEINVALID", vec(0, 30), "invalidate the data cache of global memory (pl.system.cacheinvalid)", no_data);
  add("PIPE_INIT", vec(0, 1), "set up cross-core pipe attrs{id}: attrs{slot_num} slots of attrs{slot_size} bytes (the runtime sizes that pipe's FIFOs)", no_data);
  add("SYNCALL", vec(0, 30), "barrier of every core of the launch, mode attrs{mode} over attrs{core_type} (pl.system.syncall)", no_data);
}

}  // namespace pypto::isa::families
