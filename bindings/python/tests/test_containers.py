"""lens.containers(store): stored containers with their devices, pod and top-level workload.

The rows are written into a real SQLite store (migrated by lens.Store.open) the way lens-jobs and
lens-controller leave them: a PyTorchJob workload, its pods, and their containers with GPU and
RDMA devices; one container's pod is not stored, one pod has no workload.
"""

import json
import sqlite3

import pytest

import lens

BASE_US = 1714550000000000  # 2024-05-01T07:53:20Z
JOB_UID = "c9452740-8789-4bfa-9c31-65306786085f"


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "lens.db"
    store = lens.Store.open(f"sqlite://{path}")
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO gpu_workloads (uid, api_version, kind, name, namespace, parent_uid, status,"
        " gpu_request, labels, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (JOB_UID, "kubeflow.org/v1", "PyTorchJob", "llama-pretrain", "ml", "", "Running", 16,
         json.dumps({"team": "llm"}), BASE_US, BASE_US))
    pods = [("pod-master", "llama-pretrain-master-0", "gpu-node-1", JOB_UID),
            ("pod-worker", "llama-pretrain-worker-0", "gpu-node-2", JOB_UID),
            ("pod-lonely", "notebook-0", "gpu-node-2", "")]
    for uid, name, node, owner in pods:
        conn.execute(
            "INSERT INTO gpu_pods (uid, name, namespace, node, phase, owner_uid, ip, gpu_allocated,"
            " running, deleted, labels, created_at, updated_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (uid, name, "ml", node, "Running", owner, "10.0.0.7", 8, 1, 0, "{}", BASE_US,
             BASE_US))
    containers = [
        ("ctr-master", "gpu-node-1", "pod-master", "llama-pretrain-master-0", "running",
         [("gpu", "GPU-SERIAL-0", "0000:1b:00.0", "pod-resources"),
          ("rdma", "mlx5_0", "0000:1c:00.0", "oci-spec")]),
        ("ctr-worker", "gpu-node-2", "pod-worker", "llama-pretrain-worker-0", "exited",
         [("gpu", "GPU-SERIAL-8", "0000:9b:00.0", "pod-resources")]),
        ("ctr-notebook", "gpu-node-2", "pod-lonely", "notebook-0", "running", []),
        ("ctr-unknown-pod", "gpu-node-2", "pod-gone", "gone-0", "running", []),
    ]
    for cid, node, pod_uid, pod_name, state, devices in containers:
        conn.execute(
            "INSERT INTO node_containers (container_id, node, runtime_namespace, pod_uid, pod_name,"
            " pod_namespace, container_name, image, state, privileged, pid, exit_code, labels,"
            " created_at, started_at, finished_at, updated_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (cid, node, "k8s.io", pod_uid, pod_name, "ml", "trainer", "registry.local/train:1",
             state, 0, 4242, 0 if state == "exited" else None,
             json.dumps({"io.kubernetes.pod.name": pod_name}), BASE_US, BASE_US + 1_000_000,
             BASE_US + 60_000_000 if state == "exited" else None, BASE_US + 2_000_000))
        for kind, key, bdf, source in devices:
            conn.execute(
                "INSERT INTO node_container_devices (container_id, kind, device_key, bdf, source)"
                " VALUES (?,?,?,?,?)", (cid, kind, key, bdf, source))
    conn.commit()
    conn.close()
    return store


def test_containers_carry_devices_pod_and_workload(db):
    containers = lens.containers(db)
    assert [c["container_id"] for c in containers] == [
        "ctr-master", "ctr-notebook", "ctr-unknown-pod", "ctr-worker"]
    master = containers[0]
    assert master["node"] == "gpu-node-1" and master["state"] == "running"
    assert master["started_at"] == pytest.approx(BASE_US / 1e6 + 1)
    assert master["devices"] == [
        {"kind": "gpu", "device_key": "GPU-SERIAL-0", "bdf": "0000:1b:00.0",
         "source": "pod-resources"},
        {"kind": "rdma", "device_key": "mlx5_0", "bdf": "0000:1c:00.0", "source": "oci-spec"}]
    assert master["pod"]["uid"] == "pod-master"
    assert master["pod"]["name"] == "llama-pretrain-master-0"
    assert master["pod"]["owner_uid"] == JOB_UID
    assert master["workload"]["uid"] == JOB_UID
    assert master["workload"]["kind"] == "PyTorchJob"
    assert master["workload"]["name"] == "llama-pretrain"
    assert master["workload"]["labels"] == {"team": "llm"}
    worker = containers[3]
    assert worker["exit_code"] == 0 and worker["finished_at"] == pytest.approx(BASE_US / 1e6 + 60)
    assert worker["workload"]["uid"] == JOB_UID
    notebook = containers[1]
    assert notebook["pod"]["name"] == "notebook-0" and notebook["workload"] is None
    unknown = containers[2]
    assert unknown["pod_name"] == "gone-0" and unknown["pod"] is None
    assert unknown["workload"] is None


def test_containers_never_return_secrets(db):
    for c in lens.containers(db):
        assert not {"env", "environment", "mounts", "spec"} & set(c)
        assert all("env" not in k for k in c)


def test_containers_filter_like_the_store(db):
    assert [c["container_id"] for c in lens.containers(db, node="gpu-node-1")] == ["ctr-master"]
    assert [c["container_id"] for c in lens.containers(db, state="exited")] == ["ctr-worker"]
    assert [c["container_id"] for c in lens.containers(db, pod_uid="pod-lonely")] == [
        "ctr-notebook"]
    # The same rows as the paged Store query, joined.
    paged = db.containers(node="gpu-node-2", sort="container_id")["items"]
    joined = lens.containers(db, node="gpu-node-2")
    assert [{k: v for k, v in c.items() if k not in ("pod", "workload")} for c in joined] == paged
    with pytest.raises(ValueError, match="unknown container state 'gone'"):
        lens.containers(db, state="gone")


def test_containers_read_every_page(tmp_path):
    path = tmp_path / "many.db"
    store = lens.Store.open(f"sqlite://{path}")
    conn = sqlite3.connect(path)
    conn.executemany(
        "INSERT INTO node_containers (container_id, node, state, privileged, labels, created_at,"
        " updated_at) VALUES (?,?,?,?,?,?,?)",
        [(f"c{i:05d}", "n1", "running", 0, "{}", BASE_US, BASE_US) for i in range(2500)])
    conn.commit()
    conn.close()
    got = lens.containers(store)
    assert len(got) == 2500
    assert got[0]["container_id"] == "c00000" and got[-1]["container_id"] == "c02499"
    assert lens.containers(store, node="n2") == []
