#!/usr/bin/env python3
"""Prints the training loss per iteration of a training log, using the `lens` module.

    python3 examples/python/parse_log.py examples/logs/primus_llama3_70b.log

`lens` is the module built in build/bindings/python (PYTHONPATH=build/bindings/python) or
installed. With pandas installed the records are also shown as a DataFrame; pandas is optional.
"""
import sys

import lens


def main(argv):
    if len(argv) != 2:
        print(f"usage: {argv[0]} LOG_FILE", file=sys.stderr)
        return 2
    try:
        log = lens.parse_training_log(argv[1])
    except (FileNotFoundError, PermissionError, ValueError) as e:
        # lens raises these (NotFoundError, ...) with a message that names the path.
        print(f"parse_log.py: {e}", file=sys.stderr)
        return 1

    # Every typed field is an attribute; it is None when the log did not print it.
    print(f"{'run':>3} {'iteration':>9} {'loss':>10} {'step ms':>9}")
    for r in log.records:
        loss = "-" if r.loss is None else f"{r.loss:.4f}"
        step = "-" if r.elapsed_ms is None else f"{r.elapsed_ms:.1f}"
        print(f"{r.run:>3} {r.iteration:>9} {loss:>10} {step:>9}")
    for e in log.events:
        print(f"event: {e.type} (run {e.run}, iteration {e.iteration})")

    try:
        import pandas as pd
    except ImportError:
        return 0
    df = pd.DataFrame(log.records_as_dicts())
    if "loss" in df:
        print()
        print(df.groupby("run")["loss"].describe())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
