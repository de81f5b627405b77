"""Pass-manager names PyPTO programs import (`pypto.ir.pass_manager`)."""

from enum import Enum


class OptimizationStrategy(Enum):
    """Accepted for compatibility; pypto runs its one default pipeline for every strategy."""

    Default = "default"
