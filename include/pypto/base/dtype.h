// Data types, memory spaces and the other small enums of the PyPTO language.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace pypto {

// FP8E4M3FN .. UINT4: PyPTO's narrow dtypes (FP8 formats, the MX scale type FP8E8M0, HiFloat
// HF8/HF4 and the 4-bit FP4/INT4/UINT4). They are accepted in annotations and printed and
// parsed; no op of this chip model computes on them (dtype_storage_only; docs/language.md).
enum class DataType : uint8_t {
  BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, FP16, BF16, FP32, INDEX, TASK_ID,
  FP8E4M3FN, FP8E5M2, FP8E8M0, FP4, HF4, HF8, INT4, UINT4
};
constexpr int kDataTypeCount = 22;

// Size of one element in bytes (BOOL is one byte; INDEX is 64-bit; a 4-bit dtype counts 1:
// use dtype_bits for its size).
int dtype_bytes(DataType t);
// Size of one element in bits (4 for FP4, HF4, INT4, UINT4).
int dtype_bits(DataType t);
// A dtype that annotations accept but no op computes on here (the narrow dtypes above).
bool dtype_storage_only(DataType t);
// The DSL spelling without the `pl.` prefix, e.g. "FP32".
const char* dtype_name(DataType t);
std::optional<DataType> dtype_from_name(const std::string& name);
bool dtype_is_float(DataType t);
bool dtype_is_int(DataType t);  // signed or unsigned integers and INDEX (not BOOL)
bool dtype_is_signed(DataType t);

// Where a value lives. DDR is global memory; the rest are on-chip buffers.
// LeftScale / RightScale: the MX scale buffers of A5's matmul_mx; ScalarLocal: a core's
// scalar memory. Accepted in annotations; no op of this chip model uses them.
enum class MemorySpace : uint8_t { DDR, Vec, Mat, Left, Right, Acc, Bias, LeftScale, RightScale, ScalarLocal };
constexpr int kMemorySpaceCount = 10;
const char* memory_space_name(MemorySpace m);
std::optional<MemorySpace> memory_space_from_name(const std::string& name);

enum class PadValue : uint8_t { null, zero, max, min };

// The scalar cast target code (ScalarCastTarget, base/scalar_cast.h) of a dtype; -1 if the
// scalar unit has none (TASK_ID and the storage-only dtypes).
int scalar_cast_target(DataType d);
const char* pad_value_name(PadValue p);
std::optional<PadValue> pad_value_from_name(const std::string& name);

// Graph: a fragment recorded under host_build_graph (PyPTO); here it is kept and printed and
// runs like an Orchestration function.
enum class FunctionType : uint8_t { Opaque, Orchestration, InCore, AIC, AIV, Group, Spmd, Inline, Graph };
const char* function_type_name(FunctionType f);
std::optional<FunctionType> function_type_from_name(const std::string& name);

// The machine hierarchy of PyPTO. CHIP_DIE .. GLOBAL are the levels above a core group of the
// distributed runtime; level_from_name also reads PyPTO's hardware aliases (L2CACHE = CHIP_DIE,
// PROCESSOR = CHIP, UMA = HOST, NODE = CLUSTER_0, POD = CLUSTER_1, CLOS1 = CLUSTER_2, CLOS2 = GLOBAL).
enum class Level : uint8_t { AIV, AIC, CORE_GROUP, CHIP, HOST, CHIP_DIE, CLUSTER_0, CLUSTER_1, CLUSTER_2, GLOBAL };
constexpr int kLevelCount = 10;
// PyPTO's alias names of levels: {alias, level}.
struct LevelAlias {
  const char* name;
  Level level;
};
extern const LevelAlias kLevelAliases[7];
const char* level_name(Level l);
std::optional<Level> level_from_name(const std::string& name);

// The role of a function at its level (`@pl.function(role=pl.Role.Orchestrator)`); a hint kept
// in the IR (one chip: no sub-workers are scheduled differently).
enum class Role : uint8_t { Orchestrator, SubWorker, Worker };
const char* role_name(Role r);
std::optional<Role> role_from_name(const std::string& name);

enum class ParamDirection : uint8_t { In, Out, InOut };
const char* param_direction_name(ParamDirection d);

}  // namespace pypto
