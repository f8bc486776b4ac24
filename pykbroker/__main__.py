"""`python -m pykbroker` and the `pykbroker` command: the broker command of `cli`.

The cyclic garbage collector is off while the broker's modules load: importing them allocates
tens of thousands of objects, all of which live as long as the process, and each automatic
collection would scan them again. `cli.main` freezes what start-up made and turns the collector
back on before it serves (or runs a tool).
"""

import gc
import sys

gc.disable()

from .cli import main  # noqa: E402  (after the collector is off)


def run() -> int:
    return main()


if __name__ == "__main__":
    sys.exit(run())
