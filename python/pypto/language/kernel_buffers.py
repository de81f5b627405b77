"""`pl.create_tensor(...)` in kernel code (an InCore function or a `with pl.at` body) is an
on-chip buffer, as PyPTO's implementation converts tensor.create in InCore code to a tile
(docs/language.md, "pl.create_tensor inside a kernel"). Its memory follows its uses: a name
the function later rebinds to a cube result (`acc = pl.matmul(a, b)`,
`acc = pl.matmul_acc(acc, a, b)`) is the accumulator and lands in Acc; any other buffer is a
Vec tile. Without init_value its contents are undefined (pl.tile.create); init_value fills
it (pl.tile.full). Whether the tile fits its buffer is checked when memory is planned."""

import ast

from pypto._core import ir

# The tile ops whose result is an Acc (L0C) tile.
CUBE_RESULTS = {"matmul", "matmul_acc", "matmul_bias", "gemv", "gemv_acc", "gemv_bias"}


def _call_name(node):
    f = node.func if isinstance(node, ast.Call) else None
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


class KernelBufferParser:
    def kernel_buffer(self, attrs, exprs, node):
        """The tile op that pl.create_tensor(exprs, attrs) is at `node` in kernel code."""
        name = self.buffer_name(node)
        acc = name is not None and self.cube_accumulates(name, node)
        dims = exprs["shape"].elems
        if not all(isinstance(d, ir.ConstInt) for d in dims):
            raise self.error(node, f"pl.create_tensor in kernel code is an on-chip buffer, but its shape "
                                   f"[{', '.join(str(d) for d in dims)}] is known only at run time",
                             "give the buffer a static shape (tiles have static shapes) and mark the valid part "
                             "with pl.tile.set_validshape, or create the tensor in the orchestration")
        shape, dtype = [d.value for d in dims], attrs.get("dtype", ir.DataType.FP32)
        init = attrs.get("init_value")
        if init is not None and init != "":
            if acc:
                raise self.error(node, f"pl.create_tensor: '{name}' is the accumulator of a matmul here and so lives "
                                       "in Acc (L0C), which the vector unit cannot fill with init_value",
                                 f"drop init_value and start '{name}' with pl.matmul in the first iteration "
                                 f"(if k == 0: {name} = pl.matmul(a, b) else: {name} = pl.matmul_acc({name}, a, b))")
            return self.op_call("tile.full", [], {"shape": shape, "dtype": dtype, "value": init}, node)
        memory = ir.MemorySpace.Acc if acc else ir.MemorySpace.Vec
        return self.op_call("tile.create", [], {"shape": shape, "dtype": dtype, "target_memory": memory}, node)

    def eval_into_tile(self, name, value_node):
        """Evaluates the value of `name = value_node`. In kernel code, a cube op rebinding a
        name that holds an Acc tile (`acc = pl.create_tensor(...)` then, in the first arm of the
        K loop, `acc = pl.matmul(a[:, k:k + 64], b[k:k + 64, :])` over tensor views) is the tile
        op, as in PyPTO where a slice inside a kernel is a tile: its tensor operands are loaded
        whole and the result is the Acc tile the other arm's pl.matmul_acc carries."""
        old = self.symbols.get(name)
        if isinstance(value_node, ast.Call) and _call_name(value_node) in CUBE_RESULTS \
                and isinstance(getattr(old, "type", None), ir.TileType) \
                and old.type.memory == ir.MemorySpace.Acc and self.in_kernel_code():
            self.tile_result_call = value_node
        try:
            return self.eval(value_node)
        finally:
            self.tile_result_call = None

    def buffer_name(self, node):
        """The name `name = pl.create_tensor(...)` binds, or None."""
        for st in ast.walk(self.fdef):
            if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is node:
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                if len(targets) == 1 and isinstance(targets[0], ast.Name):
                    return targets[0].id
        return None

    def kernel_region(self, node):
        """The innermost `with` statement (a pl.at / pl.spmd body) holding `node`, else the function."""
        region = self.fdef
        for w in ast.walk(self.fdef):
            if isinstance(w, ast.With) and any(n is node for n in ast.walk(w)):
                region = w  # ast.walk goes outside in: the last match is the innermost
        return region

    def cube_accumulates(self, name, node):
        """True when, after `node` and in its kernel region, `name` is rebound to a cube result
        or passed as the accumulator of matmul_acc / gemv_acc."""
        after = (node.lineno, node.col_offset)
        for st in ast.walk(self.kernel_region(node)):
            if not hasattr(st, "lineno") or (st.lineno, st.col_offset) <= after:
                continue
            if isinstance(st, (ast.Assign, ast.AnnAssign)):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets) \
                        and _call_name(st.value) in CUBE_RESULTS:
                    return True
            if isinstance(st, ast.Call) and _call_name(st) in ("matmul_acc", "gemv_acc"):
                first = st.args[0] if st.args else next((k.value for k in st.keywords if k.arg == "acc"), None)
                if isinstance(first, ast.Name) and first.id == name:
                    return True
        return False
