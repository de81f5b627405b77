// The virtual chips: the one table of chip numbers (chip-model.md). Memory planning,
// the engines and the cost model read it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pypto/base/dtype.h"

namespace pypto::isa {

struct ChipSpec {
  std::string platform;      // "a2a3sim", "a5sim"
  std::string description;
  int clusters;              // 1 AIC + 2 AIV each
  int aic_cores, aiv_cores;
  int64_t ub_bytes;          // Vec, per AIV
  int64_t l1_bytes;          // Mat, per AIC
  int64_t l0a_bytes, l0b_bytes, l0c_bytes;
  int64_t bias_bytes, scaling_bytes;
  double clock_ghz;
  int64_t alignment_bytes;   // every on-chip address is a multiple of this
  // Slots of each cross-core tile FIFO of a cluster (one per direction between the AIC and
  // each AIV): a TPUSH blocks while every slot is full or popped but not yet freed.
  int fifo_depth = 2;
  // Bytes of the per-core buffer that holds `memory` (0 for DDR).
  int64_t capacity(MemorySpace memory) const;
};

// The chip model behind a platform string, or nullopt for unknown platforms.
std::optional<ChipSpec> chip_for_platform(const std::string& platform);
// Platforms the simulator can run ("a2a3sim", "a5sim").
std::vector<std::string> simulated_platforms();
// True for platform names that denote real NPUs ("a2a3", "a5").
bool is_hardware_platform(const std::string& platform);

}  // namespace pypto::isa
