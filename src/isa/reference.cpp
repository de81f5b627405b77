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

}  // namespace pypto::isa
