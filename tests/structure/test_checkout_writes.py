"""The suite's guard (tests/conftest.py): a test that writes into the checkout fails, with
the path it wrote and the fix; a test writing under tmp_path passes."""

import pathlib

pytest_plugins = ["pytester"]

CONFTEST = pathlib.Path(__file__).resolve().parents[1] / "conftest.py"


def test_a_test_writing_into_the_checkout_fails(pytester):
    tests = pytester.mkdir("tests")
    (tests / "conftest.py").write_text(CONFTEST.read_text())
    (tests / "test_writes.py").write_text(
        "import pathlib\n"
        "ROOT = pathlib.Path(__file__).resolve().parents[1]\n"
        "def test_leaves_build_output():\n"
        "    (ROOT / 'build_output' / 'prog').mkdir(parents=True)\n"
        "def test_uses_tmp_path(tmp_path):\n"
        "    (tmp_path / 'build_output').mkdir()\n"
    )
    result = pytester.runpytest("-p", "no:cacheprovider", str(tests))
    result.assert_outcomes(passed=2, errors=1)
    out = result.stdout.str()
    assert "test_leaves_build_output wrote ['build_output', 'build_output/prog'] into the checkout" in out
    assert "fix: write under a temporary directory" in out
