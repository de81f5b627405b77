"""PyPTO's module path of the distributed runner (pld; pypto.jit.distributed holds it)."""

from pypto.jit.distributed import (DistributedCompiledProgram, DistributedConfig, DistributedWorker,  # noqa: F401
                                   example_config)
