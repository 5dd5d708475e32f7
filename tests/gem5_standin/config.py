# The options of gem5's se_biglittle.py (../shared/tools/gem5/workloads), for the gem5 stand-in's --help.
import argparse

p = argparse.ArgumentParser()
for name in ("--big-freq", "--little-freq", "--big-cores", "--little-cores", "--epoch", "--mem-type", "--big-l2-size", "--little-l2-size"):
    p.add_argument(name)
p.add_argument("--seed", help="ignored: a stand-in axis for large studies")
p.add_argument("cmd", nargs=argparse.REMAINDER)
p.parse_args()
