"""lens.idle_gpus, lens.goodput and the GPU peak table over a real SQLite store.

Rows are written the way lens-jobs, lens-controller and lens-telemetry leave them (the store's own
schema, through sqlite3), the iterations by lens.Store.store_training_log from a CRI-wrapped
Megatron log; the answers are worked out by hand below each history.
"""

import json
import os
import pathlib
import sqlite3

import pytest

import lens

FIXTURES = pathlib.Path(os.environ.get(
    "LENS_FIXTURES_DIR", pathlib.Path(__file__).resolve().parents[3] / "test" / "fixtures"))
T0 = 1764000000  # Unix seconds


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "lens.db"
    store = lens.Store.open(f"sqlite://{path}")
    conn = sqlite3.connect(path)
    us = T0 * 1_000_000
    conn.execute("INSERT INTO nodes (name, labels, created_at, updated_at) VALUES (?,?,?,?)",
                 ("gpu-node-1", "{}", us, us))
    for index in range(2):
        conn.execute(
            "INSERT INTO gpu_devices (node, gpu_index, vendor, model, serial, bdf, updated_at)"
            " VALUES (?,?,?,?,?,?,?)",
            ("gpu-node-1", index, "amd", "AMD Instinct MI300X", f"SER{index}",
             f"0000:{0x11 + index:02x}:00.0", us))
    conn.execute(
        "INSERT INTO gpu_workloads (uid, api_version, kind, name, namespace, parent_uid, status,"
        " gpu_request, labels, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        ("w-1", "kubeflow.org/v1", "PyTorchJob", "llama", "ml", "", "Running", 8, "{}", us, us))
    conn.execute(
        "INSERT INTO gpu_pods (uid, name, namespace, node, phase, owner_uid, ip, gpu_allocated,"
        " running, deleted, labels, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        ("p-1", "llama-0", "ml", "gpu-node-1", "Running", "w-1", "10.0.0.7", 2, 1, 0, "{}", us,
         us))
    conn.execute(
        "INSERT INTO workload_pod_references (workload_uid, pod_uid, created_at) VALUES (?,?,?)",
        ("w-1", "p-1", us))
    conn.execute(
        "INSERT INTO node_containers (container_id, node, runtime_namespace, pod_uid, pod_name,"
        " pod_namespace, container_name, image, state, privileged, pid, labels, created_at,"
        " started_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        ("c-1", "gpu-node-1", "k8s.io", "p-1", "llama-0", "ml", "trainer", "train:1", "running",
         0, 42, "{}", us, us, us))
    for index in range(2):
        conn.execute(
            "INSERT INTO node_container_devices (container_id, kind, device_key, bdf, source)"
            " VALUES (?,?,?,?,?)", ("c-1", "gpu", f"SER{index}", "", "pod-resources"))
    # Utilisation every 30 s for an hour: GPU 0 at 2% from minute 10 to 50 (90% otherwise),
    # GPU 1 at 90% throughout.
    for index in range(2):
        labels = json.dumps({"gpu": str(index), "node": "gpu-node-1"}, separators=(",", ":"))
        cur = conn.execute("INSERT INTO sample_series (metric, labels) VALUES (?,?)",
                           ("lens_gpu_utilization_ratio", labels))
        for k in range(120):
            minute = k / 2
            value = 0.02 if index == 0 and 10 <= minute < 50 else 0.9
            conn.execute("INSERT INTO samples (series_id, ts_ms, value) VALUES (?,?,?)",
                         (cur.lastrowid, (T0 + 30 * k) * 1000, value))
    conn.commit()
    conn.close()
    return store


def test_idle_gpus_name_the_holder_and_the_waste(db):
    # GPU 0 idle from minute 10 to the sample at minute 50: 40 minutes, 2/3 GPU-hour, over the
    # 30-minute window; GPU 1 busy.
    got = lens.idle_gpus(db, from_s=T0, to_s=T0 + 3600)
    assert len(got["episodes"]) == 1
    e = got["episodes"][0]
    assert (e["node"], e["gpu"], e["serial"]) == ("gpu-node-1", "0", "SER0")
    assert (e["pod_name"], e["workload_uid"], e["workload_name"]) == ("llama-0", "w-1", "llama")
    assert e["since"] == T0 + 600 and e["until"] == T0 + 3000
    assert e["gpu_hours"] == pytest.approx(40 / 60)
    assert e["mean_utilization"] == pytest.approx(0.02)
    assert not e["ongoing"]
    assert got["workloads"] == [{"workload_uid": "w-1", "workload_name": "llama",
                                 "namespace": "ml", "idle_gpus_now": 0,
                                 "gpu_hours": pytest.approx(40 / 60), "episodes": 1}]
    # A 45-minute window: nothing; a threshold of 0 is refused.
    assert lens.idle_gpus(db, from_s=T0, to_s=T0 + 3600, window_s=2700)["episodes"] == []
    with pytest.raises(lens.InvalidArgumentError, match="threshold"):
        lens.idle_gpus(db, from_s=T0, to_s=T0 + 3600, threshold=0)


def test_goodput_of_a_stored_training_log(db, tmp_path):
    stored = db.store_training_log("w-1", FIXTURES / "training" / "cri_wrapped.log")
    assert stored["records"] > 0
    runs = db.training_runs("w-1")
    first = db.iterations("w-1", sort="timestamp")["items"][0]["timestamp"]
    # The workload created 10 minutes before the log's first iteration, its pod running 5
    # minutes before it: 300 s scheduling, 300 s start-up; the rest to `now`, two hours after
    # the first iteration, is split by the log.
    conn = sqlite3.connect(tmp_path / "lens.db")
    conn.execute("UPDATE gpu_workloads SET created_at = ?", (int((first - 600) * 1e6),))
    conn.execute("UPDATE gpu_pods SET started_at = ?", (int((first - 300) * 1e6),))
    conn.commit()
    conn.close()
    got = lens.goodput(db, "w-1", now=first + 7200)
    t = got["total"]
    assert t["scheduling_s"] == pytest.approx(300)
    assert t["startup_s"] == pytest.approx(300)
    parts = ("scheduling_s", "startup_s", "productive_s", "checkpoint_s", "restart_s", "idle_s")
    assert sum(t[p] for p in parts) == pytest.approx(t["wall_s"])
    assert t["wall_s"] == pytest.approx(7800)
    assert t["productive_s"] > 0 and 0 < t["goodput"] < 1
    assert len(got["runs"]) == len(runs)
    assert got["iterations_used"] == stored["records"]
    assert got["gpu_model"] == "AMD Instinct MI300X"
    assert got["peak"]["model"] == "MI300X" and got["peak"]["dense_bf16_tflops"] == 1307.4
    assert got["mfu"] == pytest.approx(got["tflops_per_gpu"] / 1307.4)
    with pytest.raises(lens.NotFoundError):
        lens.goodput(db, "no-such-workload")


def test_gpu_peaks_come_with_their_sources():
    peaks = {p["model"]: p for p in lens.gpu_peaks()}
    assert peaks["MI300X"]["dense_bf16_tflops"] == 1307.4
    assert peaks["H100 SXM"]["dense_bf16_tflops"] == 989.5
    assert all(p["source"] for p in peaks.values())
    assert lens.gpu_peak("NVIDIA H100 80GB HBM3")["model"] == "H100 SXM"
    assert lens.gpu_peak("Tesla V100-SXM2-32GB") is None


def add_series(path, metric, labels, points):
    """Writes one series of the store's sample history: (unix seconds, value) points."""
    conn = sqlite3.connect(path)
    cur = conn.execute("INSERT INTO sample_series (metric, labels) VALUES (?,?)",
                       (metric, json.dumps(dict(sorted(labels.items())), separators=(",", ":"))))
    for t, v in points:
        conn.execute("INSERT INTO samples (series_id, ts_ms, value) VALUES (?,?,?)",
                     (cur.lastrowid, t * 1000, v))
    conn.commit()
    conn.close()


def test_stragglers_find_the_slow_gpu_and_its_throttling(db, tmp_path):
    # Three more GPUs of gpu-node-1 held by the same container, busy at 91, 92 and 93% (GPU 1 at
    # 90%): over the hour GPU 0 averages (80 x 0.02 + 40 x 0.9) / 120 = 0.31 against a median
    # of 0.91 (MAD 0.01), with thermal throttling recorded for it.
    path = tmp_path / "lens.db"
    conn = sqlite3.connect(path)
    us = T0 * 1_000_000
    for index in (2, 3, 4):
        conn.execute(
            "INSERT INTO gpu_devices (node, gpu_index, vendor, model, serial, bdf, updated_at)"
            " VALUES (?,?,?,?,?,?,?)",
            ("gpu-node-1", index, "amd", "AMD Instinct MI300X", f"SER{index}",
             f"0000:{0x11 + index:02x}:00.0", us))
        conn.execute(
            "INSERT INTO node_container_devices (container_id, kind, device_key, bdf, source)"
            " VALUES (?,?,?,?,?)", ("c-1", "gpu", f"SER{index}", "", "pod-resources"))
    conn.commit()
    conn.close()
    for index in (2, 3, 4):
        add_series(path, "lens_gpu_utilization_ratio", {"gpu": str(index), "node": "gpu-node-1"},
                   [(T0 + 30 * k, 0.89 + index / 100) for k in range(120)])
    add_series(path, "lens_gpu_throttled",
               {"gpu": "0", "node": "gpu-node-1", "reason": "thermal"},
               [(T0 + 30 * k, 1.0 if 20 <= k < 100 else 0.0) for k in range(120)])
    got = lens.stragglers(db, "w-1", from_s=T0, to_s=T0 + 3599)
    assert got["gpus"] == 5
    assert got["utilization"]["median"] == pytest.approx(0.91)
    assert got["utilization"]["mad"] == pytest.approx(0.01)
    assert len(got["suspects"]) == 1
    s = got["suspects"][0]
    assert (s["node"], s["gpu"], s["scope"]) == ("gpu-node-1", "0", "gpu")
    assert s["score"] > 3.5
    assert s["findings"][0]["value"] == pytest.approx((80 * 0.02 + 40 * 0.9) / 120, abs=0.01)
    assert any(e["kind"] == "gpu_throttle" and e["name"] == "thermal" for e in s["evidence"])
    with pytest.raises(lens.NotFoundError):
        lens.stragglers(db, "no-such", from_s=T0, to_s=T0 + 3600)


def test_device_health_from_the_agents_series(db, tmp_path):
    # GPU 0 healthy for 10 minutes, then unhealthy; its port degraded throughout.
    path = tmp_path / "lens.db"
    add_series(path, "lens_gpu_health", {"gpu": "0", "id": "SER0", "node": "gpu-node-1"},
               [(T0 + 60 * k, 2.0 if k >= 10 else 0.0) for k in range(20)])
    add_series(path, "lens_rdma_port_health",
               {"device": "mlx5_0", "id": "0x1/1", "node": "gpu-node-1", "port": "1"},
               [(T0 + 60 * k, 1.0) for k in range(20)])
    got = lens.device_health(db, from_s=T0, to_s=T0 + 1140)
    gpu, port = got["devices"]
    assert (gpu["kind"], gpu["id"], gpu["state"]) == ("gpu", "SER0", "unhealthy")
    assert gpu["since"] == T0 + 600 and gpu["changes"] == 1
    assert (port["kind"], port["device"], port["port"], port["state"]) == (
        "rdma_port", "mlx5_0", 1, "degraded")
    assert got["changes"] == [{"kind": "gpu", "node": "gpu-node-1", "device": "0", "port": 0,
                               "id": "SER0", "at": T0 + 600, "from": "healthy",
                               "to": "unhealthy"}]


def test_node_placement_flags_a_cpuset_on_the_other_socket(db, tmp_path):
    # The container's init pid 4343 has the cgroup v2 cpuset 96-103,288-295 (NUMA node 1 of the
    # MI300X host) while its GPU 0000:0c:00.0 is on node 0: every CPU is off the GPU's node.
    path = tmp_path / "lens.db"
    conn = sqlite3.connect(path)
    conn.execute("UPDATE node_containers SET pid = 4343")
    conn.execute("DELETE FROM node_container_devices")
    conn.execute(
        "INSERT INTO node_container_devices (container_id, kind, device_key, bdf, source)"
        " VALUES (?,?,?,?,?)", ("c-1", "gpu", "SER0", "0000:0c:00.0", "pod-resources"))
    conn.commit()
    conn.close()
    pods = lens.node_placement(db, "gpu-node-1",
                               sysfs_root=str(FIXTURES / "hosts" / "mi300x-8x-mlx5" / "sys"),
                               procfs_root=str(FIXTURES / "flow" / "proc"))
    assert [p["name"] for p in pods] == ["llama-0"]
    pod = pods[0]
    assert pod["gpus"][0]["bdf"] == "0000:0c:00.0" and pod["gpus"][0]["numaNode"] == 0
    assert pod["cpusets"][0]["cpus"] == "96-103,288-295"
    assert [f["issue"] for f in pod["flags"]] == ["cpus-off-gpu-numa-nodes"]
    assert not pod["flags"][0]["partial"]
    assert lens.node_placement(db, "other-node") == []
