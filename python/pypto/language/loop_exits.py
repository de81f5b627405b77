"""`break` and `continue`, lowered at parse time into structured control flow (the IR has
neither). `continue` sets a flag that is reset at the top of every iteration; `break` sets a
flag carried from one iteration to the next. The statements after a statement that may
exit run under `if not <flag>:`, and the loop's condition tests the break flag, so a loop
stops as soon as it breaks. The rewrite works on new AST nodes (the user's are never
changed) that keep the line numbers of the statements they come from."""

import ast


def _exits(stmts):
    """The `break` / `continue` nodes in `stmts` that leave the loop whose body `stmts` is
    (nested loops keep their own)."""
    found = []
    for s in stmts:
        if isinstance(s, (ast.Break, ast.Continue)):
            found.append(s)
        elif isinstance(s, ast.If):
            found += _exits(s.body) + _exits(s.orelse)
        elif isinstance(s, (ast.With, ast.Try)):
            found += _exits(s.body) + _exits(getattr(s, "orelse", [])) + _exits(getattr(s, "finalbody", []))
            for h in getattr(s, "handlers", []):
                found += _exits(h.body)
    return found


def _located(new, old):
    ast.copy_location(new, old)
    return ast.fix_missing_locations(new)


def _name(name, old, store=False):
    return _located(ast.Name(id=name, ctx=ast.Store() if store else ast.Load()), old)


def _has_yield(stmts):
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "yield_"
               for s in stmts for n in ast.walk(s))


class LoopExits:
    """The break/continue flags of one loop body that contains break or continue."""

    def __init__(self, parser, loop, exits):
        self.parser, self.loop = parser, loop
        self.has_break = any(isinstance(e, ast.Break) for e in exits)
        self.has_continue = any(isinstance(e, ast.Continue) for e in exits)
        n = parser.loop_exit_count = getattr(parser, "loop_exit_count", 0) + 1
        self.brk, self.cont = f"__break{n}", f"__continue{n}"

    @staticmethod
    def of(parser, loop):
        """The LoopExits of `loop` (an ast.For or ast.While), or None when its body has none."""
        exits = _exits(loop.body)
        return LoopExits(parser, loop, exits) if exits else None

    def assign(self, name, value, old):
        return _located(ast.Assign(targets=[_name(name, old, store=True)], value=ast.Constant(value)), old)

    def not_exited(self, old, flags):
        """`not __break` / `not __continue` / `not (__break or __continue)` at `old`'s line."""
        names = [_name(f, old) for f in flags]
        operand = names[0] if len(names) == 1 else ast.BoolOp(op=ast.Or(), values=names)
        return _located(ast.UnaryOp(op=ast.Not(), operand=operand), old)

    def body(self):
        """The loop body with exits turned into flag assignments and the rest guarded; it
        starts by clearing the continue flag."""
        stmts = self.rewrite(self.loop.body)
        if self.has_continue:
            stmts = [self.assign(self.cont, False, self.loop.body[0])] + stmts
        return stmts

    def break_guarded_body(self):
        """The body run only while the loop has not broken (loops whose iterations cannot stop
        early, e.g. pl.unroll: the remaining iterations do nothing)."""
        stmts = self.body()
        if not self.has_break:
            return stmts
        return [_located(ast.If(test=self.not_exited(self.loop.body[0], [self.brk]), body=stmts, orelse=[]),
                         self.loop.body[0])]

    def condition(self, test):
        """A loop condition that is also false once the loop has broken."""
        if not self.has_break:
            return test
        return _located(ast.BoolOp(op=ast.And(), values=[self.not_exited(test, [self.brk]), test]), test)

    def rewrite(self, stmts):
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, ast.Break):
                out.append(self.assign(self.brk, True, s))
                return out  # statements after an unconditional exit never run
            if isinstance(s, ast.Continue):
                out.append(self.assign(self.cont, True, s))
                return out
            exits = _exits([s])
            if not exits:
                out.append(s)
                continue
            if not isinstance(s, ast.If):
                kind = "break" if isinstance(exits[0], ast.Break) else "continue"
                raise self.parser.error(exits[0], f"{kind} inside a '{type(s).__name__.lower()}' block cannot leave "
                                                  "the loop around it (the block is a task or region of its own)",
                                        f"put the loop inside the block, or move the {kind} out of it")
            if _has_yield(s.body) or _has_yield(s.orelse):
                raise self.parser.error(s, "an if/else that ends with pl.yield_ cannot also break or continue",
                                        "rebind the names in the arms instead of yielding them "
                                        "(`x = value` in each arm)")
            out.append(_located(ast.If(test=s.test, body=self.rewrite(s.body), orelse=self.rewrite(s.orelse)), s))
            rest = stmts[i + 1:]
            if rest:
                flags = ([self.brk] if any(isinstance(e, ast.Break) for e in exits) else []) + \
                        ([self.cont] if any(isinstance(e, ast.Continue) for e in exits) else [])
                out.append(_located(ast.If(test=self.not_exited(rest[0], flags), body=self.rewrite(rest), orelse=[]),
                                    rest[0]))
            return out
        return out
