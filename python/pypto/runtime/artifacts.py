"""The build directory's files: the jit package's (pypto.jit.artifacts), under the name they had here."""

from pypto.jit.artifacts import (write_kernel_pass_dumps, write_kernels, write_memory_map, write_pass_dumps,  # noqa: F401
                                 write_pipeline_profile, write_report)
