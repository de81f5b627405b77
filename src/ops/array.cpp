// Orchestration arrays: `pl.array.create(n, dtype)` makes n scalars in the orchestration's
// own memory (zero at the start of every run); `arr[i]` reads one (array.get) and
// `arr[i] = v` writes one (array.set, which returns the updated array like pl.store
// returns its tensor). A pl.TASK_ID array holds task ids: `arr[i] = tid` stores the latest
// launch of `with pl.at(...) as tid` (task.latest), and `deps=[arr[j]]` makes a later launch
// wait for it. Kernels cannot see arrays.
#include "op_rules.h"

namespace pypto::ops {

using isa::Instr;

namespace {

constexpr int64_t kMaxArraySize = int64_t{1} << 20;

bool array_dtype_ok(DataType d) {
  return d == DataType::INDEX || d == DataType::INT64 || d == DataType::INT32 || d == DataType::FP32 ||
         d == DataType::BOOL || d == DataType::TASK_ID;
}

const ArrayType& array_arg(const CallSite& s, const std::string& name) {
  ExprPtr e = s.arg(name);
  auto* t = e && e->type ? e->type->as<ArrayType>() : nullptr;
  if (!t)
    op_fail(s, ErrorKind::kType, "argument '" + name + "' must be a pl.array, got " + type_str(e ? e->type : nullptr),
            "make one with pl.array.create(n, dtype) in the orchestration");
  return *t;
}

// The index argument: an integer scalar, inside the array when it is a constant.
void check_index(const CallSite& s, const ArrayType& a) {
  const ScalarType& t = scalar_arg(s, "index");
  if (!dtype_is_int(t.dtype))
    op_fail(s, ErrorKind::kType, std::string("the index of a pl.array must be an integer, got ") + dtype_name(t.dtype),
            "index with an INDEX scalar (a loop variable or arithmetic on it)");
  if (auto i = as_const_int(s.arg("index")); i && (*i < 0 || *i >= a.size))
    op_fail(s, ErrorKind::kValue,
            "index " + std::to_string(*i) + " is outside the pl.array of " + std::to_string(a.size) + " elements",
            "use an index in 0.." + std::to_string(a.size - 1));
}

TypePtr infer_create(const CallSite& s) {
  const int64_t n = int_attr(s, "size");
  if (n < 1 || n > kMaxArraySize)
    op_fail(s, ErrorKind::kValue, "a pl.array holds 1.." + std::to_string(kMaxArraySize) + " elements, got " + std::to_string(n),
            "use a size in that range (larger data belongs in a tensor: pl.create_tensor)");
  auto* d = std::get_if<DataType>(&s.attr("dtype"));
  if (!d) op_fail(s, ErrorKind::kType, "argument 'dtype' must be a dtype such as pl.INDEX or pl.TASK_ID");
  if (!array_dtype_ok(*d))
    op_fail(s, ErrorKind::kType, std::string("a pl.array of ") + dtype_name(*d) + " is not supported",
            "use pl.INDEX, pl.INT64, pl.INT32, pl.FP32, pl.BOOL or pl.TASK_ID");
  return ArrayType::make(n, *d);
}

void lower_create(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  isa::ArrayDesc desc;
  desc.name = dst ? dst->name : "array";
  desc.dtype = std::get<DataType>(c.attrs.at("dtype"));
  desc.size = std::get<int64_t>(c.attrs.at("size"));
  const int slot = kb.add_array(desc);
  if (dst) kb.bind_array(dst.get(), slot);
}

TypePtr infer_get(const CallSite& s) {
  const ArrayType& a = array_arg(s, "array");
  check_index(s, a);
  return ScalarType::make(a.dtype);
}

void lower_get(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  Instr in;
  in.kind = isa::InstrKind::kArrayGet;
  in.attrs["array"] = int64_t{kb.array(c.args[0])};
  in.a = kb.scalar(c.args[1]);
  in.dst_reg = dst ? kb.define_scalar(dst) : kb.new_reg(dtype_is_float(c.type->as<ScalarType>()->dtype));
  kb.emit(in);
}

TypePtr infer_set(const CallSite& s) {
  const ArrayType& a = array_arg(s, "array");
  check_index(s, a);
  const ScalarType& v = scalar_arg(s, "value");
  const bool want_task = a.dtype == DataType::TASK_ID, is_task = v.dtype == DataType::TASK_ID;
  if (want_task != is_task)
    op_fail(s, ErrorKind::kType,
            want_task ? std::string("a pl.array of TASK_ID holds task ids, got a ") + dtype_name(v.dtype) + " value"
                      : std::string("a task id stored into a pl.array of ") + dtype_name(a.dtype),
            want_task ? "store the id a launch binds: `with pl.at(...) as tid:` ... `arr[i] = tid`"
                      : "store task ids in a pl.array.create(n, pl.TASK_ID)");
  if (!dtype_is_float(a.dtype) && dtype_is_float(v.dtype))
    op_fail(s, ErrorKind::kType, std::string("a ") + dtype_name(v.dtype) + " value stored into a pl.array of " + dtype_name(a.dtype),
            "convert it first, or make the array FP32");
  return s.arg("array")->type;
}

void lower_set(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  const int slot = kb.array(c.args[0]);
  Instr in;
  in.kind = isa::InstrKind::kArraySet;
  in.attrs["array"] = int64_t{slot};
  in.a = kb.scalar(c.args[1]);
  in.b = kb.scalar(c.args[2]);
  kb.emit(in);
  if (dst) kb.bind_array(dst.get(), slot);
}

TypePtr infer_latest(const CallSite& s) {
  if (int_attr(s, "task_id") < 0) op_fail(s, ErrorKind::kValue, "task_id must be >= 0");
  return ScalarType::make(DataType::TASK_ID);
}

// A copy of the launch site's register: the value is the launch as of this point, even if
// the site launches again later.
void lower_latest(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  if (!kb.is_host())
    fail(ErrorKind::kType, c.span, "a task id used inside a kernel", "use task ids in the orchestration only");
  Instr in;
  in.kind = isa::InstrKind::kScalarMov;
  in.a = isa::Scalar::r(kb.task_reg(std::get<int64_t>(c.attrs.at("task_id"))));
  in.dst_reg = dst ? kb.define_scalar(dst) : kb.new_reg(false);
  kb.emit(in);
}

}  // namespace

void register_array_ops(OpRegistry& r) {
  r.add({.name = "array.create",
         .params = {aka(attr_param("size"), {"extent"}), attr_param("dtype", DataType::INDEX)},
         .infer_type = infer_create,
         .pto = "",
         .lower = lower_create,
         .doc = "An array of `size` scalars of `dtype` in the orchestration's memory (zero at the start of each run; "
                "pl.TASK_ID: task ids, none at first). Read with arr[i], write with arr[i] = v.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "_array({size}, {dtype=torch.int64})"});
  r.add({.name = "array.get",
         .params = {expr_param("array"), expr_param("index")},
         .infer_type = infer_get,
         .pto = "",
         .lower = lower_get,
         .doc = "Element `index` of an orchestration array (arr[i]); out of range at run time is an error.",
         .aliases = {"array.get_element"},
         .scalar_variant = "",
         .torch = "{array}[int({index})]"});
  r.add({.name = "array.set",
         .params = {expr_param("array"), expr_param("index"), expr_param("value")},
         .infer_type = infer_set,
         .pto = "",
         .lower = lower_set,
         .doc = "Writes element `index` of an orchestration array (arr[i] = value); returns the updated array.",
         .aliases = {"array.update_element"},
         .scalar_variant = "",
         .writes = "array",
         .torch = "_aset({array}, {index}, {value})"});
  r.add({.name = "task.latest",
         .params = {attr_param("task_id")},
         .infer_type = infer_latest,
         .pto = "",
         .lower = lower_latest,
         .doc = "The task id of the latest launch of `with pl.at(...) as tid` (what `tid` means as a value, e.g. "
                "in arr[i] = tid); printed as the launch's name.",
         .aliases = {},
         .scalar_variant = "",
         .torch = "({task_id} + 1)"});
}

}  // namespace pypto::ops
