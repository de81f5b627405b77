// Values that the IR and the instruction stream share: the scalar operators (a scalar
// instruction's operation is the IR's BinaryOp) and the compile-time attributes of an op call
// or an instruction ({"cmp": "LT"}, {"mode": "round"}, {"dtype": FP16}).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "pypto/base/dtype.h"

namespace pypto {

enum class BinaryOp : uint8_t { Add, Sub, Mul, Div, FloorDiv, Mod, Min, Max, Eq, Ne, Lt, Le, Gt, Ge, And, Or };

// A keyword attribute of an op call: a compile-time value that is not an IR expression.
using AttrValue = std::variant<int64_t, double, bool, std::string, DataType, MemorySpace, PadValue, std::vector<int64_t>>;
using Attrs = std::map<std::string, AttrValue>;

}  // namespace pypto
