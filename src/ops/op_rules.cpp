// Argument checks and type spellings shared by every op family, so that a wrong argument
// produces the same kind of message (op, argument, expected, fix) for every op.
#include "op_rules.h"

#include <algorithm>
#include <cctype>

#include "pypto/isa/instructions.h"

namespace pypto::ops {

ParamSpec expr_param(const std::string& name, bool optional) { return {name, ParamKind::kExpr, optional, std::nullopt, {}, false, false}; }
ParamSpec list_param(const std::string& name, bool optional) {
  return {name, ParamKind::kExprList, optional, std::nullopt, {}, false, false};
}
ParamSpec attr_param(const std::string& name) { return {name, ParamKind::kAttr, false, std::nullopt, {}, false, false}; }
ParamSpec attr_param(const std::string& name, AttrValue default_value) {
  return {name, ParamKind::kAttr, false, std::move(default_value), {}, false, false};
}

ParamSpec aka(ParamSpec p, std::vector<std::string> aliases) {
  for (auto& a : aliases) p.aliases.push_back(std::move(a));
  return p;
}

ParamSpec hint(ParamSpec p) {
  p.hint = true;
  p.quiet = true;
  return p;
}

ExprPtr clamp_extent(const ExprPtr& a, const ExprPtr& b) {
  auto ca = as_const_int(a), cb = as_const_int(b);
  if (ca && cb) return ConstInt::make(std::max<int64_t>(0, std::min(*ca, *cb)), DataType::INDEX);
  if (ca && *ca <= 0) return ConstInt::make(0, DataType::INDEX);
  ExprPtr m = BinaryExpr::make(BinaryOp::Min, a, b, a->span);
  return BinaryExpr::make(BinaryOp::Max, m, ConstInt::make(0, DataType::INDEX), a->span);
}

ParamSpec quiet(ParamSpec p) {
  p.quiet = true;
  return p;
}

ParamSpec in_memory(ParamSpec p, MemorySpace m) {
  p.memory = m;
  return p;
}

ParamSpec any_memory(ParamSpec p) {
  p.any_memory = true;
  return p;
}

void op_fail(const CallSite& s, ErrorKind kind, const std::string& message, const std::string& fix) {
  fail(kind, s.span, "pl." + s.op.name + ": " + message, fix);
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

static std::string dims_str(const std::vector<ExprPtr>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    auto v = as_const_int(dims[i]);
    std::string d = v ? std::to_string(*v) : (dims[i]->as<Var>() ? dims[i]->as<Var>()->name : std::string("?"));
    out += (i ? ", " : "") + d;
  }
  return out + "]";
}

bool flat_index_ok(const CallSite& s, const std::vector<ExprPtr>& idx, const std::vector<ExprPtr>& shape) {
  if (idx.size() != 1 || shape.size() < 2) return false;
  auto i = as_const_int(idx[0]);
  int64_t n = 1;
  bool known = true;
  for (auto& d : shape) {
    auto v = as_const_int(d);
    known = known && v;
    if (v) n *= *v;
  }
  if (i && (*i < 0 || (known && *i >= n)))
    op_fail(s, ErrorKind::kValue, "flat index " + std::to_string(*i) + " is out of range" +
                                      (known ? " 0.." + std::to_string(n - 1) : std::string()),
            "keep the flat (row-major) index below the element count, or give one index per dimension");
  return true;
}

ExprPtr unravel_flat_index(const ExprPtr& list, const std::vector<ExprPtr>& shape, const Span& span) {
  auto* l = list->as<ListExpr>();
  if (!l || l->elems.size() != 1 || shape.size() < 2) return list;
  ExprPtr flat = l->elems[0];
  std::vector<ExprPtr> per(shape.size());
  ExprPtr stride = ConstInt::make(1, DataType::INDEX);
  for (size_t d = shape.size(); d-- > 0;) {
    ExprPtr q = BinaryExpr::make(BinaryOp::FloorDiv, flat, stride, span);
    per[d] = d == 0 ? q : BinaryExpr::make(BinaryOp::Mod, q, shape[d], span);
    stride = BinaryExpr::make(BinaryOp::Mul, stride, shape[d], span);
  }
  return ListExpr::make(per, span);
}

std::string type_str(const TypePtr& t) {
  if (!t) return "nothing";
  if (auto* s = t->as<ScalarType>()) return std::string("Scalar[") + dtype_name(s->dtype) + "]";
  if (auto* s = t->as<TensorType>()) return "Tensor[" + dims_str(s->shape) + ", " + dtype_name(s->dtype) + "]";
  if (auto* s = t->as<TileType>()) {
    std::string out = "Tile[" + dims_str(s->shape) + ", " + dtype_name(s->dtype) + ", " + memory_space_name(s->memory);
    if (!s->valid_shape.empty()) out += ", valid " + dims_str(s->valid_shape);
    return out + "]";
  }
  if (t->as<TupleType>()) return "a tuple";
  return "nothing";
}

static ExprPtr present_arg(const CallSite& s, const std::string& name, const char* what) {
  ExprPtr e = s.arg(name);
  if (!e) op_fail(s, ErrorKind::kType, std::string("argument '") + name + "' is missing; expected " + what);
  return e;
}

const TileType& tile_arg(const CallSite& s, const std::string& name) {
  ExprPtr e = present_arg(s, name, "a tile");
  auto* t = e->type ? e->type->as<TileType>() : nullptr;
  if (!t) {
    std::string fix = e->type && e->type->as<TensorType>()
                          ? "load it into a tile first: pl.load(t, offsets, shape)"
                          : "pass a tile (the result of pl.load, pl.create_tile or a tile op)";
    op_fail(s, ErrorKind::kType, "argument '" + name + "' must be a tile, got " + type_str(e->type), fix);
  }
  return *t;
}

const TensorType& tensor_arg(const CallSite& s, const std::string& name) {
  ExprPtr e = present_arg(s, name, "a tensor");
  auto* t = e->type ? e->type->as<TensorType>() : nullptr;
  if (!t)
    op_fail(s, ErrorKind::kType, "argument '" + name + "' must be a tensor, got " + type_str(e->type),
            "pass a pl.Tensor parameter or a tensor made with pl.create_tensor");
  return *t;
}

const ScalarType& scalar_arg(const CallSite& s, const std::string& name) {
  ExprPtr e = present_arg(s, name, "a scalar");
  auto* t = e->type ? e->type->as<ScalarType>() : nullptr;
  if (!t)
    op_fail(s, ErrorKind::kType, "argument '" + name + "' must be a scalar, got " + type_str(e->type),
            "pass a Python number or a pl.Scalar value");
  return *t;
}

std::vector<ExprPtr> list_arg(const CallSite& s, const std::string& name) {
  ExprPtr e = s.arg(name);
  if (!e) return {};
  auto* l = e->as<ListExpr>();
  if (!l) op_fail(s, ErrorKind::kType, "argument '" + name + "' must be a list such as [0, 0]");
  require_scalar_list(s, name, l->elems);
  return l->elems;
}

void require_scalar_list(const CallSite& s, const std::string& name, const std::vector<ExprPtr>& elems) {
  for (size_t i = 0; i < elems.size(); ++i) {
    auto* st = elems[i]->type ? elems[i]->type->as<ScalarType>() : nullptr;
    if (!st || !(dtype_is_int(st->dtype)))
      op_fail(s, ErrorKind::kType,
              "element " + std::to_string(i) + " of '" + name + "' must be an integer scalar, got " + type_str(elems[i]->type),
              "use integers or pl.Scalar[pl.INDEX] values");
  }
}

static const AttrValue& attr_of(const CallSite& s, const std::string& name) { return s.attr(name); }

std::vector<int64_t> shape_attr(const CallSite& s, const std::string& name) {
  auto* v = std::get_if<std::vector<int64_t>>(&attr_of(s, name));
  if (!v) op_fail(s, ErrorKind::kType, "argument '" + name + "' must be a list of integers such as [64, 64]");
  for (int64_t d : *v)
    if (d <= 0)
      op_fail(s, ErrorKind::kValue, "argument '" + name + "' = " + shape_str(*v) + " has an extent <= 0",
              "every extent of a shape must be a positive integer");
  return *v;
}

std::vector<int64_t> vec_shape_attr(const CallSite& s) {
  auto shape = shape_attr(s, "shape");
  if (shape.size() != 2) op_fail(s, ErrorKind::kType, "'shape' = " + shape_str(shape) + " is not 2-D; tiles are 2-D");
  return shape;
}

DataType dtype_attr(const CallSite& s, const std::string& name) {
  auto* v = std::get_if<DataType>(&attr_of(s, name));
  if (!v) op_fail(s, ErrorKind::kType, "argument '" + name + "' must be a dtype such as pl.FP32");
  if (*v == DataType::TASK_ID)
    op_fail(s, ErrorKind::kType, "argument '" + name + "' is pl.TASK_ID: tiles and tensors hold numbers, not task ids",
            "keep task ids in a pl.array.create(n, pl.TASK_ID)");
  return *v;
}

MemorySpace memory_attr(const CallSite& s, const std::string& name) {
  auto* v = std::get_if<MemorySpace>(&attr_of(s, name));
  if (!v) op_fail(s, ErrorKind::kType, "argument '" + name + "' must be a memory space such as pl.MemorySpace.Vec");
  return *v;
}

PadValue pad_attr(const CallSite& s, const std::string& name) {
  auto* v = std::get_if<PadValue>(&attr_of(s, name));
  if (!v) op_fail(s, ErrorKind::kType, "argument '" + name + "' must be a pad value such as pl.PadValue.zero");
  return *v;
}

std::string string_attr(const CallSite& s, const std::string& name) {
  auto* v = std::get_if<std::string>(&attr_of(s, name));
  if (!v) op_fail(s, ErrorKind::kType, "argument '" + name + "' must be a string");
  return *v;
}

bool bool_attr(const CallSite& s, const std::string& name) {
  const AttrValue& a = attr_of(s, name);
  if (auto* b = std::get_if<bool>(&a)) return *b;
  if (auto* i = std::get_if<int64_t>(&a)) return *i != 0;
  op_fail(s, ErrorKind::kType, "argument '" + name + "' must be True or False");
}

int64_t int_attr(const CallSite& s, const std::string& name) {
  auto* v = std::get_if<int64_t>(&attr_of(s, name));
  if (!v) op_fail(s, ErrorKind::kType, "argument '" + name + "' must be an integer constant");
  return *v;
}

std::vector<int64_t> tile_shape(const CallSite& s, const std::string& name, const TileType& t) {
  auto shape = static_shape(t.shape);
  if (!shape || shape->size() != 2)
    op_fail(s, ErrorKind::kType, "argument '" + name + "' must be a 2-D tile with a static shape, got " + dims_str(t.shape));
  return *shape;
}

std::vector<ExprPtr> valid_or_full(const TileType& t) { return t.valid_shape.empty() ? t.shape : t.valid_shape; }

std::vector<ExprPtr> const_shape(const std::vector<int64_t>& shape) {
  std::vector<ExprPtr> out;
  for (int64_t d : shape) out.push_back(ConstInt::make(d, DataType::INDEX));
  return out;
}

int define_updated_tile(KernelBuilder& kb, const VarPtr& dst, int target) {
  int out = kb.define_tile(dst);
  if (kb.tile_desc(out).addr != kb.tile_desc(target).addr) {
    isa::Instr copy;
    copy.mnemonic = "TMOV";
    copy.outs = {isa::Operand::tile(out)};
    copy.ins = {isa::Operand::tile(target)};
    kb.emit(copy);
  }
  return out;
}

namespace {
const ParamSpec* find_param(const OpDef& op, const std::string& name) {
  for (const ParamSpec& p : op.params)
    if (p.name == name) return &p;
  return nullptr;
}

void require_memory(const CallSite& s, const std::string& name, const TileType& t, MemorySpace need) {
  if (t.memory == need || move_path(t.memory, need)) return;
  const std::string have = memory_space_name(t.memory);
  switch (need) {
    case MemorySpace::Vec:
      // An Acc tile is accepted: the InferMemory pass moves it to Vec first.
      op_fail(s, ErrorKind::kType,
              "argument '" + name + "' is a " + have + " tile; vector ops work on Vec tiles and no move brings a " +
                  have + " tile there (only the cube reads it)",
              "use the tile it was moved from (Vec/Mat loads land in Vec with pl.load), or the matmul result (Acc), "
              "which the compiler moves to Vec");
    case MemorySpace::Mat:
      op_fail(s, ErrorKind::kType, "needs a Mat tile, got " + have, "load the operand with target_memory=pl.MemorySpace.Mat");
    default: {
      const std::string m = memory_space_name(need);
      op_fail(s, ErrorKind::kType, "argument '" + name + "' is a " + have + " tile; the cube reads it from " + m,
              "pl.move(t, target_memory=pl.MemorySpace." + m + ")");
    }
  }
}
}  // namespace

void require_vec(const CallSite& s, const std::string& name, const TileType& t) {
  const ParamSpec* p = find_param(s.op, name);
  require_memory(s, name, t, p && p->memory ? *p->memory : MemorySpace::Vec);
}

void require_param_memory(const CallSite& s, const std::string& name, const TileType& t) {
  const ParamSpec* p = find_param(s.op, name);
  if (p && p->memory) require_memory(s, name, t, *p->memory);
}

void require_packed_mask(const CallSite& s, const TileType& mask, const std::string& of, const TileType& t) {
  const std::vector<int64_t> shape = tile_shape(s, of, t);
  const std::vector<int64_t> mshape = tile_shape(s, "mask", mask);
  if (mask.dtype != isa::kMaskDtype || mshape[0] != shape[0] || mshape[1] < isa::mask_row_bytes(shape[1]))
    op_fail(s, ErrorKind::kType,
            "'mask' must be the packed mask of a " + shape_str(shape) + " tile: a " + dtype_name(isa::kMaskDtype) +
                " tile of " + std::to_string(shape[0]) + " rows and at least " +
                std::to_string(isa::mask_row_bytes(shape[1])) + " columns (one bit per element), got " +
                type_str(s.arg("mask")->type),
            "build the mask with pl.cmp or pl.cmps on a tile of " + of + "'s shape (it is " +
                shape_str({shape[0], isa::mask_tile_cols(shape[1])}) + " " + dtype_name(isa::kMaskDtype) + ")");
}

void require_same_shape_dtype(const CallSite& s, const std::string& a_name, const TileType& a, const std::string& b_name,
                              const TileType& b) {
  auto sa = tile_shape(s, a_name, a), sb = tile_shape(s, b_name, b);
  if (sa != sb)
    op_fail(s, ErrorKind::kType,
            "argument '" + b_name + "' has shape " + shape_str(sb) + " but '" + a_name + "' has " + shape_str(sa) +
                "; the shapes must be equal",
            "slice or reshape one operand so that both tiles have the same shape");
  if (a.dtype != b.dtype)
    op_fail(s, ErrorKind::kType,
            std::string("argument '") + b_name + "' has dtype " + dtype_name(b.dtype) + " but '" + a_name + "' has " +
                dtype_name(a.dtype) + "; the dtypes must be equal",
            std::string("convert one operand with pl.cast(") + b_name + ", " + "pl." + dtype_name(a.dtype) + ")");
}

void require_instr_dtype(const CallSite& s, const std::string& name, const TileType& t, const std::string& pto) {
  const isa::InstrDef* def = isa::find_instr(pto);
  PYPTO_CHECK(def, "op '" + s.op.name + "' names unknown instruction " + pto);
  if (def->allows(t.dtype)) return;
  std::string list;
  bool all_int = true, all_float = true;
  for (DataType d : def->dtypes) {
    list += (list.empty() ? "" : ", ") + std::string(dtype_name(d));
    all_int = all_int && dtype_is_int(d);
    all_float = all_float && dtype_is_float(d);
  }
  std::string fix = all_int     ? "this op needs an integer tile: convert with pl.cast(" + name + ", pl.INT32)"
                    : all_float ? "this op needs a floating-point tile: convert with pl.cast(" + name + ", pl.FP32)"
                                : "convert with pl.cast(" + name + ", pl.FP32) or another accepted dtype";
  op_fail(s, ErrorKind::kType,
          "argument '" + name + "' is " + dtype_name(t.dtype) + "; " + pto + " accepts " + list, fix);
}

void require_int_scalar(const CallSite& s, const std::string& name) {
  const ScalarType& st = scalar_arg(s, name);
  if (!dtype_is_int(st.dtype))
    op_fail(s, ErrorKind::kType, "argument '" + name + "' must be an integer scalar, got " + dtype_name(st.dtype),
            "pass a Python int or a pl.Scalar[pl.INT32] value");
}

std::vector<std::optional<int64_t>> static_valid(const TileType& t) {
  std::vector<std::optional<int64_t>> out;
  for (auto& e : valid_or_full(t)) out.push_back(as_const_int(e));
  return out;
}

static const char* kCmpModes[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};

static std::optional<std::string> cmp_lookup(const AttrValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) {
    if (*i >= 0 && *i < 6) return std::string(kCmpModes[*i]);
    return std::nullopt;
  }
  if (auto* str = std::get_if<std::string>(&v)) {
    std::string up = *str;
    std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return std::toupper(c); });
    for (auto* m : kCmpModes)
      if (up == m) return up;
  }
  return std::nullopt;
}

std::string cmp_mode(const CallSite& s, const std::string& name) {
  auto m = cmp_lookup(s.attr(name));
  if (!m)
    op_fail(s, ErrorKind::kValue, "argument '" + name + "' must be one of EQ, NE, LT, LE, GT, GE",
            "write e.g. " + name + "=\"LT\"");
  return *m;
}

std::string cmp_mode_of(const AttrValue& v) {
  auto m = cmp_lookup(v);
  PYPTO_CHECK(m.has_value(), "compare mode was not verified");
  return *m;
}

}  // namespace pypto::ops
