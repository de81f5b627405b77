// The cross-core FIFO family: the tile FIFOs of a cluster (mixed tasks). The records live
// here; their reference functions reach the FIFOs of the running cluster, an engine
// structure, and so are the engines' (src/engines/sim/reference_cross_core.cpp).
#include "families.h"

namespace pypto::isa::families {

void add_cross_core_family(std::vector<InstrDef>& t) {
  using F = InstrFamily;
  using M = MemorySpace;
  // TPUSH's pipe depends on its source (pipe_of): FIX from Acc, MTE1 from Mat, MTE3 from Vec;
  // its cost is the transfer from the source to the peer's landing memory (Acc -> Vec: the
  // L0C -> L1 figure). TPOP hands the next filled slot to its destination tile (the data
  // already lies in this core's buffer): a handshake of one transfer startup on MTE2. TFREE
  // gives the popped slot back to the producer; its tile is an output, so the compiler orders
  // it after every read of the tile.
  t.push_back(typed_by(TypedOperand::kIn0, instr("TPUSH", F::kCrossCore, Pipe::MTE3, "", "T", kAny, xfer(128),
      "push the tile into the FIFO towards attrs{peer}: blocks while every slot is full or popped but not freed", {M::Acc, M::Mat, M::Vec})));
  t.push_back(instr("TPOP", F::kCrossCore, Pipe::MTE2, "T", "", kAny, {30, 0, 0, 0, false},
      "dst = the oldest filled slot of the FIFO from attrs{peer} (blocks until one is pushed); dtype and shape must match the push", {M::Vec, M::Mat}));
  t.push_back(instr("TFREE", F::kCrossCore, Pipe::S, "T", "", kAny, vec(0, 1),
      "give the oldest popped slot of the FIFO from attrs{peer} back to its producer (dst: the popped tile, now dead)", {M::Vec, M::Mat}));
}

}  // namespace pypto::isa::families
