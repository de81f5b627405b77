"""The `pypto` command: `pypto doctor`, `pypto report BUILD_DIR`."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pypto", description="pypto command-line tools")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("doctor", help="check the environment and say how to fix problems")
    report = sub.add_parser(
        "report", help="write one self-contained HTML page about a build directory"
    )
    report.add_argument("build_dir", help="a program's output_dir (passes_dump/, kernels/, ...)")
    report.add_argument(
        "-o", "--output", help="HTML file to write (default: BUILD_DIR/report.html)"
    )
    args = parser.parse_args(argv)
    if args.command == "report":
        from pypto.tools.report import main as report_main

        try:
            return report_main(args.build_dir, args.output)
        except FileNotFoundError as e:
            print(f"pypto report: {e}", file=sys.stderr)
            return 1
    if args.command == "doctor":
        from pypto.tools.doctor import main as doctor

        return doctor()
    return 2


if __name__ == "__main__":
    sys.exit(main())
