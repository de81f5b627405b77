// Names and sizes of the language's enums; the only place their spellings live.
#include "pypto/ir/dtype.h"

#include <array>

namespace pypto {
namespace {

template <typename E, size_t N>
std::optional<E> lookup(const std::array<const char*, N>& names, const std::string& name) {
  for (size_t i = 0; i < N; ++i)
    if (name == names[i]) return static_cast<E>(i);
  return std::nullopt;
}

// TASK_ID: a handle of a launched task in the orchestration (scalars and pl.array elements
// only; no tensor or tile holds task ids).
constexpr std::array<const char*, 14> kDtypeNames = {"BOOL",   "INT8",   "INT16", "INT32", "INT64",
                                                     "UINT8",  "UINT16", "UINT32", "UINT64", "FP16",
                                                     "BF16",   "FP32",   "INDEX", "TASK_ID"};
constexpr std::array<int, 14> kDtypeBytes = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8};
constexpr std::array<const char*, 7> kMemNames = {"DDR", "Vec", "Mat", "Left", "Right", "Acc", "Bias"};
constexpr std::array<const char*, 4> kPadNames = {"null", "zero", "max", "min"};
constexpr std::array<const char*, 9> kFuncNames = {"Opaque", "Orchestration", "InCore", "AIC",  "AIV",
                                                   "Group",  "Spmd",          "Inline", "Graph"};
constexpr std::array<const char*, 5> kLevelNames = {"AIV", "AIC", "CORE_GROUP", "CHIP", "HOST"};
constexpr std::array<const char*, 3> kRoleNames = {"Orchestrator", "SubWorker", "Worker"};
constexpr std::array<const char*, 3> kDirNames = {"In", "Out", "InOut"};

}  // namespace

int dtype_bytes(DataType t) { return kDtypeBytes[static_cast<size_t>(t)]; }
const char* dtype_name(DataType t) { return kDtypeNames[static_cast<size_t>(t)]; }
std::optional<DataType> dtype_from_name(const std::string& n) { return lookup<DataType>(kDtypeNames, n); }
bool dtype_is_float(DataType t) { return t == DataType::FP16 || t == DataType::BF16 || t == DataType::FP32; }
bool dtype_is_int(DataType t) { return !dtype_is_float(t) && t != DataType::BOOL && t != DataType::TASK_ID; }
bool dtype_is_signed(DataType t) {
  return t == DataType::INT8 || t == DataType::INT16 || t == DataType::INT32 || t == DataType::INT64 ||
         t == DataType::INDEX || dtype_is_float(t);
}

const char* memory_space_name(MemorySpace m) { return kMemNames[static_cast<size_t>(m)]; }
std::optional<MemorySpace> memory_space_from_name(const std::string& n) {
  return lookup<MemorySpace>(kMemNames, n);
}
const char* pad_value_name(PadValue p) { return kPadNames[static_cast<size_t>(p)]; }
std::optional<PadValue> pad_value_from_name(const std::string& n) { return lookup<PadValue>(kPadNames, n); }
const char* function_type_name(FunctionType f) { return kFuncNames[static_cast<size_t>(f)]; }
std::optional<FunctionType> function_type_from_name(const std::string& n) {
  return lookup<FunctionType>(kFuncNames, n);
}
const char* level_name(Level l) { return kLevelNames[static_cast<size_t>(l)]; }
std::optional<Level> level_from_name(const std::string& n) { return lookup<Level>(kLevelNames, n); }
const char* role_name(Role r) { return kRoleNames[static_cast<size_t>(r)]; }
std::optional<Role> role_from_name(const std::string& n) { return lookup<Role>(kRoleNames, n); }
const char* param_direction_name(ParamDirection d) { return kDirNames[static_cast<size_t>(d)]; }

}  // namespace pypto
