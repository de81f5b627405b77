// Where each IR value lives in the instruction stream being built (tile slot, tensor slot,
// scalar register), scalar expression compilation, and the default op lowering.
#include "pypto/ops/kernel_builder.h"

#include "pypto/ops/op_registry.h"

namespace pypto::ops {

using isa::Instr;
using isa::InstrKind;
using isa::Operand;
using isa::Scalar;

KernelBuilder::KernelBuilder(std::vector<Instr>& code, int& num_regs, std::vector<bool>& reg_is_float,
                             std::vector<isa::TileDesc>* tiles, std::vector<isa::ParamDesc>* tensor_slots)
    : code_(code), num_regs_(num_regs), reg_is_float_(reg_is_float), tiles_(tiles), tensor_slots_(tensor_slots) {}

ir::VarPtr KernelBuilder::temporary(const ir::TypePtr& type, const Span& span) {
  auto v = ir::Var::make("_t" + std::to_string(temporaries_.size()), type, span);
  temporaries_.push_back(v);
  return v;
}

// ---- tiles ----

isa::TileDesc KernelBuilder::describe_tile(const std::string& name, const ir::TileType& type, const Span& span) {
  auto shape = ir::static_shape(type.shape);
  PYPTO_CHECK(shape && shape->size() == 2, "tile '" + name + "' has no static 2-D shape");
  isa::TileDesc d;
  d.name = name;
  d.dtype = type.dtype;
  d.memory = type.memory;
  d.rows = (*shape)[0];
  d.cols = (*shape)[1];
  d.addr = type.addr;
  d.pad = type.pad;
  if (type.valid_shape.size() == 2) {
    d.valid_rows = scalar(type.valid_shape[0]);
    d.valid_cols = scalar(type.valid_shape[1]);
  } else {
    d.valid_rows = Scalar::imm(d.rows);
    d.valid_cols = Scalar::imm(d.cols);
  }
  return d;
}

int KernelBuilder::add_tile(isa::TileDesc desc) {
  PYPTO_CHECK(tiles_, "a tile in a host program");
  tiles_->push_back(std::move(desc));
  return static_cast<int>(tiles_->size()) - 1;
}

int KernelBuilder::define_tile(const ir::VarPtr& var) {
  PYPTO_CHECK(var, "defining a tile without a variable");
  auto* type = var->type->as<ir::TileType>();
  PYPTO_CHECK(type, "'" + var->name + "' is not a tile");
  PYPTO_CHECK(type->addr >= 0, "tile '" + var->name + "' has no address: memory planning did not place it");
  int slot = add_tile(describe_tile(var->name, *type, var->span));
  bind_tile(var.get(), slot);
  return slot;
}

int KernelBuilder::define_view(const ir::VarPtr& var, int source_slot) {
  auto* type = var->type->as<ir::TileType>();
  PYPTO_CHECK(type, "'" + var->name + "' is not a tile");
  isa::TileDesc d = describe_tile(var->name, *type, var->span);
  d.memory = tile_desc(source_slot).memory;
  d.addr = tile_desc(source_slot).addr;
  int slot = add_tile(std::move(d));
  bind_tile(var.get(), slot);
  return slot;
}

void KernelBuilder::bind_tile(const ir::Var* var, int slot) { tile_slots_[var] = slot; }

std::vector<int> KernelBuilder::define_tiles(const ir::VarPtr& var) {
  PYPTO_CHECK(var, "defining tiles without a variable");
  auto* tuple = var->type->as<ir::TupleType>();
  PYPTO_CHECK(tuple, "'" + var->name + "' is not a tuple of tiles");
  std::vector<int> slots;
  for (size_t i = 0; i < tuple->elems.size(); ++i) {
    auto* type = tuple->elems[i]->as<ir::TileType>();
    PYPTO_CHECK(type, "'" + var->name + "' is not a tuple of tiles");
    PYPTO_CHECK(type->addr >= 0, "tile tuple '" + var->name + "' has no address: memory planning did not place it");
    slots.push_back(add_tile(describe_tile(var->name + "_" + std::to_string(i), *type, var->span)));
  }
  tile_tuples_[var.get()] = slots;
  return slots;
}

const isa::TileDesc& KernelBuilder::tile_desc(int slot) const {
  PYPTO_CHECK(tiles_ && slot >= 0 && slot < static_cast<int>(tiles_->size()), "bad tile slot");
  return (*tiles_)[slot];
}

int KernelBuilder::tile(const ir::ExprPtr& value) {
  if (auto* v = value->as<ir::Var>()) {
    auto it = tile_slots_.find(v);
    PYPTO_CHECK(it != tile_slots_.end(), "tile '" + v->name + "' used before it was defined");
    return it->second;
  }
  if (auto* c = value->as<ir::Call>()) {
    auto tmp = temporary(value->type, value->span);
    lower_call(*c, tmp);
    return tile(tmp);
  }
  if (auto* g = value->as<ir::TupleGetItem>()) {
    auto* base = g->tuple->as<ir::Var>();
    auto it = base ? tile_tuples_.find(base) : tile_tuples_.end();
    PYPTO_CHECK(it != tile_tuples_.end(), "tile of an unknown tuple");
    PYPTO_CHECK(g->index >= 0 && g->index < static_cast<int>(it->second.size()), "tuple index out of range");
    return it->second[g->index];
  }
  fail(ErrorKind::kType, value->span.line ? value->span : span_, "expected a tile value here");
}

// ---- tensors ----

int KernelBuilder::tensor(const ir::ExprPtr& value) {
  if (auto* v = value->as<ir::Var>()) {
    auto it = tensors_.find(v);
    PYPTO_CHECK(it != tensors_.end(), "tensor '" + v->name + "' used before it was defined");
    return it->second;
  }
  if (auto* g = value->as<ir::TupleGetItem>()) {
    auto* base = g->tuple->as<ir::Var>();
    PYPTO_CHECK(base && tensor_tuples_.count(base), "tuple element of an unknown tuple");
    auto& slots = tensor_tuples_.at(base);
    PYPTO_CHECK(g->index >= 0 && g->index < static_cast<int>(slots.size()), "tuple index out of range");
    return slots[g->index];
  }
  if (value->as<ir::Call>() || value->as<ir::FuncCall>()) {
    auto tmp = temporary(value->type, value->span);
    if (auto* c = value->as<ir::Call>()) lower_call(*c, tmp);
    else {
      PYPTO_CHECK(on_func_call, "function call outside a host program");
      on_func_call(*value->as<ir::FuncCall>(), tmp);
    }
    return tensor(tmp);
  }
  fail(ErrorKind::kType, value->span.line ? value->span : span_, "expected a tensor value here");
}

void KernelBuilder::bind_tensor(const ir::Var* var, int slot) { tensors_[var] = slot; }
void KernelBuilder::bind_tensor_tuple(const ir::Var* var, std::vector<int> slots) { tensor_tuples_[var] = std::move(slots); }

int KernelBuilder::add_tensor(isa::ParamDesc desc) {
  PYPTO_CHECK(tensor_slots_, "allocating a tensor outside a host program");
  tensor_slots_->push_back(std::move(desc));
  return static_cast<int>(tensor_slots_->size()) - 1;
}

// ---- orchestration arrays and task ids ----

int KernelBuilder::array(const ir::ExprPtr& value) {
  if (auto* v = value->as<ir::Var>()) {
    auto it = arrays_.find(v);
    PYPTO_CHECK(it != arrays_.end(), "array '" + v->name + "' used before it was defined");
    return it->second;
  }
  if (auto* c = value->as<ir::Call>()) {
    auto tmp = temporary(value->type, value->span);
    lower_call(*c, tmp);
    return array(tmp);
  }
  fail(ErrorKind::kType, value->span.line ? value->span : span_, "expected a pl.array here");
}

int KernelBuilder::add_array(isa::ArrayDesc desc) {
  if (!host_arrays)
    fail(ErrorKind::kType, span_, "pl.array.create in a kernel: arrays live in the orchestration's memory",
         "create the array in the orchestration (the @pl.jit body outside pl.at, or the Orchestration function)");
  host_arrays->push_back(std::move(desc));
  return static_cast<int>(host_arrays->size()) - 1;
}

int KernelBuilder::task_reg(int64_t task_id) {
  auto it = task_regs_.find(task_id);
  if (it != task_regs_.end()) return it->second;
  return task_regs_[task_id] = new_reg(false);
}

// ---- scalars ----

int KernelBuilder::new_reg(bool is_float) {
  reg_is_float_.push_back(is_float);
  return num_regs_++;
}

int KernelBuilder::define_scalar(const ir::VarPtr& var) {
  auto dt = ir::element_dtype(var->type);
  int reg = new_reg(dt && dtype_is_float(*dt));
  bind_scalar(var.get(), Scalar::r(reg));
  return reg;
}

void KernelBuilder::bind_scalar(const ir::Var* var, Scalar s) { scalars_[var] = s; }

static bool is_float_type(const ir::TypePtr& t) {
  auto dt = ir::element_dtype(t);
  return dt && dtype_is_float(*dt);
}

Scalar KernelBuilder::scalar(const ir::ExprPtr& value) {
  PYPTO_CHECK(value, "missing scalar");
  switch (value->kind) {
    case ir::ExprKind::ConstInt: return Scalar::imm(value->as<ir::ConstInt>()->value);
    case ir::ExprKind::ConstFloat: return Scalar::immf(value->as<ir::ConstFloat>()->value);
    case ir::ExprKind::ConstBool: return Scalar::imm(value->as<ir::ConstBool>()->value ? 1 : 0);
    case ir::ExprKind::Var: {
      auto* v = value->as<ir::Var>();
      auto it = scalars_.find(v);
      if (it == scalars_.end())
        fail(ErrorKind::kValue, v->span.line ? v->span : span_,
             "scalar '" + v->name + "' has no value here (a symbolic size is not passed into this function)",
             "pass it as a pl.Scalar[pl.INDEX] parameter, or use pl.tensor.dim(t, axis)");
      return it->second;
    }
    case ir::ExprKind::Binary: {
      auto* b = value->as<ir::BinaryExpr>();
      Instr in;
      in.kind = InstrKind::kScalarBin;
      in.sop = b->op;
      in.a = scalar(b->a);
      in.b = scalar(b->b);
      in.dst_reg = new_reg(is_float_type(value->type));
      emit(in);
      return Scalar::r(in.dst_reg);
    }
    case ir::ExprKind::Unary: {
      auto* u = value->as<ir::UnaryExpr>();
      Instr in;
      in.kind = InstrKind::kScalarBin;
      bool f = is_float_type(value->type);
      if (u->op == ir::UnaryOp::Neg) {
        in.sop = ir::BinaryOp::Sub;
        in.a = f ? Scalar::immf(0.0) : Scalar::imm(0);
        in.b = scalar(u->a);
      } else {
        in.sop = ir::BinaryOp::Eq;
        in.a = scalar(u->a);
        in.b = Scalar::imm(0);
      }
      in.dst_reg = new_reg(f);
      emit(in);
      return Scalar::r(in.dst_reg);
    }
    case ir::ExprKind::Cast: {
      Instr in;
      in.kind = InstrKind::kScalarCast;
      in.a = scalar(value->as<ir::CastExpr>()->a);
      in.attrs["dtype"] = value->type->as<ir::ScalarType>()->dtype;
      in.dst_reg = new_reg(is_float_type(value->type));
      if (value->span.line) in.span = value->span;
      emit(in);
      return Scalar::r(in.dst_reg);
    }
    case ir::ExprKind::Call: {
      auto tmp = temporary(value->type, value->span);
      lower_call(*value->as<ir::Call>(), tmp);
      return scalar(tmp);
    }
    default: fail(ErrorKind::kType, value->span.line ? value->span : span_, "expected a scalar value here");
  }
}

std::vector<Scalar> KernelBuilder::scalars(const ir::ExprPtr& list) {
  std::vector<Scalar> out;
  if (!list) return out;
  auto* l = list->as<ir::ListExpr>();
  PYPTO_CHECK(l, "expected a list of scalars");
  for (auto& e : l->elems) out.push_back(scalar(e));
  return out;
}

Operand KernelBuilder::operand(const ir::ExprPtr& value) {
  if (value->as<ir::ListExpr>()) return Operand::list_of(scalars(value));
  if (value->type->as<ir::TileType>()) return Operand::tile(tile(value));
  if (value->type->as<ir::TensorType>()) return Operand::tensor(tensor(value));
  return Operand::scalar_of(scalar(value));
}

// ---- instructions ----

int KernelBuilder::emit(Instr instr) {
  if (instr.span.line == 0) instr.span = span_;
  code_.push_back(std::move(instr));
  return static_cast<int>(code_.size()) - 1;
}

void KernelBuilder::lower_call(const ir::Call& call, const ir::VarPtr& dst_in) {
  const ir::OpDef& op = *call.op;
  if (is_host()) {
    bool tile_op = call.type->as<ir::TileType>() != nullptr;
    for (auto& a : call.args)
      if (a && a->type && a->type->as<ir::TileType>()) tile_op = true;
    if (tile_op)
      fail(ErrorKind::kType, call.span.line ? call.span : span_,
           "pl." + op.name + " works on tiles, which exist only inside kernels",
           "put it inside `with pl.at(level=pl.Level.CORE_GROUP):` or an @pl.jit.incore kernel");
  }
  Span saved = span_;
  if (call.span.line > 0) span_ = call.span;
  ir::VarPtr dst = dst_in;
  if (!dst && (call.type->as<ir::TileType>() || call.type->as<ir::ScalarType>())) dst = temporary(call.type, call.span);
  if (op.lower) {
    op.lower(call, dst, *this);
  } else {
    PYPTO_CHECK(!op.pto.empty(), "op '" + op.name + "' has neither a lowering nor a PTO mnemonic");
    PYPTO_CHECK(call.type->as<ir::TileType>(), "default lowering of '" + op.name + "' needs a tile result");
    Instr in;
    in.mnemonic = op.pto;
    size_t k = 0;
    for (auto& p : op.params) {
      if (p.kind == ir::ParamKind::kAttr) {
        auto it = call.attrs.find(p.name);
        if (!p.hint && it != call.attrs.end()) in.attrs[p.name] = it->second;
        continue;
      }
      const ir::ExprPtr& a = call.args.at(k++);
      if (a && !p.hint) in.ins.push_back(operand(a));
    }
    in.outs = {Operand::tile(define_tile(dst))};
    emit(in);
  }
  span_ = saved;
}

}  // namespace pypto::ops
