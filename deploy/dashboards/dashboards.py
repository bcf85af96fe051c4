#!/usr/bin/env python3
"""Writes the Grafana dashboards of this folder (run once, check in the output).

    python3 deploy/dashboards/dashboards.py        # rewrites *.json and compat/*.json

Deterministic: the same input gives the same bytes. Nothing runs at deploy or test time; the
JSON files are what Grafana imports. Every panel id is written here by hand, so an id never
changes when a panel is added or moved; new panels take a new id.

The layout helpers are in dashboard_layout.py; the dashboards themselves, as data:
dashboards_lens.py (Lens's metric names) and dashboards_compat.py (the original platform's
names, exported with `metrics.compatNames: true`).
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import dashboards_compat  # noqa: E402
import dashboards_lens  # noqa: E402


def write(path, dashboard):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(dashboard, f, indent=2, ensure_ascii=False)
        f.write("\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for name, dashboard in dashboards_lens.ALL.items():
        write(os.path.join(here, name), dashboard)
    os.makedirs(os.path.join(here, "compat"), exist_ok=True)
    for name, dashboard in dashboards_compat.ALL.items():
        write(os.path.join(here, "compat", name), dashboard)


if __name__ == "__main__":
    main()
