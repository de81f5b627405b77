"""Op-call arguments are bound to parameters in C++ (bind_op_arguments), shared by the parser
and make_op_call: positional order, keyword aliases, and the errors."""
import pytest
from pypto import ir
from pypto._core import PyptoError


def test_binding_maps_positions_and_aliases_to_parameters():
    # pl.tile.mgather(tensor, indices, coalesce, gather_oob, target_memory, scratch, valid_shape); PyPTO spells mem=, idx=
    assert list(ir.bind_op_arguments("tile.mgather", 1, ["idx", "valid_shape"], "tile.mgather")) == [0, 1, 6]
    assert list(ir.bind_op_arguments("tile.load", 0, ["shapes", "offsets", "tensor"], "load")) == [2, 1, 0]


@pytest.mark.parametrize("positional, keywords, message, fix", [
    (2, ["mem"], r"pl.mgather got argument 'mem' twice", r"call it as pl.tile.mgather\(tensor, indices, "),
    (8, [], r"pl.mgather takes at most 7 arguments, got 8", r"call it as pl.tile.mgather\("),
    (0, ["indicse"], r"pl.mgather has no keyword argument 'indicse'", r"did you mean 'indices='\? call it as"),
    (0, ["bogus"], r"pl.mgather has no keyword argument 'bogus'", r"fix: call it as pl.tile.mgather\("),
])
def test_binding_errors_name_the_spelling_and_the_fix(positional, keywords, message, fix):
    with pytest.raises(PyptoError, match=message) as e:
        ir.bind_op_arguments("tile.mgather", positional, keywords, "mgather")
    assert e.match(fix)


def test_make_op_call_binds_the_same_way():
    with pytest.raises(PyptoError, match=r"pl.tile.exp has no keyword argument 'tiel'(.|\n)*did you mean 'tile='"):
        ir.make_op_call("tile.exp", [], {"tiel": ir.ConstInt(1, ir.DataType.INDEX, ir.Span())})


def test_global_tensor_operands_are_stated_in_the_records():
    ddr = {(op.name, p.name) for op in ir.all_ops() for p in op.params if p.memory == ir.MemorySpace.DDR}
    assert {("tile.load", "tensor"), ("tile.store", "output_tensor"), ("tile.mgather", "tensor"),
            ("tile.mscatter", "output_tensor")} <= ddr
    assert all(name.startswith(("tile.", "dist.")) for name, _ in ddr)  # dist.*: pld window operands


def test_signature_comes_from_the_record():
    assert ir.op_signature("tile.fmods") == "pl.tile.fmods(tile, scalar)"
    with pytest.raises(PyptoError, match=r"unknown op 'pl.tile.nope'"):
        ir.op_signature("tile.nope")
