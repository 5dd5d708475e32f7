"""``python -m cosim.cli``."""

import sys

try:  # Ctrl-C while Python imports cosim is one line too, never a traceback
    from cosim.cli import main

    status = main()
except KeyboardInterrupt:
    print("cosim: interrupted before it wrote anything", file=sys.stderr)
    status = 130
sys.exit(status)
