"""Shared by the distributed examples: the rank count from the command line (-d 0,1,2 or -n 3)."""

import argparse

from pypto.runtime import DistributedConfig, RunConfig


def config_from_args(default_ranks=2):
    ap = argparse.ArgumentParser()
    ap.add_argument("-d", "--devices", default=None, help="device ids, e.g. 0,1,2,3")
    ap.add_argument("-n", "--nranks", type=int, default=default_ranks)
    ap.add_argument("-p", "--platform", default=None)
    ap.add_argument("--mode", default=None)
    ap.add_argument("--use-builtin", action="store_true")
    args = ap.parse_args()
    ids = [int(d) for d in args.devices.split(",")] if args.devices else list(range(args.nranks))
    return RunConfig(distributed_config=DistributedConfig(device_ids=ids)), args
