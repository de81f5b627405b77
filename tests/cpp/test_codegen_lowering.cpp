// Development test of op verification and codegen without the Python front end: builds IR
// directly, lowers it and checks the instruction stream against hand-written expectations.
// Build: g++ -std=c++20 -Iinclude tests/cpp/test_codegen_lowering.cpp build/dev/libpypto_core.a -o /tmp/t && /tmp/t
#include <cstdio>
#include <iostream>

#include "pypto/codegen/lower_kernel.h"
#include "pypto/codegen/lower_program.h"
#include "pypto/ir/op_registry.h"

using namespace pypto;
using namespace pypto::ir;

static int failures = 0;
#define EXPECT(cond)                                                     \
  do {                                                                   \
    if (!(cond)) {                                                       \
      std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);        \
      ++failures;                                                        \
    }                                                                    \
  } while (0)

static Span at(int line) { return Span{"prog.py", line, 1}; }
static ExprPtr I(int64_t v) { return ConstInt::make(v); }
static ExprPtr L(std::vector<ExprPtr> e) { return ListExpr::make(std::move(e)); }
static TypePtr tensor_t(int64_t r, int64_t c, DataType d = DataType::FP32) { return TensorType::make({I(r), I(c)}, d); }

// A variable for a call's value, with the address memory planning would give it.
static VarPtr planned(const std::string& name, const ExprPtr& call, int64_t addr) {
  TypePtr t = call->type;
  if (auto* tt = t->as<TileType>())
    t = TileType::make(tt->shape, tt->dtype, tt->memory, tt->valid_shape, tt->pad, addr);
  return Var::make(name, t, call->span);
}

static ExprPtr op(const std::string& name, std::vector<ExprPtr> args, Attrs attrs = {}, int line = 1) {
  return make_op_call(name, args, {}, attrs, at(line));
}

static std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const PyptoError& e) {
    return e.what();
  }
  return "";
}

static bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

static void test_tile_add() {
  auto a = Var::make("a", tensor_t(128, 128)), b = Var::make("b", tensor_t(128, 128)), c = Var::make("c", tensor_t(128, 128));
  auto la = op("tile.load", {a, L({I(0), I(0)})}, {{"shape", std::vector<int64_t>{128, 128}}}, 3);
  auto ta = planned("ta", la, 0);
  auto lb = op("tile.load", {b, L({I(0), I(0)})}, {{"shape", std::vector<int64_t>{128, 128}}}, 4);
  auto tb = planned("tb", lb, 65536);
  auto sum = op("tile.add", {ta, tb}, {}, 5);
  auto ts = planned("ts", sum, 131072);
  auto st = op("tile.store", {ts, L({I(0), I(0)}), c}, {}, 6);
  auto out = Var::make("out", st->type);
  auto body = SeqStmts::make({AssignStmt::make(ta, la, at(3)), AssignStmt::make(tb, lb, at(4)), AssignStmt::make(ts, sum, at(5)),
                              AssignStmt::make(out, st, at(6)), ReturnStmt::make({out}, at(7))});
  auto fn = Function::make("tile_add", {a, b, c}, {ParamDirection::In, ParamDirection::In, ParamDirection::Out},
                           {st->type}, body, FunctionType::InCore);
  auto lk = codegen::lower_kernel(*fn);
  auto& k = lk.kernel;
  EXPECT(k.core == FunctionType::AIV);
  EXPECT(k.code.size() == 4);
  EXPECT(k.code[0].mnemonic == "TLOAD" && k.code[0].ins[0].index == 0 && k.code[0].span.line == 3);
  EXPECT(k.code[2].mnemonic == "TADD" && k.code[2].ins.size() == 2 && k.code[2].outs[0].index == 2);
  EXPECT(k.tiles[2].addr == 131072 && k.tiles[2].valid_rows.i == 128);
  EXPECT(k.code[3].mnemonic == "TSTORE" && k.code[3].outs[0].kind == isa::Operand::kTensor && k.code[3].outs[0].index == 2);
  EXPECT(lk.returned_params.size() == 1 && lk.returned_params[0] == 2);
  EXPECT(contains(k.pto_text, "pto.tadd ins(%ta, %tb : !pto.tile<vec, f32, 128x128, addr=0x0>"));
  std::cout << k.pto_text;
}

// acc = full(0); for i in range(4): acc = acc + load(a, [0, 32 i]) -- carried tile at one address.
static isa::Kernel loop_kernel(int64_t body_addr) {
  auto a = Var::make("a", tensor_t(32, 128)), c = Var::make("c", tensor_t(32, 32));
  auto full = op("tile.full", {}, {{"shape", std::vector<int64_t>{32, 32}}}, 2);
  auto acc0 = planned("acc0", full, 0);
  auto i = Var::make("i", ScalarType::make(DataType::INDEX));
  auto acc = Var::make("acc", acc0->type);
  auto off = BinaryExpr::make(BinaryOp::Mul, i, I(32));
  auto ld = op("tile.load", {a, L({I(0), off})}, {{"shape", std::vector<int64_t>{32, 32}}}, 4);
  auto t = planned("t", ld, 4096);
  auto sum = op("tile.add", {acc, t}, {}, 5);
  auto acc2 = planned("acc2", sum, body_addr);
  auto loop_body = SeqStmts::make({AssignStmt::make(t, ld), AssignStmt::make(acc2, sum), YieldStmt::make({acc2})});
  auto res = Var::make("res", acc0->type);
  auto loop = ForStmt::make(i, I(0), I(4), I(1), {acc}, {acc0}, loop_body, {res}, ForKind::Range, 0, at(3));
  auto st = op("tile.store", {res, L({I(0), I(0)}), c}, {}, 6);
  auto body = SeqStmts::make({AssignStmt::make(acc0, full), loop, EvalStmt::make(st)});
  auto fn = Function::make("acc_loop", {a, c}, {ParamDirection::In, ParamDirection::Out}, {}, body, FunctionType::InCore);
  return codegen::lower_incore_function(*fn);
}

static void test_loop() {
  isa::Kernel k = loop_kernel(0);  // the yielded value shares acc's address: no copies
  int moves = 0, begin = -1, end = -1;
  for (size_t p = 0; p < k.code.size(); ++p) {
    if (k.code[p].mnemonic == "TMOV") ++moves;
    if (k.code[p].kind == isa::InstrKind::kLoopBegin) begin = static_cast<int>(p);
    if (k.code[p].kind == isa::InstrKind::kLoopEnd) end = static_cast<int>(p);
  }
  EXPECT(moves == 0);
  EXPECT(begin >= 0 && end > begin && k.code[begin].jump == end + 1 && k.code[end].jump == begin + 1);
  EXPECT(k.code[begin].a.i == 0 && k.code[begin].b.i == 4 && k.code[begin].step.i == 1);
  EXPECT(k.code[0].mnemonic == "TEXPANDS");
  // The offset i*32 is computed in the body into a register.
  EXPECT(k.code[begin + 1].kind == isa::InstrKind::kScalarBin && k.code[begin + 1].a.reg == k.code[begin].dst_reg);
  std::cout << k.pto_text;
  isa::Kernel k2 = loop_kernel(8192);  // planned apart: one copy back at the end of the body
  moves = 0;
  for (auto& in : k2.code)
    if (in.mnemonic == "TMOV") ++moves;
  EXPECT(moves == 1);
}

static void test_matmul_and_program() {
  auto x = Var::make("x", tensor_t(64, 64, DataType::FP16)), w = Var::make("w", tensor_t(64, 64, DataType::FP16));
  auto y = Var::make("y", tensor_t(64, 64));
  Attrs mat = {{"shape", std::vector<int64_t>{64, 64}}, {"target_memory", MemorySpace::Mat}};
  auto lx = op("tile.load", {x, L({I(0), I(0)})}, mat);
  auto mx = planned("mx", lx, 0);
  auto lw = op("tile.load", {w, L({I(0), I(0)})}, mat);
  auto mw = planned("mw", lw, 8192);
  auto ml = op("tile.move", {mx}, {{"target_memory", MemorySpace::Left}});
  auto l = planned("l", ml, 0);
  auto mr = op("tile.move", {mw}, {{"target_memory", MemorySpace::Right}});
  auto r = planned("r", mr, 0);
  auto mm = op("tile.matmul", {l, r});
  auto acc = planned("acc", mm, 0);
  EXPECT(acc->type->as<TileType>()->memory == MemorySpace::Acc && acc->type->as<TileType>()->dtype == DataType::FP32);
  auto st = op("tile.store", {acc, L({I(0), I(0)}), y});
  auto yo = Var::make("y_out", st->type);
  auto kbody = SeqStmts::make({AssignStmt::make(mx, lx), AssignStmt::make(mw, lw), AssignStmt::make(l, ml),
                               AssignStmt::make(r, mr), AssignStmt::make(acc, mm), AssignStmt::make(yo, st),
                               ReturnStmt::make({yo})});
  auto kernel = Function::make("mm", {x, w, y}, {ParamDirection::In, ParamDirection::In, ParamDirection::Out}, {st->type},
                               kbody, FunctionType::InCore);
  // Orchestration: tmp = create_tensor; tmp = mm(x, w, tmp); out = mm(x, w, out); return tmp, out
  auto ox = Var::make("x", x->type), ow = Var::make("w", w->type), oo = Var::make("out", y->type);
  auto create = op("tensor.create", {}, {{"shape", std::vector<int64_t>{64, 64}}, {"dtype", DataType::FP32}}, 10);
  auto tmp = Var::make("tmp", create->type);
  auto call1 = FuncCall::make("mm", {ox, ow, tmp}, y->type, at(11));
  auto tmp2 = Var::make("tmp2", y->type);
  auto call2 = FuncCall::make("mm", {ox, ow, oo}, y->type, at(12));
  auto out2 = Var::make("out2", y->type);
  auto obody = SeqStmts::make({AssignStmt::make(tmp, create, at(10)), AssignStmt::make(tmp2, call1, at(11)),
                               AssignStmt::make(out2, call2, at(12)), ReturnStmt::make({tmp2, out2})});
  auto orch = Function::make("main", {ox, ow, oo}, {ParamDirection::In, ParamDirection::In, ParamDirection::Out},
                             {y->type, y->type}, obody, FunctionType::Orchestration);
  auto prog = Program::make("P", {orch, kernel});
  isa::HostProgram hp = codegen::lower_program(*prog, "main");
  EXPECT(hp.kernels.size() == 1 && hp.kernels[0].core == FunctionType::AIC);
  EXPECT(hp.tensors.size() == 4 && hp.tensors[3].shape == (std::vector<int64_t>{64, 64}));
  EXPECT(hp.code.size() == 3 && hp.code[0].kind == isa::InstrKind::kAllocTensor && hp.code[0].outs[0].index == 3);
  EXPECT(hp.code[1].kind == isa::InstrKind::kCall && hp.code[1].callee == 0 && hp.code[1].ins[2].index == 3);
  EXPECT(hp.code[2].ins[2].index == 2 && hp.code[2].span.line == 12);
  EXPECT(hp.returns == (std::vector<int>{3, 2}));
  std::cout << hp.kernels[0].pto_text;
}

static void test_errors() {
  auto a = Var::make("a", tensor_t(128, 128));
  auto e = error_of([&] {
    op("tile.load", {a, L({I(0), I(0)})}, {{"shape", std::vector<int64_t>{64, 64}}, {"target_memory", MemorySpace::Left}}, 9);
  });
  EXPECT(contains(e, "prog.py:9: pl.tile.load: a load lands only in Vec or Mat, not Left") && contains(e, "pl.move"));
  e = error_of([&] { op("tile.load", {a, L({I(0)})}, {{"shape", std::vector<int64_t>{64, 64}}}); });
  EXPECT(contains(e, "'offsets' has 1 entries but the tensor has rank 2"));
  e = error_of([&] { op("tile.load", {a, L({I(100), I(0)})}, {{"shape", std::vector<int64_t>{64, 64}}}); });
  EXPECT(contains(e, "elements 100..163 of dimension 0, but the tensor has only 128"));
  e = error_of([&] { op("tile.load", {a, L({I(0), I(0)})}, {{"shape", std::vector<int64_t>{64, 4}}}); });
  EXPECT(contains(e, "multiple of 32 bytes") && contains(e, "valid_shape"));
  auto t1 = op("tile.load", {a, L({I(0), I(0)})}, {{"shape", std::vector<int64_t>{64, 64}}});
  auto t2 = op("tile.load", {a, L({I(0), I(0)})}, {{"shape", std::vector<int64_t>{32, 64}}});
  e = error_of([&] { op("tile.add", {t1, t2}); });
  EXPECT(contains(e, "argument 'rhs' has shape [32, 64] but 'lhs' has [64, 64]"));
  e = error_of([&] { op("tile.matmul", {t1, t1}); });
  EXPECT(contains(e, "the cube reads it from Left") && contains(e, "pl.move(t, target_memory=pl.MemorySpace.Left)"));
  e = error_of([&] { op("tile.move", {t1}, {{"target_memory", MemorySpace::Left}}); });
  EXPECT(contains(e, "cannot move a Vec tile to Left") && contains(e, "pl.MemorySpace.Mat"));
  e = error_of([&] { op("tile.reshape", {t1}, {{"shape", std::vector<int64_t>{64, 32}}}); });
  EXPECT(contains(e, "4096 elements") && contains(e, "2048 elements"));
  e = error_of([&] { op("tile.cast", {t1}, {{"target_type", DataType::BF16}, {"mode", std::string("sideways")}}); });
  EXPECT(contains(e, "not a rounding mode"));
  auto c = op("tile.cast", {t1}, {{"dtype", DataType::BF16}});
  EXPECT(c->type->as<TileType>()->dtype == DataType::BF16);
  auto rm = op("tile.row_max", {t1});
  EXPECT(static_shape(rm->type->as<TileType>()->shape) == (std::vector<int64_t>{64, 1}));
  EXPECT(resolve_op("add", {t1->type, ScalarType::make(DataType::FP32)})->name == "tile.adds");
  EXPECT(resolve_op("create_tensor", {})->name == "tensor.create");
  EXPECT(resolve_op("cmp", {t1->type, ScalarType::make(DataType::FP32)})->name == "tile.cmps");
}

int main() {
  test_tile_add();
  test_loop();
  test_matmul_and_program();
  test_errors();
  std::cout << ops_reference_markdown().substr(0, 1500);
  std::printf(failures ? "%d FAILURES\n" : "all passed\n", failures);
  return failures ? 1 : 0;
}
