// The memory family: transfers between global memory and tiles. The records live here; the
// reference functions of TLOAD / TSTORE / MGATHER / MSCATTER read global tensors
// (runtime::TensorView, an engine type) and so are the engines'
// (src/engines/sim/reference_memory.cpp). TPREFETCH moves no data in the model.
#include "families.h"

namespace pypto::isa::families {

namespace {

void no_data(const TileCall&) {}

}  // namespace

void add_memory_family(std::vector<InstrDef>& t) {
  using F = InstrFamily;
  using M = MemorySpace;
  t.push_back(instr("TLOAD", F::kMemory, Pipe::MTE2, "T", "GL", kMemoryDtypes, xfer(100.9), "tile = tensor[offsets] (valid region; pad fills the rest; attribute dims=[r, c]: rows and columns step tensor dims r and c, a strided box)", {M::Vec, M::Mat}));
  t.push_back(instr("TSTORE", F::kMemory, Pipe::MTE3, "G", "TL", kMemoryDtypes, xfer(188.5), "tensor[offsets] = tile (valid region; atomic add optional; dims=[r, c] as TLOAD)", {M::Vec, M::Mat, M::Acc}));
  t.push_back(instr("MGATHER", F::kMemory, Pipe::MTE2, "T", "GT", kAny, xfer(100.9), "dst[r, c] = tensor.flat[idx[r, c]]", kVecOnly));
  t.push_back(instr("MSCATTER", F::kMemory, Pipe::MTE3, "G", "TT", kAny, xfer(188.5), "tensor.flat[idx[r, c]] = src[r, c]", kVecOnly));
  // pld (docs/distributed.md): the same instructions on a peer rank's window, and the signal
  // cells ranks synchronise through; their reference functions reach the shared memory of the
  // domain (src/engines/sim/reference_memory.cpp, include/pypto/engines/comm.h).
  t.push_back(instr("REMOTE_LOAD", F::kMemory, Pipe::MTE2, "T", "GLS", kMemoryDtypes, xfer(50), "tile = the window tensor[offsets] of rank peer (pld.tile.remote_load)", {M::Vec, M::Mat}));
  t.push_back(instr("REMOTE_STORE", F::kMemory, Pipe::MTE3, "G", "TLS", kMemoryDtypes, xfer(50), "the window tensor[offsets] of rank peer = tile (atomic add optional; pld.tile.remote_store)", {M::Vec}));
  t.push_back(instr("SIGNAL_NOTIFY", F::kMemory, Pipe::MTE3, "G", "LSS", {DataType::INT32}, xfer(50), "signal cell [offsets] of rank peer += value (attrs{op} AtomicAdd) or = value (Set), release order (pld.system.notify)", kNoTile));
  t.push_back(instr("SIGNAL_WAIT", F::kMemory, Pipe::MTE2, "", "GLS", {DataType::INT32}, xfer(50), "wait until this rank's signal cell [offsets] == expected (attrs{cmp} Eq) or >= (Ge), acquire order (pld.system.wait)", kNoTile));
  t.push_back(instr("TPREFETCH", F::kMemory, Pipe::MTE2, "", "GL", kAny, xfer(100.9), "warm the cache for tensor[offsets] (no data moved in the model)", kNoTile, no_data));
}

}  // namespace pypto::isa::families
