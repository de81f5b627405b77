"""The MPI transport (docs/distributed.md "The MPI transport"): the distributed examples (at 2, 3
and 4 ranks) and the collectives (every ReduceOp; windows of many tiles; at 2 and 3 ranks) under
`mpirun -n N python ...`, FP16 and FP32 atomic adds, a prepared worker with a host callback, and
failures that end the job with a report (a failed rank, a deadlock) instead of hanging. Every run
has a time limit. Skipped with the reason where mpirun or mpi4py is missing, except under CI
(.ci/run installs them)."""

import importlib.util
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import pytest

import pypto

HERE = pathlib.Path(__file__).resolve().parent
EXAMPLES = HERE.parents[1] / "examples" / "distributed"
LIMIT_S = 200  # one mpirun (under conftest.py's per-test limit)


def _missing():
    if shutil.which("mpirun") is None:
        return "mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)"
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed (pip install mpi4py)"
    return None


MISSING = _missing()
if MISSING and os.environ.get("CI", "").lower() in ("1", "true", "yes"):  # CI runs .ci/run with CI=true
    raise RuntimeError(f"CI=1 runs the MPI transport's tests, but {MISSING}; fix: .ci/run installs them")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


def mpirun(n, *argv):
    """(exit status, output, seconds) of `mpirun -n n python argv...`, killed after LIMIT_S."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(pypto.__file__)) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYPTO_DIST_TRANSPORT", None)
    # Containers often forbid the cross-process memory copy (ptrace) of the shared-memory BTL.
    env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    cmd = ["mpirun", "--oversubscribe", "-n", str(n), "-x", "PYTHONPATH"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += [sys.executable, *map(str, argv)]
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        pytest.fail(f"mpirun -n {n} {' '.join(map(str, argv))} ran past {LIMIT_S} s (a hang):\n{out[-4000:]}")
    return p.returncode, out, time.monotonic() - start


def ok(n, *argv):
    rc, out, _ = mpirun(n, *argv)
    assert rc == 0 and out.count("OK") == 1, out[-4000:]  # printed once: by rank 0, the driver


EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.glob("0*.py"))


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_example_under_mpirun(name, n):
    ok(n, EXAMPLES / name)


@pytest.mark.parametrize("n", [2, 3])
def test_allreduce_every_op_under_mpirun(n):
    ok(n, HERE / "mpi_cases.py", "reduce")


@pytest.mark.parametrize("n", [2, 3])
def test_allreduce_of_each_dtype_under_mpirun(n):
    ok(n, HERE / "mpi_cases.py", "dtypes")


def test_collectives_under_mpirun():
    ok(3, HERE / "mpi_cases.py", "collectives")


def test_collectives_over_many_tiles_under_mpirun():
    ok(3, HERE / "mpi_cases.py", "big")


def test_fp16_and_fp32_atomic_adds_into_one_window_under_mpirun():
    ok(3, HERE / "mpi_cases.py", "half")


def test_prepared_worker_and_host_callback_under_mpirun():
    ok(2, HERE / "mpi_cases.py", "worker")


def test_per_rank_diagnostics_and_one_swimlane_under_mpirun(tmp_path):
    ok(2, HERE / "mpi_cases.py", "dfx", tmp_path)


def test_failed_rank_stops_the_others_under_mpirun():
    rc, out, seconds = mpirun(2, HERE / "mpi_cases.py", "fail")
    assert rc != 0 and "OK" not in out, out[-4000:]
    assert "RuntimeError: rank 1 failed: " in out and "peer 7 is outside the domain of 2 ranks" in out, out[-4000:]
    assert seconds < 60, f"took {seconds:.0f} s"


def test_deadlock_is_reported_under_mpirun():
    rc, out, _ = mpirun(2, HERE / "mpi_cases.py", "deadlock")
    assert rc != 0 and "OK" not in out, out[-4000:]
    assert "deadlock: every rank waits or is done" in out and "rank 0 waits at" in out and "sig[3]" in out, out[-4000:]
    assert "== 1, current value 0" in out and "(it notified nobody)" in out, out[-4000:]


def test_rank_that_never_reaches_the_call_is_reported_not_awaited():
    rc, out, seconds = mpirun(2, HERE / "mpi_cases.py", "absent")
    assert rc != 0 and "MPI ranks [1] did not reach a distributed call within 2 s" in out, out[-4000:]
    assert seconds < 60, f"took {seconds:.0f} s"


def test_wrong_process_count_is_an_error_with_the_fix():
    rc, out, _ = mpirun(2, EXAMPLES / "01_hello_rank.py", "-n", "3")
    assert rc != 0 and "asks for 3 ranks but mpirun started 2 processes; fix: mpirun -n 3" in out, out[-4000:]
