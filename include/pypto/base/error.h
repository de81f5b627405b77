// User-facing errors: every error names the user's file and line, the object, the limit
// broken and the fix. Internal invariants use PYPTO_CHECK, which reports a compiler bug.
#pragma once
#include <stdexcept>
#include <string>

namespace pypto {

// A position in the user's source file; line 0 means "unknown".
struct Span {
  std::string file;
  int line = 0;
  int col = 0;
  std::string str() const { return line > 0 ? file + ":" + std::to_string(line) : std::string("<unknown>"); }
};

enum class ErrorKind { kType, kValue, kCapacity, kRuntime, kParse, kPlatform, kInternal };

// An error the user can act on. `what()` is "file:line: message\n  fix: ...".
class PyptoError : public std::runtime_error {
 public:
  PyptoError(ErrorKind kind, const Span& span, const std::string& message, const std::string& fix = "")
      : std::runtime_error(format(span, message, fix)), kind_(kind), span_(span) {}
  ErrorKind kind() const { return kind_; }
  const Span& span() const { return span_; }

 private:
  static std::string format(const Span& span, const std::string& message, const std::string& fix) {
    std::string out = span.line > 0 ? span.str() + ": " + message : message;
    if (!fix.empty()) out += "\n  fix: " + fix;
    return out;
  }
  ErrorKind kind_;
  Span span_;
};

// Throws a user error of `kind`.
[[noreturn]] inline void fail(ErrorKind kind, const Span& span, const std::string& message,
                              const std::string& fix = "") {
  throw PyptoError(kind, span, message, fix);
}

}  // namespace pypto

// Compiler bug: an invariant that user input cannot break.
#define PYPTO_CHECK(cond, msg)                                                                       \
  do {                                                                                               \
    if (!(cond))                                                                                     \
      throw ::pypto::PyptoError(::pypto::ErrorKind::kInternal, {},                                   \
                                std::string("internal compiler error: ") + (msg) + " (" __FILE__ ":" + \
                                    std::to_string(__LINE__) + "); please report it");               \
  } while (0)
