// The reference library's call helpers (pypto/isa/reference.h).
#include "pypto/isa/reference.h"

#include <variant>

#include "pypto/base/error.h"

namespace pypto::isa {

std::string TileCall::attr_string(const std::string& key, const std::string& fallback) const {
  auto it = instr.attrs.find(key);
  if (it == instr.attrs.end()) return fallback;
  if (auto* s = std::get_if<std::string>(&it->second)) return *s;
  fail_runtime("attribute '" + key + "' of " + instr.mnemonic + " must be a string");
}

void TileCall::fail_runtime(const std::string& message, const std::string& fix) const {
  fail(ErrorKind::kRuntime, instr.span, instr.mnemonic + ": " + message, fix);
}

void TileCall::require_covers(const TileRef& src, int64_t rows, int64_t cols) const {
  if (rows > src.rows || cols > src.cols)
    fail_runtime("source tile '" + src.name + "' (" + std::to_string(src.rows) + "x" + std::to_string(src.cols) +
                     ") is smaller than the " + std::to_string(rows) + "x" + std::to_string(cols) + " region it is read over",
                 "give the tiles matching shapes");
}

int64_t TileCall::checked_index(const TileRef& idx, int64_t r, int64_t c, int64_t limit,
                                const std::string& into) const {
  const int64_t i = idx.get_i(r, c);
  if (i < 0 || i >= limit)
    fail_runtime("index " + std::to_string(i) + " at (" + std::to_string(r) + ", " + std::to_string(c) + ") of '" +
                     idx.name + "' is outside " + into + " (size " + std::to_string(limit) + ")",
                 "keep indices in [0, size)");
  return i;
}

}  // namespace pypto::isa
