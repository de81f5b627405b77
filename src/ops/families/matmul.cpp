// Cube ops: acc[M, N] = left[M, K] @ right[K, N] on Left/Right tiles into an Acc tile, with
// accumulation (matmul_acc) or a bias row (matmul_bias). Checks the cube's dtype pairs
// (f32<-f32, f32<-f16, f32<-bf16, i32<-i8) and extents (1..4095).
#include "../op_rules.h"

namespace pypto::ops {

namespace {

using isa::Instr;

constexpr int64_t kMaxCubeExtent = 4095;

struct MatmulShape {
  int64_t m, k, n;
  DataType out;
  std::vector<ExprPtr> valid;
};

DataType cube_output(const CallSite& s, DataType in) {
  switch (in) {
    case DataType::FP32:
    case DataType::FP16:
    case DataType::BF16: return DataType::FP32;
    case DataType::INT8: return DataType::INT32;
    default:
      op_fail(s, ErrorKind::kType, std::string("the cube has no ") + dtype_name(in) + " matmul",
              "use FP16, BF16, FP32 or INT8 operands (cast them with pl.cast)");
  }
}

// Checks left/right operands and returns the product's extents and dtype.
MatmulShape check_operands(const CallSite& s, bool a_trans, bool b_trans) {
  const TileType& a = tile_arg(s, "lhs");
  const TileType& b = tile_arg(s, "rhs");
  // Operands in a memory from which moves reach Left/Right (Mat, Vec, Acc) are accepted:
  // the InferMemory pass inserts those moves.
  require_param_memory(s, "lhs", a);  // Left, Right: the parameter records below
  require_param_memory(s, "rhs", b);
  if (a.dtype != b.dtype)
    op_fail(s, ErrorKind::kType,
            std::string("'lhs' is ") + dtype_name(a.dtype) + " but 'rhs' is " + dtype_name(b.dtype) +
                "; both operands need one dtype",
            "cast one operand before moving it to Left/Right");
  auto sa = tile_shape(s, "lhs", a), sb = tile_shape(s, "rhs", b);
  int64_t m = a_trans ? sa[1] : sa[0], ka = a_trans ? sa[0] : sa[1];
  int64_t kb = b_trans ? sb[1] : sb[0], n = b_trans ? sb[0] : sb[1];
  if (ka != kb)
    op_fail(s, ErrorKind::kType,
            "inner dimensions differ: 'lhs' " + shape_str(sa) + " has K = " + std::to_string(ka) + " but 'rhs' " +
                shape_str(sb) + " has K = " + std::to_string(kb),
            "lhs must be [M, K] and rhs [K, N] (or pass a_trans/b_trans for transposed operands)");
  for (auto [name, v] : {std::pair<const char*, int64_t>{"M", m}, {"K", ka}, {"N", n}})
    if (v > kMaxCubeExtent)
      op_fail(s, ErrorKind::kCapacity,
              std::string(name) + " = " + std::to_string(v) + " exceeds the cube's limit of " + std::to_string(kMaxCubeExtent),
              "split the matmul into tiles of at most 4095 along each dimension");
  std::vector<ExprPtr> valid;
  if ((!a.valid_shape.empty() && !a_trans) || (!b.valid_shape.empty() && !b_trans)) {
    ExprPtr vm = !a.valid_shape.empty() && !a_trans ? a.valid_shape[0] : ConstInt::make(m);
    ExprPtr vn = !b.valid_shape.empty() && !b_trans ? b.valid_shape[1] : ConstInt::make(n);
    valid = {vm, vn};
  }
  return {m, ka, n, cube_output(s, a.dtype), valid};
}

// The checks shared by the matmul and gemv forms.
DataType check_out_dtype(const CallSite& s, const MatmulShape& mm) {
  DataType out = dtype_attr(s, "out_dtype");
  if (out != mm.out)
    op_fail(s, ErrorKind::kType,
            std::string("the cube multiplies ") + dtype_name(tile_arg(s, "lhs").dtype) + " operands into " + dtype_name(mm.out) +
                ", but out_dtype is " + dtype_name(out) +
                (out == DataType::FP32 ? " (the default when out_dtype is not passed)" : ""),
            std::string("pass out_dtype=pl.") + dtype_name(mm.out) + " and pl.cast the result afterwards if needed");
  return out;
}

// 'acc' of matmul_acc / gemv_acc (`op`: "matmul" or "gemv"): the Acc tile of lhs @ rhs.
TypePtr check_acc(const CallSite& s, const MatmulShape& mm, const std::string& op) {
  const TileType& acc = tile_arg(s, "acc");
  if (acc.memory != MemorySpace::Acc)
    op_fail(s, ErrorKind::kType,
            std::string("argument 'acc' is a ") + memory_space_name(acc.memory) + " tile; it must be the Acc result of a " + op,
            "start the accumulation with acc = pl." + op + "(a, b)");
  if (tile_shape(s, "acc", acc) != std::vector<int64_t>{mm.m, mm.n} || acc.dtype != mm.out)
    op_fail(s, ErrorKind::kType,
            "argument 'acc' is " + type_str(s.arg("acc")->type) + " but lhs @ rhs gives " + shape_str({mm.m, mm.n}) + " " +
                dtype_name(mm.out),
            "accumulate products of the same shape into one Acc tile");
  return TileType::make(acc.shape, acc.dtype, MemorySpace::Acc, acc.valid_shape);
}

// 'bias' of matmul_bias / gemv_bias: a [1, N] row in the result dtype, reachable in Bias.
TypePtr check_bias(const CallSite& s, const MatmulShape& mm) {
  const TileType& bias = tile_arg(s, "bias");
  require_param_memory(s, "bias", bias);  // Bias
  if (tile_shape(s, "bias", bias) != std::vector<int64_t>{1, mm.n} || bias.dtype != mm.out)
    op_fail(s, ErrorKind::kType,
            "argument 'bias' is " + type_str(s.arg("bias")->type) + "; expected [1, " + std::to_string(mm.n) + "] " +
                dtype_name(mm.out),
            "pass one bias value per output column, in the result dtype");
  return TileType::make(const_shape({mm.m, mm.n}), mm.out, MemorySpace::Acc, mm.valid);
}

TypePtr infer_matmul(const CallSite& s) {
  // The cube reads Left/Right as stored; a transposed operand is made in Mat with
  // pl.transpose_view before the move (the flags would otherwise be silently ignored).
  for (const char* flag : {"a_trans", "b_trans"})
    if (bool_attr(s, flag))
      op_fail(s, ErrorKind::kType,
              std::string(flag) + "=True is not supported: the cube multiplies Left and Right tiles as they are stored",
              std::string("transpose the Mat tile before moving it: pl.move(pl.transpose_view(mat_tile), "
                          "target_memory=pl.MemorySpace.") + (flag[0] == 'a' ? "Left" : "Right") + ")");
  auto mm = check_operands(s, false, false);
  DataType out = check_out_dtype(s, mm);
  return TileType::make(const_shape({mm.m, mm.n}), out, MemorySpace::Acc, mm.valid);
}

TypePtr infer_matmul_acc(const CallSite& s) {
  tile_arg(s, "acc");
  for (const char* flag : {"a_trans", "b_trans"})
    if (bool_attr(s, flag))
      op_fail(s, ErrorKind::kType,
              std::string(flag) + "=True is not supported on tiles: the cube multiplies Left and Right tiles as they are "
                                  "stored",
              std::string("transpose the Mat tile before moving it: pl.move(pl.transpose_view(mat_tile), "
                          "target_memory=pl.MemorySpace.") + (flag[0] == 'a' ? "Left" : "Right") + ")");
  if (ExprPtr init = s.arg("init_cond")) {
    auto* st = init->type ? init->type->as<ScalarType>() : nullptr;
    if (!st || st->dtype != DataType::BOOL)
      op_fail(s, ErrorKind::kType, "init_cond must be a bool (True: acc = lhs @ rhs; False: acc += lhs @ rhs), got " +
                                       type_str(init->type),
              "pass a comparison such as init_cond=(k == 0)");
  }
  return check_acc(s, check_operands(s, false, false), "matmul");
}

// TMATMUL_ACC; with a run-time init_cond a branch: TMATMUL where it holds, else TMATMUL_ACC.
void lower_matmul_acc(const Call& c, const VarPtr& dst, KernelBuilder& kb) {
  ExprPtr init = c.args.size() > 3 ? c.args[3] : nullptr;
  isa::Operand acc = kb.operand(c.args[0]), lhs = kb.operand(c.args[1]), rhs = kb.operand(c.args[2]);
  isa::Operand out = isa::Operand::tile(kb.define_tile(dst));
  Instr accumulate;
  accumulate.mnemonic = "TMATMUL_ACC";
  accumulate.ins = {acc, lhs, rhs};
  accumulate.outs = {out};
  if (!init) {
    kb.emit(accumulate);
    return;
  }
  Instr cond;
  cond.kind = isa::InstrKind::kIf;
  cond.a = kb.scalar(init);
  int if_pc = kb.emit(cond);
  Instr fresh;
  fresh.mnemonic = "TMATMUL";
  fresh.ins = {lhs, rhs};
  fresh.outs = {out};
  fresh.attrs = {{"out_dtype", c.type->as<TileType>()->dtype}, {"a_trans", false}, {"b_trans", false}};
  kb.emit(fresh);
  Instr els;
  els.kind = isa::InstrKind::kElse;
  int else_pc = kb.emit(els);
  kb.at(if_pc).jump = else_pc + 1;
  kb.emit(accumulate);
  Instr endif;
  endif.kind = isa::InstrKind::kEndIf;
  int end_pc = kb.emit(endif);
  kb.at(else_pc).jump = end_pc;
}

// init_cond: a literal picks the form (True: a fresh product, the accumulator's old value
// unused; False: accumulate); a run-time condition stays and the engines pick per call.
ExprPtr expand_matmul_acc(const Call& c, OpExpander&) {
  ExprPtr init = c.args.size() > 3 ? c.args[3] : nullptr;
  if (!init) return nullptr;
  auto* b = init->as<ConstBool>();
  if (!b) return nullptr;
  if (!b->value) return make_op_call("tile.matmul_acc", {c.args[0], c.args[1], c.args[2]}, {}, {}, c.span);
  DataType dt = c.type->as<TileType>()->dtype;
  return make_op_call("tile.matmul", {c.args[1], c.args[2]}, {}, {{"out_dtype", dt}}, c.span);
}

TypePtr infer_matmul_bias(const CallSite& s) { return check_bias(s, check_operands(s, false, false)); }

// gemv: the M = 1 case of the cube. 'lhs' is one row [1, K] (or a taller Left tile whose
// valid shape has one row); the result is an Acc row [1, N].
MatmulShape check_gemv(const CallSite& s) {
  auto mm = check_operands(s, false, false);
  const TileType& a = tile_arg(s, "lhs");
  auto rows = as_const_int(valid_or_full(a)[0]);
  if (!rows || *rows != 1)
    op_fail(s, ErrorKind::kType,
            "gemv multiplies one row: 'lhs' is " + type_str(s.arg("lhs")->type) + " with " +
                (rows ? std::to_string(*rows) : std::string("a run-time number of")) + " valid rows, not 1",
            "use pl.matmul for [M, K] @ [K, N], or load lhs as a [1, K] tile");
  mm.m = 1;
  std::vector<ExprPtr> valid;
  const TileType& b = tile_arg(s, "rhs");
  if (!b.valid_shape.empty()) valid = {ConstInt::make(1, DataType::INDEX), b.valid_shape[1]};
  mm.valid = valid;
  return mm;
}

TypePtr infer_gemv(const CallSite& s) {
  auto mm = check_gemv(s);
  DataType out = check_out_dtype(s, mm);
  return TileType::make(const_shape({1, mm.n}), out, MemorySpace::Acc, mm.valid);
}

TypePtr infer_gemv_acc(const CallSite& s) {
  tile_arg(s, "acc");
  return check_acc(s, check_gemv(s), "gemv");
}

TypePtr infer_gemv_bias(const CallSite& s) { return check_bias(s, check_gemv(s)); }

}  // namespace

void register_matmul_ops(OpRegistry& r) {
  // The PyTorch spellings of the cube family: product, accumulation, bias row.
  const std::string torch_mm = "_mm({lhs}[:{R}, :{lhs:vc}], {rhs}[:{lhs:vc}, :{C}], {dtype})";
  const std::string torch_acc = "{acc:r} + " + torch_mm;
  const std::string torch_bias = torch_mm + " + {bias}[:1, :{C}]";
  r.add({.name = "tile.matmul",
         .params = {in_memory(expr_param("lhs"), MemorySpace::Left), in_memory(expr_param("rhs"), MemorySpace::Right), attr_param("out_dtype", DataType::FP32),
                    attr_param("a_trans", false), attr_param("b_trans", false), hint(attr_param("c_matrix_nz", false))},
         .infer_type = infer_matmul,
         .pto = "TMATMUL",
         .lower = {},
         .doc = "Acc[M, N] = Left[M, K] @ Right[K, N] (a_trans/b_trans: operand stored transposed).",
         .aliases = {"tile.batch_matmul"},  // tiles are 2-D: a batch of one
         .scalar_variant = "",
         .torch = torch_mm,
         .tensor_form = TensorOpShape::kMatmul});
  r.add({.name = "tile.matmul_acc",
         // init_cond 4th: pl.tile.matmul_acc(acc, lhs, rhs, init_cond); the transpose flags (PyPTO's 4th and
         // 5th of the bare spelling) are rejected on tiles anyway, so by keyword they stay meaningful.
         .params = {expr_param("acc"), in_memory(expr_param("lhs"), MemorySpace::Left), in_memory(expr_param("rhs"), MemorySpace::Right), expr_param("init_cond", true),
                    quiet(attr_param("a_trans", false)), quiet(attr_param("b_trans", false))},
         .infer_type = infer_matmul_acc,
         .pto = "TMATMUL_ACC",
         .lower = lower_matmul_acc,
         .doc = "acc + Left @ Right, into an Acc tile; init_cond (a bool) where true gives Left @ Right alone (a "
                "literal picks the form at compile time, a run-time value branches).",
         .aliases = {"tile.batch_matmul_acc"},  // tiles are 2-D: a batch of one
         .scalar_variant = "",
         .writes = "",
         .view = false,
         .torch = "(" + torch_mm + " if {init_cond=False} else " + torch_acc + ")",
         .expand = expand_matmul_acc});
  r.add({.name = "tile.matmul_bias",
         .params = {in_memory(expr_param("lhs"), MemorySpace::Left), in_memory(expr_param("rhs"), MemorySpace::Right), in_memory(expr_param("bias"), MemorySpace::Bias)},
         .infer_type = infer_matmul_bias,
         .pto = "TMATMUL_BIAS",
         .lower = {},
         .doc = "Left @ Right + bias (a [1, N] Bias tile added to every row), into an Acc tile.",
         .aliases = {},
         .scalar_variant = "",
         .torch = torch_bias});
  r.add({.name = "tile.gemv",
         .params = {in_memory(expr_param("lhs"), MemorySpace::Left), in_memory(expr_param("rhs"), MemorySpace::Right), attr_param("out_dtype", DataType::FP32),
                    hint(attr_param("acc_phase", std::string("unspecified")))},
         .infer_type = infer_gemv,
         .pto = "TGEMV",
         .lower = {},
         .doc = "Acc[1, N] = Left[1, K] @ Right[K, N]: a row vector times a matrix on the cube.",
         .aliases = {},
         .scalar_variant = "",
         .torch = torch_mm});
  r.add({.name = "tile.gemv_acc",
         .params = {expr_param("acc"), in_memory(expr_param("lhs"), MemorySpace::Left), in_memory(expr_param("rhs"), MemorySpace::Right), hint(attr_param("acc_phase", std::string("unspecified")))},
         .infer_type = infer_gemv_acc,
         .pto = "TGEMV_ACC",
         .lower = {},
         .doc = "acc + Left[1, K] @ Right[K, N], into the [1, N] Acc tile.",
         .aliases = {},
         .scalar_variant = "",
         .torch = torch_acc});
  r.add({.name = "tile.gemv_bias",
         .params = {in_memory(expr_param("lhs"), MemorySpace::Left), in_memory(expr_param("rhs"), MemorySpace::Right), in_memory(expr_param("bias"), MemorySpace::Bias), hint(attr_param("acc_phase", std::string("unspecified")))},
         .infer_type = infer_gemv_bias,
         .pto = "TGEMV_BIAS",
         .lower = {},
         .doc = "Left[1, K] @ Right[K, N] + bias (a [1, N] Bias tile), into an Acc tile.",
         .aliases = {},
         .scalar_variant = "",
         .torch = torch_bias});
}

}  // namespace pypto::ops
