#!/usr/bin/env python3
"""Where the GPU time of a store's workloads went, as a pandas table.

    python3 examples/python/goodput_report.py sqlite:///var/lib/lens/lens.db
    python3 examples/python/goodput_report.py postgresql://lens@db:5432/lens --namespace research

One row per top-level workload with GPUs: its goodput (productive share of its wall time), the
GPU-hours it held and how many of them were lost to scheduling, start-up, checkpoints, restarts
and idle time (docs/insights.md), worst first. Needs python3-pandas.
"""
import argparse
import sys

import pandas as pd

import lens

LOSSES = ["scheduling_s", "startup_s", "checkpoint_s", "restart_s", "idle_s"]


def workloads(store, namespace):
    """Every top-level workload with a GPU request, page by page."""
    page = 1
    while True:
        result = store.workloads(parent_uid="", namespace=namespace, page_num=page, page_size=500)
        yield from (w for w in result["items"] if w["gpu_request"] > 0)
        if page * 500 >= result["total"]:
            return
        page += 1


def report(store, namespace=None):
    rows = []
    for w in workloads(store, namespace):
        try:
            g = lens.goodput(store, w["uid"])
        except lens.NotFoundError:
            continue  # deleted since it was listed
        t = g["total"]
        gpus = w["gpu_request"]
        row = {"workload": f'{w["namespace"]}/{w["name"]}', "kind": w["kind"],
               "gpus": gpus, "goodput": t["goodput"], "restarts": g["restarts"],
               "gpu_hours": gpus * t["wall_s"] / 3600, "mfu": g["mfu"]}
        for loss in LOSSES:
            row[loss.removesuffix("_s") + "_gpu_hours"] = gpus * t[loss] / 3600
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame["lost_gpu_hours"] = frame["gpu_hours"] * (1 - frame["goodput"])
    return frame.sort_values("lost_gpu_hours", ascending=False, ignore_index=True)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", help="store URL (sqlite:///path or postgresql://...)")
    parser.add_argument("--namespace", help="only this namespace's workloads")
    args = parser.parse_args(argv[1:])
    try:
        store = lens.Store.open(args.store)
    except (OSError, ValueError, lens.LensError) as e:
        print(f"goodput_report.py: {e}", file=sys.stderr)
        return 1
    frame = report(store, args.namespace)
    if frame.empty:
        print("no workloads with GPUs in this store")
        return 0
    with pd.option_context("display.width", 200, "display.max_columns", None,
                           "display.float_format", "{:.2f}".format):
        print(frame.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
