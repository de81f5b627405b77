"""`python -m benchmarks [--json PATH]`: see benchmarks/run.py."""

from benchmarks.run import main

main()
