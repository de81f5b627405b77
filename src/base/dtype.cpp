// Names and sizes of the language's enums; the only place their spellings live.
#include "pypto/base/dtype.h"

#include <array>

#include "pypto/base/scalar_cast.h"

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
constexpr std::array<const char*, kDataTypeCount> kDtypeNames = {
    "BOOL",  "INT8", "INT16",     "INT32",   "INT64",   "UINT8", "UINT16", "UINT32", "UINT64", "FP16", "BF16",
    "FP32",  "INDEX", "TASK_ID", "FP8E4M3FN", "FP8E5M2", "FP8E8M0", "FP4", "HF4",    "HF8",    "INT4", "UINT4"};
constexpr std::array<int, kDataTypeCount> kDtypeBits = {8, 8, 16, 32, 64, 8, 16, 32, 64, 16, 16,
                                                        32, 64, 64, 8, 8, 8, 4, 4, 8, 4, 4};
constexpr std::array<const char*, kMemorySpaceCount> kMemNames = {"DDR", "Vec",       "Mat",        "Left",
                                                                  "Right", "Acc",     "Bias",       "LeftScale",
                                                                  "RightScale", "ScalarLocal"};
constexpr std::array<const char*, 4> kPadNames = {"null", "zero", "max", "min"};
constexpr std::array<const char*, 9> kFuncNames = {"Opaque", "Orchestration", "InCore", "AIC",  "AIV",
                                                   "Group",  "Spmd",          "Inline", "Graph"};
constexpr std::array<const char*, kLevelCount> kLevelNames = {"AIV",      "AIC",       "CORE_GROUP", "CHIP",
                                                             "HOST",     "CHIP_DIE",  "CLUSTER_0",  "CLUSTER_1",
                                                             "CLUSTER_2", "GLOBAL"};
constexpr std::array<const char*, 3> kRoleNames = {"Orchestrator", "SubWorker", "Worker"};
constexpr std::array<const char*, 3> kDirNames = {"In", "Out", "InOut"};

}  // namespace

const LevelAlias kLevelAliases[7] = {{"L2CACHE", Level::CHIP_DIE}, {"PROCESSOR", Level::CHIP},
                                     {"UMA", Level::HOST},           {"NODE", Level::CLUSTER_0},
                                     {"POD", Level::CLUSTER_1},      {"CLOS1", Level::CLUSTER_2},
                                     {"CLOS2", Level::GLOBAL}};

int dtype_bits(DataType t) { return kDtypeBits[static_cast<size_t>(t)]; }
int dtype_bytes(DataType t) { return (dtype_bits(t) + 7) / 8; }
// FP8E4M3FN / FP8E5M2 tiles load, store and convert (pl.cast; op_registry.cpp allows just
// those ops); the other narrow dtypes are storage only.
bool dtype_storage_only(DataType t) {
  return static_cast<int>(t) >= static_cast<int>(DataType::FP8E4M3FN) && t != DataType::FP8E4M3FN &&
         t != DataType::FP8E5M2;
}
const char* dtype_name(DataType t) { return kDtypeNames[static_cast<size_t>(t)]; }
std::optional<DataType> dtype_from_name(const std::string& n) { return lookup<DataType>(kDtypeNames, n); }
bool dtype_is_float(DataType t) {
  return t == DataType::FP16 || t == DataType::BF16 || t == DataType::FP32 || t == DataType::FP8E4M3FN ||
         t == DataType::FP8E5M2 || t == DataType::FP8E8M0 || t == DataType::HF8 || t == DataType::FP4 ||
         t == DataType::HF4;
}
bool dtype_is_int(DataType t) {
  return !dtype_is_float(t) && t != DataType::BOOL && t != DataType::TASK_ID && !dtype_storage_only(t);
}
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
std::optional<Level> level_from_name(const std::string& n) {
  for (const LevelAlias& a : kLevelAliases)
    if (n == a.name) return a.level;
  return lookup<Level>(kLevelNames, n);
}
const char* role_name(Role r) { return kRoleNames[static_cast<size_t>(r)]; }
std::optional<Role> role_from_name(const std::string& n) { return lookup<Role>(kRoleNames, n); }
const char* param_direction_name(ParamDirection d) { return kDirNames[static_cast<size_t>(d)]; }

int scalar_cast_target(DataType d) {
  switch (d) {
    case DataType::BOOL: return kCastBool;
    case DataType::INT8: return kCastI8;
    case DataType::INT16: return kCastI16;
    case DataType::INT32: return kCastI32;
    case DataType::INT64:
    case DataType::INDEX: return kCastI64;
    case DataType::UINT8: return kCastU8;
    case DataType::UINT16: return kCastU16;
    case DataType::UINT32: return kCastU32;
    case DataType::UINT64: return kCastU64;
    case DataType::FP16: return kCastF16;
    case DataType::BF16: return kCastBF16;
    case DataType::FP32: return kCastF32;
    default: return -1;
  }
}

}  // namespace pypto
