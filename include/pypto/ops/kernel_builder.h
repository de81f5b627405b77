// The state of one instruction stream under construction (a kernel or a host program):
// which tile slot, tensor slot or scalar register holds each IR value, and the code so far.
// Op lowerings (OpDef::lower) and the statement lowering talk to it.
#pragma once
#include <functional>
#include <set>
#include <unordered_map>
#include <vector>

#include "pypto/ir/stmt.h"
#include "pypto/isa/program.h"

namespace pypto::ops {

class KernelBuilder {
 public:
  // `tiles` is null for a host program, which has no on-chip tiles; `tensor_slots` is
  // non-null only for a host program, which may allocate tensors.
  KernelBuilder(std::vector<isa::Instr>& code, int& num_regs, std::vector<bool>& reg_is_float,
                std::vector<isa::TileDesc>* tiles, std::vector<isa::ParamDesc>* tensor_slots = nullptr);

  bool is_host() const { return tiles_ == nullptr; }

  // Tiles. `tile` returns the slot of a tile value: a Var defined earlier, or a nested op
  // call, which is lowered on the spot into a slot of its own.
  int tile(const ir::ExprPtr& value);
  // A new slot for `var`, described by its (planned) TileType.
  int define_tile(const ir::VarPtr& var);
  // A new slot for `var` that views the buffer of `source_slot` (same memory and address)
  // with `var`'s own shape and valid shape: reshape, set_validshape.
  int define_view(const ir::VarPtr& var, int source_slot);
  void bind_tile(const ir::Var* var, int slot);
  // One slot per tile of `var`, a tuple of planned tiles (the results of sort32 / mrgsort);
  // `tile(tup[i])` then names slot i.
  std::vector<int> define_tiles(const ir::VarPtr& var);
  const isa::TileDesc& tile_desc(int slot) const;
  // The TileDesc of a planned TileType (valid shape scalars are compiled here).
  isa::TileDesc describe_tile(const std::string& name, const ir::TileType& type, const Span& span);
  int add_tile(isa::TileDesc desc);

  // Tensors: kernel parameter index (kernels) or tensor slot (host programs).
  int tensor(const ir::ExprPtr& value);
  void bind_tensor(const ir::Var* var, int slot);
  bool has_tensor(const ir::Var* var) const { return tensors_.count(var) > 0; }
  // The tensors of a call that returns several (host programs: a kernel returning a tuple).
  void bind_tensor_tuple(const ir::Var* var, std::vector<int> slots);
  // A new tensor slot (host programs only); returns its index.
  int add_tensor(isa::ParamDesc desc);

  // Scalars: constants become immediates; other expressions are compiled into registers.
  isa::Scalar scalar(const ir::ExprPtr& value);
  std::vector<isa::Scalar> scalars(const ir::ExprPtr& list);  // a ListExpr (null -> empty)
  void bind_scalar(const ir::Var* var, isa::Scalar s);
  int new_reg(bool is_float);
  // A fresh register bound to `var` (its float-ness from the var's dtype).
  int define_scalar(const ir::VarPtr& var);

  // The operand of a value for the default lowering: tile, tensor or scalar.
  isa::Operand operand(const ir::ExprPtr& value);

  // Appends `instr` (its span defaults to the current one) and returns its pc.
  int emit(isa::Instr instr);
  int pc() const { return static_cast<int>(code_.size()); }
  std::vector<isa::Instr>& code() { return code_; }  // the code so far (a lowering may reorder its own tail)
  isa::Instr& at(int pc) { return code_[pc]; }
  void set_span(const Span& span) { span_ = span; }
  const Span& span() const { return span_; }

  // Lowers one op call that defines `dst` (null for a bare call): the op's own lowering,
  // or the default one-instruction lowering from its `pto` mnemonic.
  void lower_call(const ir::Call& call, const ir::VarPtr& dst);
  // Orchestration arrays (pl.array.create; host programs only): the array slot of a value.
  int array(const ir::ExprPtr& value);
  void bind_array(const ir::Var* var, int slot) { arrays_[var] = slot; }
  int add_array(isa::ArrayDesc desc);
  std::vector<isa::ArrayDesc>* host_arrays = nullptr;  // set by the host program's lowering
  // Tensor slots marked by pl.dump_tag(t) so far (host code, in program order): later kernel
  // calls passing them dump them at RunConfig(enable_dump_args=1).
  std::set<int> dump_slots;
  // Tensor slots created with pl.create_tensor(..., manual_dep=True): every launch passing
  // one gets no dependency lookup or registration for it (as no_dep_args=[t]).
  std::set<int> manual_dep_slots;
  // The register holding the latest launch number of the launch site `task_id` (0 before
  // its first launch in a run); created on first use.
  int task_reg(int64_t task_id);

  // Lowers a call of another function (host programs set this; kernels reject such calls).
  std::function<void(const ir::FuncCall&, const ir::VarPtr&)> on_func_call;
  // The function being lowered (op lowerings that belong to one kind of function check it).
  FunctionType func_type = FunctionType::Opaque;
  std::string func_name;
  // The hidden scalar parameter pl.get_subblock_idx() reads (null when the kernel has none):
  // the AIV lane of a part of a mixed task, 0 elsewhere (see lower_kernel.cpp).
  ir::VarPtr subblock_idx;

 private:
  ir::VarPtr temporary(const ir::TypePtr& type, const Span& span);
  std::vector<isa::Instr>& code_;
  int& num_regs_;
  std::vector<bool>& reg_is_float_;
  std::vector<isa::TileDesc>* tiles_;
  std::vector<isa::ParamDesc>* tensor_slots_;
  std::unordered_map<const ir::Var*, int> tile_slots_, tensors_;
  std::unordered_map<const ir::Var*, std::vector<int>> tensor_tuples_, tile_tuples_;
  std::unordered_map<const ir::Var*, isa::Scalar> scalars_;
  std::unordered_map<const ir::Var*, int> arrays_;
  std::unordered_map<int64_t, int> task_regs_;
  std::vector<ir::VarPtr> temporaries_;  // keeps synthetic vars of nested calls alive
  Span span_;
};

}  // namespace pypto::ops
