// Chip numbers from chip-model.md; the only place they are written down.
#include "pypto/isa/chip.h"

namespace pypto::isa {

namespace {
constexpr int64_t KiB = 1024;
const std::vector<ChipSpec>& chips() {
  static const std::vector<ChipSpec> table = {
      {"a2a3sim", "Ascend 910B-class chip model: 24 clusters of 1 AIC + 2 AIV", 24, 24, 48, 192 * KiB, 512 * KiB,
       64 * KiB, 64 * KiB, 128 * KiB, 1 * KiB, 2 * KiB, 1.85, 32, /*fifo_depth=*/2},
      {"a5sim", "Ascend 950-class chip model: 36 clusters of 1 AIC + 2 AIV", 36, 36, 72, 256 * KiB, 512 * KiB, 64 * KiB,
       64 * KiB, 256 * KiB, 4 * KiB, 4 * KiB, 1.85, 32, /*fifo_depth=*/2},
  };
  return table;
}
}  // namespace

int64_t ChipSpec::capacity(MemorySpace memory) const {
  switch (memory) {
    case MemorySpace::Vec: return ub_bytes;
    case MemorySpace::Mat: return l1_bytes;
    case MemorySpace::Left: return l0a_bytes;
    case MemorySpace::Right: return l0b_bytes;
    case MemorySpace::Acc: return l0c_bytes;
    case MemorySpace::Bias: return bias_bytes;
    case MemorySpace::DDR:
    case MemorySpace::LeftScale:  // A5 MX scale buffers and the scalar buffer: no op places tiles there
    case MemorySpace::RightScale:
    case MemorySpace::ScalarLocal: return 0;
  }
  return 0;
}

std::optional<ChipSpec> chip_for_platform(const std::string& platform) {
  for (auto& c : chips())
    if (c.platform == platform) return c;
  return std::nullopt;
}

std::vector<std::string> simulated_platforms() {
  std::vector<std::string> out;
  for (auto& c : chips()) out.push_back(c.platform);
  return out;
}

bool is_hardware_platform(const std::string& platform) { return platform == "a2a3" || platform == "a5"; }

}  // namespace pypto::isa
