// The instruction stream: what codegen produces from an InCore function (a Kernel) or an
// orchestration function (a HostProgram), and what every engine executes. This is the
// contract between the compiler and the engines.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pypto/base/attrs.h"
#include "pypto/base/dtype.h"
#include "pypto/base/error.h"

namespace pypto::isa {

enum class Pipe : uint8_t { S, V, MTE1, MTE2, MTE3, M, FIX };
const char* pipe_name(Pipe p);

// A scalar operand: an immediate or a scalar register of the kernel.
struct Scalar {
  enum Kind : uint8_t { kImm, kReg } kind = kImm;
  int reg = -1;
  bool is_float = false;
  int64_t i = 0;
  double f = 0.0;
  static Scalar imm(int64_t v) { Scalar s; s.i = v; s.f = static_cast<double>(v); return s; }
  static Scalar immf(double v) { Scalar s; s.is_float = true; s.f = v; s.i = static_cast<int64_t>(v); return s; }
  static Scalar r(int reg_index) { Scalar s; s.kind = kReg; s.reg = reg_index; return s; }
};

// One tile buffer of a kernel, placed by memory planning.
struct TileDesc {
  std::string name;
  DataType dtype = DataType::FP32;
  MemorySpace memory = MemorySpace::Vec;
  int64_t rows = 0, cols = 0;
  int64_t addr = 0;                      // byte offset inside the core's buffer of `memory`
  Scalar valid_rows, valid_cols;         // default: equal to rows/cols (set by codegen)
  PadValue pad = PadValue::null;
};

struct Operand {
  enum Kind : uint8_t { kTile, kTensor, kScalar, kScalarList } kind = kScalar;
  int index = -1;                 // kTile: Kernel::tiles index; kTensor: parameter/tensor slot index
  Scalar scalar;                  // kScalar
  std::vector<Scalar> list;       // kScalarList (offsets)
  static Operand tile(int i) { Operand o; o.kind = kTile; o.index = i; return o; }
  static Operand tensor(int i) { Operand o; o.kind = kTensor; o.index = i; return o; }
  static Operand scalar_of(Scalar s) { Operand o; o.kind = kScalar; o.scalar = s; return o; }
  static Operand list_of(std::vector<Scalar> l) { Operand o; o.kind = kScalarList; o.list = std::move(l); return o; }
};

enum class InstrKind : uint8_t {
  kTile,        // a PTO tile instruction: mnemonic, outs, ins, attrs
  kScalarBin,   // dst_reg = a <op> b   (pipe S)
  kScalarMov,   // dst_reg = a
  kScalarRead,  // dst_reg = tensor[ins[0]][offsets ins[1]]  (pl.tensor.read)
  kLoopBegin,   // reg = start; if !(reg < stop) jump to `jump` (past the matching kLoopEnd)
  kLoopEnd,     // reg += step; if reg < stop jump to `jump` (first instruction of the body)
  kIf,          // if !cond jump to `jump` (the matching kElse + 1, or kEndIf)
  kElse,        // jump to `jump` (the matching kEndIf)
  kEndIf,
  kWhileBegin,  // where each iteration of a while loop starts (its condition's scalar code follows); jump = past the kWhileEnd
  kWhileCond,   // if !a jump to `jump` (past the matching kWhileEnd); only scalar code lies between kWhileBegin and it
  kWhileEnd,    // jump to `jump` (the matching kWhileBegin)
  kCall,        // HostProgram only: submit kernel `callee` as a task with operands `ins`
  kAllocTensor, // HostProgram only: tensor slot outs[0] = new tensor (dtype, shape attrs)
  kArrayGet,    // HostProgram only: dst_reg = arrays[attr "array"][a]
  kArraySet,    // HostProgram only: arrays[attr "array"][a] = b
  kScalarWrite, // tensor[ins[0]][offsets ins[1]] = scalar ins[2]  (pl.tensor.write)
  kScalarCast,  // dst_reg = a converted to attrs["dtype"] (scalar pl.cast; rule: pypto/base/scalar_cast.h)  (pipe S)
  kTensorView,  // HostProgram only: tensor slot outs[0] = a view of slot ins[0] (no copy); attrs "view" names
                // the kind: "slice" (ins[1] offsets, ins[2] extents, attr "drop_dims"), "reshape" (ins[1] the
                // new extents), "transpose" (attr "axes" = {a1, a2}) or "reinterpret" (attr "dtype", ins[1]
                // the new extents); scalars are registers or immediates, checked against the parent at run time
  kTensorCopy,  // HostProgram only: tensor slot outs[0] (a view) = a copy of slot ins[0], once every task
                // before it has finished (orchestration-level `y[a:b, :] = t` of a tensor t)
};

// Task ids in registers and TASK_ID arrays are launch numbers counted from 1 in each run;
// 0 names no task (the value of a TASK_ID array element never written).
constexpr int64_t kNoTask = 0;

// One run of a while loop may take at most this many iterations; the engines report a loop
// that runs longer as an error at the loop's line (a program never hangs).
constexpr int64_t kMaxWhileIterations = int64_t{1} << 24;

struct Instr {
  InstrKind kind = InstrKind::kTile;
  std::string mnemonic;           // kTile: "TADD", "TLOAD", ...
  std::vector<Operand> outs, ins;
  Attrs attrs;                // e.g. {"cmp": "LT"}, {"mode": "round"}, {"dtype": FP16}
  int dst_reg = -1;               // scalar instructions, kLoopBegin/End loop register
  BinaryOp sop = BinaryOp::Add;
  Scalar a, b;                    // scalar operands; kLoopBegin: a=start, b=stop; kIf, kWhileCond: a=cond
  Scalar step;                    // kLoop*: step
  int jump = -1;                  // control-flow target pc
  int callee = -1;                // kCall: index into HostProgram::kernels
  Span span;                      // the user's source line this instruction came from
};

// The two tensor dimensions a TLOAD / TSTORE tile's rows and columns step: the attribute
// "dims" = [row_dim, col_dim] (a strided 2-D box of any two dims: a kernel view such as
// key_cache[blk, :, kvh, :]), else the tensor's last two (a 1-D tensor: row_dim -1). The
// element steps are the tensor's strides of those dims; every other dim stays at its offset.
inline std::pair<int, int> box_dims(const Instr& in, int rank) {
  auto it = in.attrs.find("dims");
  if (it != in.attrs.end())
    if (auto* d = std::get_if<std::vector<int64_t>>(&it->second); d && d->size() == 2)
      return {static_cast<int>((*d)[0]), static_cast<int>((*d)[1])};
  return {rank >= 2 ? rank - 2 : -1, rank - 1};
}

// A pl.array of the orchestration: `size` scalars of `dtype`, zero (no task) at the start
// of every run.
struct ArrayDesc {
  std::string name;
  DataType dtype = DataType::INDEX;
  int64_t size = 0;
};

struct ParamDesc {
  std::string name;
  bool is_tensor = true;
  DataType dtype = DataType::FP32;
  std::vector<int64_t> shape;     // tensors: static shape (-1 for a dynamic dimension)
  ParamDirection dir = ParamDirection::In;
  std::vector<int64_t> stride;    // tensors: declared element strides (pl.TensorView); empty = any
  bool dn = false;                // the declared layout was pl.TensorLayout.DN
};

// Where a mixed task's part of a cluster runs: the cube core or one of its two vector cores.
enum class PartRole : uint8_t { AIC, AIV0, AIV1 };
const char* part_role_name(PartRole r);  // "AIC", "AIV 0", "AIV 1"

// One argument of a part kernel: a parameter of the group kernel, or a constant.
struct PartArg {
  int param = -1;      // >= 0: index into the group kernel's params
  Scalar constant;     // param < 0: this immediate (scalar parameters only)
};

// One kernel of a mixed (Group) task: which kernel, on which core of the cluster, and how
// its parameters are filled from the group's arguments (one PartArg per parameter).
struct KernelPart {
  int kernel = -1;                 // index into HostProgram::kernels (an AIC or AIV kernel)
  PartRole role = PartRole::AIC;
  std::vector<PartArg> args;
};

// One InCore function compiled for a core. Tensor operands index `params`; scalar
// parameters are preloaded into registers 0..(number of scalar params - 1) in order.
// A Group kernel (core == FunctionType::Group) has no code of its own: it is a mixed task
// whose `parts` (1 AIC + 1 or 2 AIV kernels) run concurrently on one cluster and exchange
// tiles through the cluster's FIFOs (TPUSH / TPOP / TFREE).
struct Kernel {
  std::string name;
  FunctionType core = FunctionType::AIV;   // AIV (vector) or AIC (cube) work, or Group (mixed)
  std::vector<KernelPart> parts;           // Group kernels only
  std::vector<ParamDesc> params;
  std::vector<TileDesc> tiles;
  int num_regs = 0;
  std::vector<bool> reg_is_float;          // per register: holds a float (else an integer)
  std::vector<Instr> code;
  std::string pto_text;                    // the kernel's `.pto` assembly
};

// The orchestration: a sequence of kernel calls (tasks), tensor allocations and scalar
// control flow. Tensor slots 0..params.size()-1 are the parameters; later slots are
// tensors created with pl.create_tensor.
struct HostProgram {
  std::string name;
  std::vector<ParamDesc> params;
  std::vector<ParamDesc> tensors;          // every tensor slot (params first)
  int num_regs = 0;
  std::vector<bool> reg_is_float;
  std::vector<Instr> code;
  std::vector<Kernel> kernels;
  std::vector<ArrayDesc> arrays;           // pl.array.create(...) of the orchestration
  std::vector<int> returns;                // tensor slots returned
};

}  // namespace pypto::isa
