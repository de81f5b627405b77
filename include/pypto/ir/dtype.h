// Data types, memory spaces and the other small enums of the PyPTO language.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace pypto {

enum class DataType : uint8_t { BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, FP16, BF16, FP32, INDEX, TASK_ID };

// Size of one element in bytes (BOOL is one byte; INDEX is 64-bit).
int dtype_bytes(DataType t);
// The DSL spelling without the `pl.` prefix, e.g. "FP32".
const char* dtype_name(DataType t);
std::optional<DataType> dtype_from_name(const std::string& name);
bool dtype_is_float(DataType t);
bool dtype_is_int(DataType t);  // signed or unsigned integers and INDEX (not BOOL)
bool dtype_is_signed(DataType t);

// Where a value lives. DDR is global memory; the rest are on-chip buffers.
enum class MemorySpace : uint8_t { DDR, Vec, Mat, Left, Right, Acc, Bias };
const char* memory_space_name(MemorySpace m);
std::optional<MemorySpace> memory_space_from_name(const std::string& name);

enum class PadValue : uint8_t { null, zero, max, min };
const char* pad_value_name(PadValue p);
std::optional<PadValue> pad_value_from_name(const std::string& name);

// Graph: a fragment recorded under host_build_graph (PyPTO); here it is kept and printed and
// runs like an Orchestration function.
enum class FunctionType : uint8_t { Opaque, Orchestration, InCore, AIC, AIV, Group, Spmd, Inline, Graph };
const char* function_type_name(FunctionType f);
std::optional<FunctionType> function_type_from_name(const std::string& name);

enum class Level : uint8_t { AIV, AIC, CORE_GROUP, CHIP, HOST };
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
