"""`while cond:` loops and their printed form `for (x, n) in pl.while_(init_values=(...)):`
with `pl.cond(...)` first in the body, parsed into WhileStmt; a `pl.range` loop whose body
may break is parsed as a while loop over its index."""

import ast

from pypto._core import ir

from .expr_parser import is_ir
from .loop_exits import LoopExits
from .stmt_parser import YieldFrame, assigned_names


class WhileParser:
    """Mixin of FunctionParser (uses the loop helpers of ControlFlowParser)."""

    def stmt_While(self, node):
        """`while cond:` — names rebound in the body are carried from one iteration to the next
        and the condition is tested on them before every iteration."""
        if node.orelse:
            raise self.error(node, "while/else is not supported", "move the else part after the loop")
        exits = LoopExits.of(self, node)
        if exits is not None:
            if exits.has_break:
                self.bind(exits.brk, False, node)
            node = ast.copy_location(ast.While(test=exits.condition(node.test), body=exits.body(), orelse=[]), node)
        self.parse_while(node)

    def parse_while(self, node):
        assigned = assigned_names(node.body)
        read = [n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)]
        for n in read:
            if n in assigned and n not in self.symbols:
                raise self.error(node, f"'{n}' is read by the while condition but first assigned in the loop body",
                                 f"give '{n}' its first value before the loop")
        names = [n for n in assigned if n in self.symbols]
        if not set(read) & set(names):
            value = self.eval(node.test)
            if not is_ir(value) and not value:
                return  # `while False:` (a compile-time condition): the body never runs
            raise self.error(node, f"the condition '{self.text(node.test)}' of this while loop never changes: "
                                   "nothing it reads is rebound in the loop body, so the loop would never end",
                             "rebind a name the condition reads in the body (e.g. `i = i + 1`), add a break, "
                             "or use `for i in pl.range(n):`")
        span = self.span(node)
        before = dict(self.symbols)
        inits = [self.to_expr(self.symbols[n], node) for n in names]
        iter_args = self.enter_loop(names, inits, span)
        cond = self.while_condition(node.test, node)
        frame = YieldFrame("while", False)
        body = self.loop_body(node.body, frame)
        return_vars = self.leave_loop(node, before, names, iter_args, inits, body, frame)
        self.emit(ir.WhileStmt(iter_args, inits, cond, self.seq(body, node.body), return_vars, span))

    def while_condition(self, test, node):
        cond = self.eval(test)
        if not is_ir(cond):
            raise self.error(node, f"the condition '{self.text(test)}' of this while loop is the constant {cond!r}",
                             "test a value the loop body changes, e.g. `while i < n:`")
        if not isinstance(cond.type, ir.ScalarType):
            raise self.error(node, f"the condition '{self.text(test)}' is not a scalar",
                             "compare scalars, e.g. `while i < n:`")
        return cond

    def explicit_while(self, node, call):
        """The printed form: `for (x, n) in pl.while_(init_values=(x0, n0)):` whose body starts
        with `pl.cond(<condition on x, n>)` and ends with `x2, n2 = pl.yield_(...)`."""
        args, kwargs = self.call_args(call)
        init_values = kwargs.pop("init_values", None)
        target = node.target
        if args or kwargs or not isinstance(init_values, (tuple, list)):
            raise self.error(node, f"pl.while_ takes only init_values=(...), got '{self.text(call)}'",
                             "write `for (x,) in pl.while_(init_values=(x0,)):` then `pl.cond(x < n)`")
        if not isinstance(target, (ast.Tuple, ast.List)) or not all(isinstance(e, ast.Name) for e in target.elts):
            raise self.error(node, f"the target of a pl.while_ loop is a tuple of names, not '{self.text(target)}'",
                             "write `for (x, n) in pl.while_(init_values=(x0, n0)):`")
        names = [e.id for e in target.elts]
        if len(names) != len(init_values):
            raise self.error(node, f"init_values must be a tuple of {len(names)} values, one per loop-carried name",
                             "write init_values=(x,) for one value")
        first = node.body[0]
        if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Call) and
                self.is_construct(first.value.func, "cond") and len(first.value.args) == 1 and
                not first.value.keywords):
            raise self.error(first, "a pl.while_ body must start with `pl.cond(<condition>)`",
                             "write `pl.cond(x < n)` as the first statement of the loop body")
        span = self.span(node)
        before = dict(self.symbols)
        inits = [self.to_expr(v, node) for v in init_values]
        iter_args = self.enter_loop(names, inits, span)
        cond = self.while_condition(first.value.args[0], first)
        frame = YieldFrame("while", True)
        body = self.loop_body(node.body[1:], frame)
        return_vars = self.leave_loop(node, before, names, iter_args, inits, body, frame)
        self.emit(ir.WhileStmt(iter_args, inits, cond, self.seq(body, node.body), return_vars, span))

    def range_with_break(self, node, loop_name, start, stop, step, exits):
        """`for i in pl.range(a, b, s):` whose body may break is parsed as the while loop
        `i = a; while not broken and i < b: <body>; i = i + s` (i > b for s < 0), so it stops
        at the break instead of running empty iterations to the end. When the body rebinds
        `i` itself, a hidden index is carried instead and `i` is set from it first."""
        n = exits.brk[len("__break"):]
        rebound = loop_name in assigned_names(node.body)
        idx, stop_name, step_name = (f"__index{n}" if rebound else loop_name), f"__stop{n}", f"__step{n}"
        outer = self.symbols.get(loop_name)
        self.bind(idx, start, node)
        self.bind(stop_name, stop, node)
        self.bind(step_name, step, node)
        self.bind(exits.brk, False, node)

        def located(new):
            return ast.fix_missing_locations(ast.copy_location(new, node))

        def name(n_, store=False):
            return located(ast.Name(id=n_, ctx=ast.Store() if store else ast.Load()))

        def compare(op):
            return located(ast.Compare(left=name(idx), ops=[op], comparators=[name(stop_name)]))

        if is_ir(step):
            def signed(op, cmp):
                sign = located(ast.Compare(left=name(step_name), ops=[op], comparators=[ast.Constant(0)]))
                return located(ast.BoolOp(op=ast.And(), values=[sign, compare(cmp)]))
            test = located(ast.BoolOp(op=ast.Or(), values=[signed(ast.Gt(), ast.Lt()), signed(ast.Lt(), ast.Gt())]))
        else:
            test = compare(ast.Lt() if step > 0 else ast.Gt())
        advance = located(ast.Assign(targets=[name(idx, True)],
                                     value=located(ast.BinOp(left=name(idx), op=ast.Add(), right=name(step_name)))))
        if rebound:
            body = [located(ast.Assign(targets=[name(loop_name, True)], value=name(idx))), advance] + exits.body()
        else:
            body = exits.body() + [advance]
        self.parse_while(located(ast.While(test=exits.condition(test), body=body, orelse=[])))
        # The loop variable is not visible after the loop, as with any pl.range loop.
        if outer is None:
            self.symbols.pop(loop_name, None)
            self.out_of_scope[loop_name] = f"a loop body at line {self.span(node).line}"
        else:
            self.symbols[loop_name] = outer
