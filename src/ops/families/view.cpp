// Tensor views: a window (slice), another shape (view / reshape), two axes swapped
// (transpose) or the bytes as another dtype (reinterpret_view) of a tensor in global memory,
// without a copy. A view is a Tensor value with its own shape; it shares its parent's buffer
// and strides and starts at its own base offset. Writes through a view land in the parent.
#include <cmath>

#include "../op_rules.h"

namespace pypto::ops {

using isa::Instr;
using isa::Operand;

namespace {

std::string dims_of(const std::vector<ExprPtr>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    auto v = as_const_int(shape[i]);
    s += v ? std::to_string(*v) : std::string("?");
  }
  return s + "]";
}

// The product of the extents, or nullopt when one is not a constant.
std::optional<int64_t> static_numel(const std::vector<ExprPtr>& shape) {
  int64_t n = 1;
  for (auto& d : shape) {
    auto v = as_const_int(d);
    if (!v) return std::nullopt;
    n *= *v;
  }
  return n;
}

// Every static extent of a shape list must be positive.
void require_extents(const CallSite& s, const std::string& name, const std::vector<ExprPtr>& shape) {
  for (size_t d = 0; d < shape.size(); ++d)
    if (auto v = as_const_int(shape[d]); v && *v <= 0)
      op_fail(s, ErrorKind::kValue, "'" + name + "'[" + std::to_string(d) + "] = " + std::to_string(*v) + " is not a positive extent",
              "every extent of a view is at least 1 (an empty window has no data to view)");
}

int64_t axis_of(const CallSite& s, const std::string& name, int64_t rank) {
  int64_t a = int_attr(s, name);
  if (a < -rank || a >= rank)
    op_fail(s, ErrorKind::kValue,
            "'" + name + "' = " + std::to_string(a) + " is not an axis of a tensor of rank " + std::to_string(rank),
            "use an axis in " + std::to_string(-rank) + ".." + std::to_string(rank - 1));
  return a < 0 ? a + rank : a;
}

// pl.slice(tensor, shape, offset, valid_shape=None, drop_dims=None, pad_value=None, clamp=False)
TypePtr infer_slice(const CallSite& s) {
  const TensorType& t = tensor_arg(s, "tensor");
  const size_t rank = t.shape.size();
  auto shape = list_arg(s, "shape"), offset = list_arg(s, "offset"), valid = list_arg(s, "valid_shape");
  if (shape.size() != rank)
    op_fail(s, ErrorKind::kType,
            "'shape' has " + std::to_string(shape.size()) + " entries but the tensor has rank " + std::to_string(rank),
            "give one extent per tensor dimension (a dropped axis has extent 1 and is named in drop_dims)");
  if (offset.size() != rank)
    op_fail(s, ErrorKind::kType,
            "'offset' has " + std::to_string(offset.size()) + " entries but the tensor has rank " + std::to_string(rank),
            "give one offset per tensor dimension");
  if (!valid.empty() && valid.size() != rank)
    op_fail(s, ErrorKind::kType,
            "'valid_shape' has " + std::to_string(valid.size()) + " entries but the tensor has rank " + std::to_string(rank),
            "give one valid extent per tensor dimension");
  require_extents(s, "shape", shape);
  const bool clamp = bool_attr(s, "clamp");
  for (size_t d = 0; d < rank; ++d) {
    auto o = as_const_int(offset[d]), n = as_const_int(shape[d]), full = as_const_int(t.shape[d]);
    if (o && *o < 0)
      op_fail(s, ErrorKind::kValue, "offset[" + std::to_string(d) + "] = " + std::to_string(*o) + " is negative",
              "offsets count from 0; negative indices are not supported");
    if (o && n && full && *o + *n > *full && !clamp)
      op_fail(s, ErrorKind::kValue,
              "the window " + std::to_string(*o) + ":" + std::to_string(*o + *n) + " of dimension " + std::to_string(d) +
                  " lies past the tensor's extent " + std::to_string(*full) + " (tensor " + dims_of(t.shape) + ")",
              "shrink the window, or pass clamp=True to cut its valid region at the tensor's edge");
    if (o && full && *o >= *full)
      op_fail(s, ErrorKind::kValue,
              "offset[" + std::to_string(d) + "] = " + std::to_string(*o) + " starts past the tensor's extent " +
                  std::to_string(*full),
              "start the window inside the tensor");
    if (!valid.empty())
      if (auto v = as_const_int(valid[d]); v && n && (*v < 0 || *v > *n))
        op_fail(s, ErrorKind::kValue,
                "valid_shape[" + std::to_string(d) + "] = " + std::to_string(*v) + " is outside 0.." + std::to_string(*n),
                "the valid region is a prefix of the window " + dims_of(shape));
  }
  // drop_dims: static unit axes that stay fully valid; the result has them removed.
  std::vector<bool> dropped(rank, false);
  for (int64_t d0 : std::get<std::vector<int64_t>>(s.attr("drop_dims"))) {
    int64_t r = static_cast<int64_t>(rank);
    if (d0 < -r || d0 >= r)
      op_fail(s, ErrorKind::kValue, "drop_dims names axis " + std::to_string(d0) + ", not an axis of a rank-" + std::to_string(rank) + " tensor");
    size_t d = static_cast<size_t>(d0 < 0 ? d0 + r : d0);
    auto n = as_const_int(shape[d]);
    if (!n || *n != 1)
      op_fail(s, ErrorKind::kValue,
              "drop_dims names axis " + std::to_string(d) + " of extent " + (n ? std::to_string(*n) : std::string("?")) +
                  "; only a unit axis can be dropped",
              "make shape[" + std::to_string(d) + "] = 1 or drop another axis");
    if (!valid.empty())
      if (auto v = as_const_int(valid[d]); !v || *v != 1)
        op_fail(s, ErrorKind::kValue, "the dropped axis " + std::to_string(d) + " must stay fully valid",
                "do not narrow a dropped axis with valid_shape");
    dropped[d] = true;
  }
  const AttrValue& pv = s.attr("pad_value");
  if (auto* str = std::get_if<std::string>(&pv); str && !str->empty())
    op_fail(s, ErrorKind::kType, "pad_value must be a pl.PadValue, 0, math.inf or -math.inf, got '" + *str + "'");
  if (auto* f = std::get_if<double>(&pv); f && *f != 0 && !std::isinf(*f))
    op_fail(s, ErrorKind::kValue, "pad_value " + std::to_string(*f) + " is not a pad mode", "use 0, math.inf or -math.inf");
  std::vector<ExprPtr> out;
  for (size_t d = 0; d < rank; ++d)
    if (!dropped[d]) out.push_back(shape[d]);
  if (out.empty())
    op_fail(s, ErrorKind::kValue, "the slice drops every axis of the tensor: a rank-0 view",
            "read one element with pl.read(t, [i, j]) (or t[i, j])");
  return TensorType::make(out, t.dtype);
}

// The new shape of a view / reshape: the same number of elements as the tensor when both are
// known at compile time.
TypePtr reshaped(const CallSite& s, const TensorType& t, const std::vector<ExprPtr>& shape, const char* what) {
  if (shape.empty()) op_fail(s, ErrorKind::kValue, std::string("a ") + what + " needs at least one dimension");
  require_extents(s, "shape", shape);
  auto a = static_numel(t.shape), b = static_numel(shape);
  if (a && b && *a != *b)
    op_fail(s, ErrorKind::kValue,
            std::string("cannot ") + what + " a tensor of " + dims_of(t.shape) + " (" + std::to_string(*a) +
                " elements) to " + dims_of(shape) + " (" + std::to_string(*b) + " elements)",
            "keep the element count: the product of the new extents must be " + std::to_string(*a));
  return TensorType::make(shape, t.dtype);
}

TypePtr infer_reshape(const CallSite& s) { return reshaped(s, tensor_arg(s, "tensor"), list_arg(s, "shape"), "reshape"); }

// pl.tensor.view(t, shape=None, valid_shape=None, *, layout=None): a zero-copy reshape; the
// layout stays ND (tensors here are row-major), so a layout other than ND is refused.
TypePtr infer_view(const CallSite& s) {
  const TensorType& t = tensor_arg(s, "tensor");
  std::string layout = string_attr(s, "layout");
  if (!layout.empty() && layout != "ND")
    op_fail(s, ErrorKind::kValue,
            "pl.tensor.view with layout=" + layout + ": tensors in global memory are row-major (ND) here, a view cannot "
            "change their layout",
            "use pl.transpose(t, -2, -1) for the column-major view of the last two axes, or matmul's a_trans / b_trans");
  if (!s.arg("shape")) {
    if (layout.empty())
      op_fail(s, ErrorKind::kType, "pl.tensor.view needs shape= or layout=", "pass the view's shape, e.g. shape=[M * N]");
    return s.arg("tensor")->type;
  }
  auto valid = list_arg(s, "valid_shape");
  auto shape = list_arg(s, "shape");
  if (!valid.empty() && valid.size() != shape.size())
    op_fail(s, ErrorKind::kType,
            "'valid_shape' has " + std::to_string(valid.size()) + " entries but the view has rank " + std::to_string(shape.size()));
  for (size_t d = 0; d < valid.size(); ++d)
    if (auto v = as_const_int(valid[d]), n = as_const_int(shape[d]); v && n && (*v < 0 || *v > *n))
      op_fail(s, ErrorKind::kValue,
              "valid_shape[" + std::to_string(d) + "] = " + std::to_string(*v) + " is outside 0.." + std::to_string(*n),
              "the valid region is a prefix of the view " + dims_of(shape));
  return reshaped(s, t, shape, "view");
}

TypePtr infer_transpose(const CallSite& s) {
  const TensorType& t = tensor_arg(s, "tensor");
  int64_t rank = static_cast<int64_t>(t.shape.size());
  if (rank < 2)
    op_fail(s, ErrorKind::kValue, "transpose of a rank-" + std::to_string(rank) + " tensor: there are no two axes to swap",
            "reshape it to 2-D first, e.g. pl.reshape(t, [1, n])");
  int64_t a1 = axis_of(s, "axis1", rank), a2 = axis_of(s, "axis2", rank);
  auto shape = t.shape;
  std::swap(shape[a1], shape[a2]);
  return TensorType::make(shape, t.dtype);
}

// reinterpret_view(data, dtype, *, shape=None): the same bytes as another dtype; without
// shape the last (contiguous) axis scales by the ratio of the element sizes.
TypePtr infer_reinterpret(const CallSite& s) {
  const TensorType& t = tensor_arg(s, "tensor");
  DataType to = dtype_attr(s, "dtype");
  if (to == t.dtype)
    op_fail(s, ErrorKind::kValue, "reinterpret_view to " + std::string(dtype_name(to)) + ", the tensor's own dtype",
            "pass another dtype, or use the tensor itself");
  const int64_t sa = dtype_bits(t.dtype), sb = dtype_bits(to);
  if (sa % 8 || sb % 8)
    op_fail(s, ErrorKind::kType, "reinterpret_view between " + std::string(dtype_name(t.dtype)) + " and " + dtype_name(to) +
                                     ": sub-byte dtypes are not supported",
            "reinterpret whole-byte dtypes (8, 16, 32 or 64 bits)");
  auto shape = list_arg(s, "shape");
  if (shape.empty()) {
    shape = t.shape;
    ExprPtr& last = shape.back();
    auto n = as_const_int(last);
    if (!n)
      op_fail(s, ErrorKind::kValue, "reinterpret_view of a tensor whose last extent is only known at run time",
              "pass shape= with the new extents");
    if ((*n * sa) % sb)
      op_fail(s, ErrorKind::kValue,
              "the last axis of " + dims_of(t.shape) + " " + dtype_name(t.dtype) + " (" + std::to_string(*n * sa / 8) +
                  " bytes) is not a whole number of " + dtype_name(to) + " elements",
              "pass shape= with the same byte count");
    last = ConstInt::make(*n * sa / sb, DataType::INDEX);
    return TensorType::make(shape, to);
  }
  require_extents(s, "shape", shape);
  auto a = static_numel(t.shape), b = static_numel(shape);
  if (a && b && *a * sa != *b * sb)
    op_fail(s, ErrorKind::kValue,
            "shape " + dims_of(shape) + " of " + dtype_name(to) + " is " + std::to_string(*b * sb / 8) + " bytes, but the tensor is " +
                std::to_string(*a * sa / 8),
            "keep the byte count: the product of the extents times the element size must stay the same");
  return TensorType::make(shape, to);
}

// An integer scalar argument (a Python int stays INDEX, not the tensor's dtype).
ParamSpec extent_param(const std::string& name) {
  ParamSpec p = expr_param(name);
  p.index = true;
  return p;
}

// pl.tensor.set_validshape(t, valid_rows, valid_cols): the 2-D tensor with the valid region
// [rows, cols] (metadata only: the same elements; loads of it in a kernel read the valid part).
TypePtr infer_tensor_set_validshape(const CallSite& s) {
  const TensorType& t = tensor_arg(s, "tensor");
  if (t.shape.size() != 2)
    op_fail(s, ErrorKind::kType, "pl.tensor.set_validshape takes a 2-D tensor, got rank " + std::to_string(t.shape.size()),
            "slice the tensor with pl.slice(..., valid_shape=[...]) instead (any rank)");
  const char* names[2] = {"valid_rows", "valid_cols"};
  for (int d = 0; d < 2; ++d) {
    ExprPtr e = s.arg(names[d]);
    require_int_scalar(s, names[d]);
    auto v = as_const_int(e), n = as_const_int(t.shape[d]);
    if (v && n && (*v < 0 || *v > *n))
      op_fail(s, ErrorKind::kValue,
              std::string(names[d]) + " = " + std::to_string(*v) + " is outside 0.." + std::to_string(*n),
              "the valid region is a prefix of the tensor " + dims_of(t.shape));
  }
  return TensorType::make(t.shape, t.dtype);
}

// Orchestration: a kTensorView instruction; the runtime builds the view (parent's data at the
// offset, its strides) and checks the window against the parent when it runs. Inside a kernel
// views are folded into the loads and stores by a pass before codegen.
void lower_tensor_view(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  PYPTO_CHECK(kb.is_host(), "pl." + c.op->name + " reached kernel codegen; the view folding pass removes views in kernels");
  const std::string& op = c.op->name;
  auto* result = c.type->as<TensorType>();
  const int parent = kb.tensor(c.args[0]);
  // A valid region (set_validshape, view / slice with valid_shape=, clamp=True) is metadata
  // here: PassValidRegions passes it to the kernels that get the view.
  if (op == "tensor.set_validshape") {
    if (dst) kb.bind_tensor(dst.get(), parent);
    return;
  }
  if (op == "tensor.view" && !c.args[1]) {  // layout=ND only: the tensor itself
    if (dst) kb.bind_tensor(dst.get(), parent);
    return;
  }
  Instr in;
  in.kind = isa::InstrKind::kTensorView;
  isa::ParamDesc desc;
  desc.name = dst ? dst->name : "view";
  desc.dtype = result->dtype;
  for (auto& e : result->shape) desc.shape.push_back(as_const_int(e).value_or(-1));
  desc.dir = ParamDirection::InOut;
  if (op == "tensor.slice") {
    // clamp=True: the window may run past the parent (only its valid part is ever read or written).
    if (std::get<bool>(c.attrs.at("clamp"))) in.attrs["clamp"] = true;
    in.attrs["view"] = std::string("slice");
    in.ins = {Operand::tensor(parent), Operand::list_of(kb.scalars(c.args[2])), Operand::list_of(kb.scalars(c.args[1]))};
    if (c.args[3]) in.ins.push_back(Operand::list_of(kb.scalars(c.args[3])));  // valid_shape=: checked instead of the extents
    in.attrs["drop_dims"] = c.attrs.at("drop_dims");
  } else if (op == "tensor.transpose") {
    const int64_t rank = static_cast<int64_t>(c.args[0]->type->as<TensorType>()->shape.size());
    int64_t a1 = std::get<int64_t>(c.attrs.at("axis1")), a2 = std::get<int64_t>(c.attrs.at("axis2"));
    in.attrs["view"] = std::string("transpose");
    in.attrs["axes"] = std::vector<int64_t>{a1 < 0 ? a1 + rank : a1, a2 < 0 ? a2 + rank : a2};
    in.ins = {Operand::tensor(parent)};
  } else {  // view / reshape / reinterpret_view: the result's extents
    std::vector<isa::Scalar> extents;
    for (auto& e : result->shape) extents.push_back(kb.scalar(e));
    in.attrs["view"] = std::string(op == "tensor.reinterpret_view" ? "reinterpret" : "reshape");
    if (op == "tensor.reinterpret_view") in.attrs["dtype"] = result->dtype;
    in.ins = {Operand::tensor(parent), Operand::list_of(extents)};
  }
  const int slot = kb.add_tensor(desc);
  in.outs = {Operand::tensor(slot)};
  kb.emit(in);
  if (dst) kb.bind_tensor(dst.get(), slot);
}

}  // namespace

void register_view_ops(OpRegistry& r) {
  r.add({.name = "tensor.slice",
         .params = {aka(expr_param("tensor"), {"input"}), list_param("shape"), aka(list_param("offset"), {"offsets"}),
                    list_param("valid_shape", true), quiet(attr_param("drop_dims", std::vector<int64_t>{})),
                    quiet(attr_param("pad_value", std::string())), quiet(attr_param("clamp", false))},
         .infer_type = infer_slice,
         .pto = "",
         .lower = lower_tensor_view,
         .doc = "The window [shape] at offset of a tensor, as a tensor view (no copy; `t[a:b, c:d]` is this op). "
                "drop_dims removes unit axes; valid_shape / clamp narrow the part that holds data.",
         .aliases = {},
         .scalar_variant = "",
         .writes = "",
         .view = true,
         .torch = "_tslice({tensor}, {offset}, {shape}, {drop_dims})"});
  r.add({.name = "tensor.view",
         .params = {aka(expr_param("tensor"), {"input"}), list_param("shape", true), list_param("valid_shape", true),
                    quiet(attr_param("layout", std::string()))},
         .infer_type = infer_view,
         .pto = "",
         .lower = lower_tensor_view,
         .doc = "The tensor seen with another shape of the same element count (no copy).",
         .aliases = {},
         .scalar_variant = "",
         .writes = "",
         .view = true,
         .torch = "{tensor}.reshape({shape})"});
  r.add({.name = "tensor.reshape",
         .params = {aka(expr_param("tensor"), {"input"}), list_param("shape")},
         .infer_type = infer_reshape,
         .pto = "",
         .lower = lower_tensor_view,
         .doc = "The tensor with another shape of the same element count (a view of a row-major tensor, no copy).",
         .aliases = {},
         .scalar_variant = "",
         .writes = "",
         .view = true,
         .torch = "{tensor}.reshape({shape})"});
  r.add({.name = "tensor.transpose",
         .params = {aka(expr_param("tensor"), {"input"}), attr_param("axis1", int64_t{0}), attr_param("axis2", int64_t{1})},
         .infer_type = infer_transpose,
         .pto = "",
         .lower = lower_tensor_view,
         .doc = "The tensor with axes axis1 and axis2 swapped (negative axes count from the end): a strided view.",
         .aliases = {},
         .scalar_variant = "",
         .writes = "",
         .view = true,
         .torch = "{tensor}.transpose({axis1}, {axis2})"});
  r.add({.name = "tensor.set_validshape",
         .params = {aka(expr_param("tensor"), {"input"}), extent_param("valid_rows"), extent_param("valid_cols")},
         .infer_type = infer_tensor_set_validshape,
         .pto = "",
         .lower = lower_tensor_view,
         .doc = "The 2-D tensor with the valid region [valid_rows, valid_cols] (no copy): in a kernel its loads read "
                "only that part, the rest of each tile is pad.",
         .aliases = {},
         .scalar_variant = "",
         .writes = "",
         .view = true,
         .torch = "{tensor}"});
  r.add({.name = "tensor.reinterpret_view",
         .params = {aka(expr_param("tensor"), {"data"}), attr_param("dtype"), list_param("shape", true)},
         .infer_type = infer_reinterpret,
         .pto = "",
         .lower = lower_tensor_view,
         .doc = "The tensor's bytes as another dtype (no copy); without shape the last axis scales by the ratio of the "
                "element sizes.",
         .aliases = {},
         .scalar_variant = "",
         .writes = "",
         .view = true,
         .torch = "_treinterpret({tensor}, {dtype}, {shape=None})"});
}

}  // namespace pypto::ops
