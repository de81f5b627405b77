"""RunConfig and its checks: the jit package's (pypto.jit.config), under the name they had here."""

from pypto.jit.config import (ENGINES, MEMORY_PLANNERS, VERIFY_LEVELS, RunConfig, backend_platform,  # noqa: F401
                              check_strategy, default_engine)
