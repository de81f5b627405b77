"""The `pypto` command: `pypto doctor`."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pypto", description="pypto command-line tools")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("doctor", help="check the environment and say how to fix problems")
    args = parser.parse_args(argv)
    if args.command == "doctor":
        from pypto.tools.doctor import main as doctor

        return doctor()
    return 2


if __name__ == "__main__":
    sys.exit(main())
