// Structural validation of instruction streams (see validate.h). Engines assume what this
// checks: operands match the instruction table, tiles lie inside their buffers, registers
// exist, and control flow is properly nested with counted loops that always make progress
// (a while loop ends when its condition turns false, as on the chip).
#include "pypto/isa/validate.h"

#include <cctype>
#include <functional>
#include <limits>

#include "pypto/isa/instructions.h"

namespace pypto::isa {
namespace {

constexpr int64_t kMaxDim = int64_t{1} << 24;

class Validator {
 public:
  Validator(std::string what, const std::vector<Instr>& code, int num_regs, const std::vector<ParamDesc>& params,
            int tensor_slots, const ChipSpec& chip)
      : what_(std::move(what)), code_(code), num_regs_(num_regs), params_(params), tensor_slots_(tensor_slots), chip_(chip) {}

  void check_tiles(const std::vector<TileDesc>& tiles) {
    tiles_ = &tiles;
    for (size_t i = 0; i < tiles.size(); ++i) {
      const TileDesc& t = tiles[i];
      std::string who = "tile #" + std::to_string(i) + " '" + t.name + "'";
      if (t.memory == MemorySpace::DDR) bad({}, who + " is placed in DDR; tiles live in on-chip buffers");
      if (t.rows < 0 || t.cols < 0 || t.rows > kMaxDim || t.cols > kMaxDim)
        bad({}, who + " has shape " + std::to_string(t.rows) + "x" + std::to_string(t.cols));
      const int64_t bytes = t.rows * t.cols * dtype_bytes(t.dtype);
      if (t.addr < 0 || t.addr > chip_.capacity(t.memory) || bytes > chip_.capacity(t.memory) - t.addr)
        bad({}, who + " (" + std::to_string(bytes) + " B at " + std::to_string(t.addr) + ") lies outside " +
                    memory_space_name(t.memory) + " (" + std::to_string(chip_.capacity(t.memory)) + " B on " +
                    chip_.platform + ")");
      scalar(t.valid_rows, {});
      scalar(t.valid_cols, {});
    }
  }

  void check_code(bool host) {
    const int n = static_cast<int>(code_.size());
    std::vector<int> open;  // indices of open kLoopBegin / kIf / kElse / kWhileBegin / kWhileCond
    for (int pc = 0; pc < n; ++pc) {
      const Instr& in = code_[pc];
      const Span& sp = in.span;
      switch (in.kind) {
        case InstrKind::kTile: tile_instr(in); break;
        case InstrKind::kScalarBin:
          write_reg(in.dst_reg, sp, open);
          scalar(in.a, sp);
          scalar(in.b, sp);
          if (static_cast<int>(in.sop) > static_cast<int>(BinaryOp::Or)) bad(sp, "unknown scalar operator");
          break;
        case InstrKind::kScalarMov:
          write_reg(in.dst_reg, sp, open);
          scalar(in.a, sp);
          break;
        case InstrKind::kScalarCast: {
          write_reg(in.dst_reg, sp, open);
          scalar(in.a, sp);
          auto it = in.attrs.find("dtype");
          const DataType* d = it == in.attrs.end() ? nullptr : std::get_if<DataType>(&it->second);
          if (!d || scalar_cast_target(*d) < 0) bad(sp, "scalar cast without a target dtype the scalar unit has");
          break;
        }
        case InstrKind::kScalarWrite:
          if (in.ins.size() != 3 || in.ins[1].kind != Operand::kScalarList || in.ins[2].kind != Operand::kScalar)
            bad(sp, "scalar write needs (tensor, indices, value)");
          element_operand(in.ins[0], sp);
          for (auto& s : in.ins[1].list) scalar(s, sp);
          scalar(in.ins[2].scalar, sp);
          break;
        case InstrKind::kScalarRead:
          write_reg(in.dst_reg, sp, open);
          if (in.ins.size() != 2 || in.ins[1].kind != Operand::kScalarList) bad(sp, "scalar read needs (tensor, indices)");
          element_operand(in.ins[0], sp);
          for (auto& s : in.ins[1].list) scalar(s, sp);
          break;
        case InstrKind::kLoopBegin:
          write_reg(in.dst_reg, sp, open);
          scalar(in.a, sp);
          scalar(in.b, sp);
          scalar(in.step, sp);
          open.push_back(pc);
          break;
        case InstrKind::kLoopEnd: {
          if (open.empty() || code_[open.back()].kind != InstrKind::kLoopBegin) bad(sp, "loop end without a loop begin");
          const int begin = open.back();
          open.pop_back();
          if (code_[begin].jump != pc + 1 || in.jump != begin + 1 || in.dst_reg != code_[begin].dst_reg)
            bad(sp, "loop begin at " + std::to_string(begin) + " and end at " + std::to_string(pc) + " do not match");
          break;
        }
        case InstrKind::kIf:
          scalar(in.a, sp);
          open.push_back(pc);
          break;
        case InstrKind::kElse: {
          if (open.empty() || code_[open.back()].kind != InstrKind::kIf) bad(sp, "else without an if");
          if (code_[open.back()].jump != pc + 1) bad(sp, "if at " + std::to_string(open.back()) + " does not jump to its else");
          open.back() = pc;
          break;
        }
        case InstrKind::kEndIf: {
          if (open.empty() || (code_[open.back()].kind != InstrKind::kIf && code_[open.back()].kind != InstrKind::kElse))
            bad(sp, "end-if without an if");
          if (code_[open.back()].jump != pc) bad(sp, "if/else at " + std::to_string(open.back()) + " does not jump to its end");
          open.pop_back();
          break;
        }
        case InstrKind::kWhileBegin:
          open.push_back(pc);
          break;
        case InstrKind::kWhileCond: {
          // Only the condition's scalar code lies between the loop's begin and this check.
          if (open.empty() || code_[open.back()].kind != InstrKind::kWhileBegin) bad(sp, "while condition without a while begin");
          for (int k = open.back() + 1; k < pc; ++k) {
            const InstrKind c = code_[k].kind;
            if (c != InstrKind::kScalarBin && c != InstrKind::kScalarMov && c != InstrKind::kScalarRead && c != InstrKind::kScalarCast)
              bad(sp, "instruction " + std::to_string(k) + " between a while begin and its condition is not scalar code");
          }
          scalar(in.a, sp);
          if (in.jump != code_[open.back()].jump)
            bad(sp, "while condition at " + std::to_string(pc) + " does not jump past its loop end");
          open.back() = pc;
          break;
        }
        case InstrKind::kWhileEnd: {
          if (open.empty() || code_[open.back()].kind != InstrKind::kWhileCond) bad(sp, "while end without a while condition");
          const int cond = open.back();
          open.pop_back();
          int begin = cond - 1;
          while (begin >= 0 && code_[begin].kind != InstrKind::kWhileBegin) --begin;
          if (begin < 0 || in.jump != begin || code_[begin].jump != pc + 1)
            bad(sp, "while begin at " + std::to_string(begin) + " and end at " + std::to_string(pc) + " do not match");
          break;
        }
        case InstrKind::kCall:
        case InstrKind::kAllocTensor:
        case InstrKind::kArrayGet:
        case InstrKind::kArraySet:
        case InstrKind::kTensorView:
        case InstrKind::kTensorCopy:
          if (!host) bad(sp, "kernel code cannot call kernels, allocate tensors or use orchestration arrays");
          host_instr_(in);
          break;
        default: bad(sp, "unknown instruction kind " + std::to_string(static_cast<int>(in.kind)));
      }
    }
    if (!open.empty()) bad(code_[open.back()].span, "a loop or if is not closed");
  }

  std::function<void(const Instr&)> host_instr_ = [](const Instr&) {};

  [[noreturn]] void bad(const Span& span, const std::string& msg) const {
    fail(ErrorKind::kRuntime, span, "malformed instruction stream in " + what_ + ": " + msg,
         "instruction streams come from the compiler; if you built this one by hand, fix it as described");
  }

  void scalar(const Scalar& s, const Span& sp) const {
    if (s.kind == Scalar::kReg && (s.reg < 0 || s.reg >= num_regs_))
      bad(sp, "register r" + std::to_string(s.reg) + " does not exist (" + std::to_string(num_regs_) + " registers)");
  }

  // The operand of a scalar read / write: a tensor, or a tile of the kernel (pl.tile.read / write).
  void element_operand(const Operand& o, const Span& sp) const {
    if (o.kind == Operand::kTile) {
      if (!tiles_ || o.index < 0 || o.index >= static_cast<int>(tiles_->size()))
        bad(sp, "operand is not a tile of the kernel (tile " + std::to_string(o.index) + ")");
      return;
    }
    tensor_operand(o, sp);
  }

  void tensor_operand(const Operand& o, const Span& sp) const {
    if (o.kind != Operand::kTensor || o.index < 0 || o.index >= tensor_slots_)
      bad(sp, "operand is not a valid tensor (slot " + std::to_string(o.index) + ")");
    if (o.index < static_cast<int>(params_.size()) && !params_[o.index].is_tensor)
      bad(sp, "parameter #" + std::to_string(o.index) + " '" + params_[o.index].name + "' is a scalar, not a tensor");
  }

 private:
  void write_reg(int reg, const Span& sp, const std::vector<int>& open) const {
    if (reg < 0 || reg >= num_regs_) bad(sp, "register r" + std::to_string(reg) + " does not exist");
    // A loop's counter is written only by its own begin/end, so every loop makes progress.
    for (int o : open)
      if (code_[o].kind == InstrKind::kLoopBegin && code_[o].dst_reg == reg)
        bad(sp, "writes r" + std::to_string(reg) + ", the counter of the enclosing loop at " + std::to_string(o));
  }

  void tile_instr(const Instr& in) const {
    const InstrDef* def = find_instr(in.mnemonic);
    if (!def) bad(in.span, "unknown PTO instruction '" + in.mnemonic + "'");
    const int n_in = static_cast<int>(in.ins.size());
    if (static_cast<int>(in.outs.size()) != def->num_outs() || n_in < def->min_ins() || n_in > def->max_ins())
      bad(in.span, in.mnemonic + " takes " + std::to_string(def->num_outs()) + " outputs and " +
                       std::to_string(def->min_ins()) + ".." + std::to_string(def->max_ins()) + " inputs, got " +
                       std::to_string(in.outs.size()) + " and " + std::to_string(n_in));
    auto check = [&](const Operand& o, char sig) {
      switch (std::toupper(sig)) {
        case 'T':
          if (o.kind != Operand::kTile || !tiles_ || o.index < 0 || o.index >= static_cast<int>(tiles_->size()))
            bad(in.span, in.mnemonic + ": operand is not a valid tile (#" + std::to_string(o.index) + ")");
          break;
        case 'G': tensor_operand(o, in.span); break;
        case 'S':
          if (o.kind != Operand::kScalar) bad(in.span, in.mnemonic + ": operand must be a scalar");
          scalar(o.scalar, in.span);
          break;
        case 'L':
          if (o.kind != Operand::kScalarList) bad(in.span, in.mnemonic + ": operand must be a list of scalars");
          for (auto& s : o.list) scalar(s, in.span);
          // Offsets into a tile (TEXTRACT, TINSERT, TSUBVIEW): tiles are 2-D, so (row, col).
          // Offsets into a tensor have one entry per dimension, checked against the tensor at run time.
          if ((def->outs_sig + def->ins_sig).find('G') == std::string::npos && o.list.size() != 2)
            bad(in.span, in.mnemonic + ": the offsets into a tile are [row, col], got " + std::to_string(o.list.size()) +
                             " entries");
          break;
        default: bad(in.span, in.mnemonic + ": unknown operand signature");
      }
    };
    for (size_t i = 0; i < in.outs.size(); ++i) check(in.outs[i], def->outs_sig[i]);
    for (size_t i = 0; i < in.ins.size(); ++i) check(in.ins[i], def->ins_sig[i]);
    if (def->family == InstrFamily::kCrossCore) cross_core(in);
  }

  // A FIFO instruction names a peer of its own core's side, and its tile lives where the
  // instruction reads or writes it (TPOP / TFREE: the memory the peer's pushes land in).
  void cross_core(const Instr& in) const {
    const std::string peer = fifo_peer(in);
    if (peer != "AIC" && peer != "AIV0" && peer != "AIV1")
      bad(in.span, in.mnemonic + " needs attribute peer = \"AIV0\", \"AIV1\" (in a cube kernel) or \"AIC\" (in a vector kernel), got '" +
                       peer + "'");
    if (core_ == FunctionType::AIC && peer == "AIC") bad(in.span, in.mnemonic + " in a cube (AIC) kernel names the AIC as its peer");
    if (core_ == FunctionType::AIV && peer != "AIC") bad(in.span, in.mnemonic + " in a vector (AIV) kernel must name peer \"AIC\"");
    const Operand& o = in.mnemonic == "TPUSH" ? in.ins.at(0) : in.outs.at(0);
    const MemorySpace m = tiles_->at(o.index).memory;
    if (in.mnemonic == "TPUSH") {
      const bool ok = peer == "AIC" ? m == MemorySpace::Vec : (m == MemorySpace::Acc || m == MemorySpace::Mat);
      if (!ok)
        bad(in.span, "TPUSH of a " + std::string(memory_space_name(m)) + " tile towards " + peer +
                         " (a vector core pushes Vec tiles, the cube core Acc or Mat tiles)");
    } else {
      const MemorySpace landing = peer == "AIC" ? MemorySpace::Vec : MemorySpace::Mat;  // this core's side
      if (m != landing)
        bad(in.span, in.mnemonic + " of a " + std::string(memory_space_name(m)) + " tile from " + peer + "; tiles from " +
                         peer + " land in " + memory_space_name(landing));
    }
  }

 public:
  FunctionType core_ = FunctionType::AIV;

 private:

  std::string what_;
  const std::vector<Instr>& code_;
  int num_regs_;
  const std::vector<ParamDesc>& params_;
  int tensor_slots_;
  const ChipSpec& chip_;
  const std::vector<TileDesc>* tiles_ = nullptr;
};

}  // namespace

void validate_kernel(const Kernel& kernel, const ChipSpec& chip) {
  Validator v("kernel '" + kernel.name + "'", kernel.code, kernel.num_regs, kernel.params,
              static_cast<int>(kernel.params.size()), chip);
  if (kernel.num_regs < 0 || kernel.num_regs > (1 << 20)) v.bad({}, "bad register count");
  if (kernel.core == FunctionType::Group) {  // its parts hold the registers
    if (!kernel.code.empty() || !kernel.tiles.empty())
      v.bad({}, "a Group kernel (mixed task) has no code or tiles of its own; its parts do the work");
    return;
  }
  int scalars = 0;
  for (auto& p : kernel.params) scalars += p.is_tensor ? 0 : 1;
  if (scalars > kernel.num_regs) v.bad({}, "scalar parameters need " + std::to_string(scalars) + " registers");
  if (!kernel.parts.empty()) v.bad({}, "only a Group kernel has parts");
  v.core_ = kernel.core;
  v.check_tiles(kernel.tiles);
  v.check_code(false);
}

// A Group kernel's parts: one AIC kernel and one or two AIV kernels of the program, each
// argument a parameter of the group (tensor for tensor, scalar for scalar) or a constant.
static void validate_group(const HostProgram& program, const Kernel& group) {
  auto bad = [&](const std::string& msg) {
    fail(ErrorKind::kRuntime, {}, "malformed instruction stream in Group kernel '" + group.name + "': " + msg,
         "instruction streams come from the compiler; if you built this one by hand, fix it as described");
  };
  int roles[3] = {0, 0, 0};
  for (const KernelPart& p : group.parts) {
    if (p.kernel < 0 || p.kernel >= static_cast<int>(program.kernels.size())) bad("a part names kernel #" + std::to_string(p.kernel));
    const Kernel& k = program.kernels[p.kernel];
    const int r = static_cast<int>(p.role);
    if (r < 0 || r > 2) bad("a part has an unknown role");
    ++roles[r];
    const FunctionType want = p.role == PartRole::AIC ? FunctionType::AIC : FunctionType::AIV;
    if (k.core != want)
      bad("part '" + k.name + "' runs on " + part_role_name(p.role) + " but is a " + function_type_name(k.core) + " kernel");
    if (p.args.size() != k.params.size())
      bad("part '" + k.name + "' gets " + std::to_string(p.args.size()) + " arguments for " + std::to_string(k.params.size()) +
          " parameters");
    for (size_t a = 0; a < p.args.size(); ++a) {
      const PartArg& pa = p.args[a];
      if (pa.param >= static_cast<int>(group.params.size())) bad("part '" + k.name + "' uses group parameter #" + std::to_string(pa.param));
      const bool tensor_arg = pa.param >= 0 && group.params[pa.param].is_tensor;
      if (tensor_arg != k.params[a].is_tensor || (pa.param < 0 && pa.constant.kind != Scalar::kImm))
        bad("argument " + std::to_string(a) + " of part '" + k.name + "' does not fit parameter '" + k.params[a].name + "'");
    }
  }
  if (roles[0] != 1 || roles[1] != 1 || roles[2] > 1)
    bad("a mixed task has one AIC part, one AIV 0 part and at most one AIV 1 part");
}

void validate_host_program(const HostProgram& program, const ChipSpec& chip) {
  for (auto& k : program.kernels) {
    validate_kernel(k, chip);
    if (k.core == FunctionType::Group) validate_group(program, k);
  }
  const int slots = static_cast<int>(program.tensors.size());
  Validator v("host program '" + program.name + "'", program.code, program.num_regs, program.params, slots, chip);
  if (program.params.size() > program.tensors.size()) v.bad({}, "fewer tensor slots than parameters");
  for (const ArrayDesc& a : program.arrays)
    if (a.size < 1 || a.size > (int64_t{1} << 20)) v.bad({}, "array '" + a.name + "' has " + std::to_string(a.size) + " elements");
  for (int r : program.returns)
    if (r < 0 || r >= slots) v.bad({}, "returns tensor slot " + std::to_string(r) + ", which does not exist");
  v.host_instr_ = [&](const Instr& in) {
    if (in.kind == InstrKind::kAllocTensor) {
      if (in.outs.size() != 1) v.bad(in.span, "tensor allocation needs one output slot");
      v.tensor_operand(in.outs[0], in.span);
      auto it = in.attrs.find("shape");
      if (it == in.attrs.end() || !std::holds_alternative<std::vector<int64_t>>(it->second))
        v.bad(in.span, "tensor allocation without a shape");
      int64_t elems = 1;
      const auto& shape = std::get<std::vector<int64_t>>(it->second);
      // A run-time extent (-1 in the attr): every extent is a scalar operand of ins[0].
      const bool dynamic = !in.ins.empty();
      if (dynamic) {
        if (in.ins.size() != 1 || in.ins[0].kind != Operand::kScalarList || in.ins[0].list.size() != shape.size())
          v.bad(in.span, "tensor allocation with run-time extents needs one scalar per dimension");
        for (const Scalar& s : in.ins[0].list) v.scalar(s, in.span);
      }
      for (int64_t d : shape) {
        if (d == -1 && dynamic) continue;
        if (d < 0 || d > kMaxDim * 64) v.bad(in.span, "tensor allocation with dimension " + std::to_string(d));
        if (d != 0 && elems > std::numeric_limits<int64_t>::max() / 64 / d) v.bad(in.span, "tensor allocation too large");
        elems *= d;
      }
      if (in.attrs.find("dtype") == in.attrs.end()) v.bad(in.span, "tensor allocation without a dtype");
      return;
    }
    if (in.kind == InstrKind::kTensorView || in.kind == InstrKind::kTensorCopy) {
      if (in.outs.size() != 1 || in.ins.empty()) v.bad(in.span, "a tensor view or copy needs one output slot and a source");
      v.tensor_operand(in.outs[0], in.span);
      v.tensor_operand(in.ins[0], in.span);
      for (size_t i = 1; i < in.ins.size(); ++i) {
        if (in.ins[i].kind != Operand::kScalarList) v.bad(in.span, "a tensor view takes lists of offsets and extents");
        for (const Scalar& s : in.ins[i].list) v.scalar(s, in.span);
      }
      if (in.kind == InstrKind::kTensorView) {
        auto it = in.attrs.find("view");
        auto* kind = it == in.attrs.end() ? nullptr : std::get_if<std::string>(&it->second);
        if (!kind || (*kind != "slice" && *kind != "transpose" && *kind != "reshape" && *kind != "reinterpret"))
          v.bad(in.span, "a tensor view without a known kind (slice, transpose, reshape, reinterpret)");
        const size_t want = *kind == "slice" ? 3 : *kind == "transpose" ? 1 : 2;  // a slice: + its valid extents
        if (in.ins.size() != want && !(*kind == "slice" && in.ins.size() == 4))
          v.bad(in.span, "a " + *kind + " view takes " + std::to_string(want) + " operands");
        if (*kind == "transpose") {
          auto a = in.attrs.find("axes");
          auto* axes = a == in.attrs.end() ? nullptr : std::get_if<std::vector<int64_t>>(&a->second);
          if (!axes || axes->size() != 2) v.bad(in.span, "a transpose view needs two axes");
        }
        if (*kind == "reinterpret" && (in.attrs.find("dtype") == in.attrs.end() ||
                                       !std::holds_alternative<DataType>(in.attrs.at("dtype"))))
          v.bad(in.span, "a reinterpret view needs a dtype");
      }
      return;
    }
    auto regs_attr = [&](const char* key) {
      auto it = in.attrs.find(key);
      if (it == in.attrs.end()) return;
      auto* regs = std::get_if<std::vector<int64_t>>(&it->second);
      if (!regs) v.bad(in.span, std::string("attribute '") + key + "' must list registers");
      for (int64_t r : *regs)
        if (r < 0 || r >= program.num_regs) v.bad(in.span, std::string(key) + " names register r" + std::to_string(r) + ", which does not exist");
    };
    if (in.kind == InstrKind::kArrayGet || in.kind == InstrKind::kArraySet) {
      auto it = in.attrs.find("array");
      auto* a = it == in.attrs.end() ? nullptr : std::get_if<int64_t>(&it->second);
      if (!a || *a < 0 || *a >= static_cast<int64_t>(program.arrays.size()))
        v.bad(in.span, "array instruction names no array of the program (" + std::to_string(program.arrays.size()) + " arrays)");
      v.scalar(in.a, in.span);
      if (in.kind == InstrKind::kArraySet) v.scalar(in.b, in.span);
      else v.scalar(Scalar::r(in.dst_reg), in.span);
      return;
    }
    regs_attr("dep_regs");
    regs_attr("launch_reg");
    if (in.callee < 0 || in.callee >= static_cast<int>(program.kernels.size()))
      v.bad(in.span, "call of kernel #" + std::to_string(in.callee) + ", which does not exist");
    const Kernel& k = program.kernels[in.callee];
    if (in.ins.size() != k.params.size())
      v.bad(in.span, "call of '" + k.name + "' passes " + std::to_string(in.ins.size()) + " operands for " +
                         std::to_string(k.params.size()) + " parameters");
    for (size_t i = 0; i < in.ins.size(); ++i) {
      if (k.params[i].is_tensor)
        v.tensor_operand(in.ins[i], in.span);
      else if (in.ins[i].kind != Operand::kScalar)
        v.bad(in.span, "call of '" + k.name + "': parameter '" + k.params[i].name + "' needs a scalar");
      else
        v.scalar(in.ins[i].scalar, in.span);
    }
  };
  v.check_code(true);
}

}  // namespace pypto::isa
