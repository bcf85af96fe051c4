"""lens.Store's pod and workload queries over rows lens-controller wrote.

A small API server here serves the real shapes of test/fixtures/kube (a list of a PyTorchJob's
pods, the nodes, discovery and the job itself; watches stay open and quiet); lens-controller runs
against it as its own process and the queries read what it stored.
"""

import http.server
import json
import os
import pathlib
import signal
import subprocess
import threading
import time

import pytest

import lens

FIXTURES = pathlib.Path(
    os.environ.get(
        "LENS_FIXTURES_DIR",
        pathlib.Path(__file__).resolve().parents[3] / "test" / "fixtures",
    )
) / "kube"
CONTROLLER = os.environ.get("LENS_CONTROLLER")
JOB_UID = "c9452740-8789-4bfa-9c31-65306786085f"


def load(name):
    return json.loads((FIXTURES / name).read_text())


class ApiServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        objects = load("pytorchjob.json")
        self.pods = [o for o in objects if o["kind"] == "Pod"]
        self.job = next(o for o in objects if o["kind"] == "PyTorchJob")
        self.nodes = load("nodes.json")
        self.requests = []
        self.closing = threading.Event()
        super().__init__(("127.0.0.1", 0), Handler)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        s = self.server
        path, _, query = self.path.partition("?")
        s.requests.append((self.command, path, query))
        if "watch=true" in query:  # open and quiet until the test ends
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            s.closing.wait(30)
            return
        if path == "/api/v1/pods":
            items = s.pods
            kind = "PodList"
        elif path == "/api/v1/nodes":
            items = s.nodes
            kind = "NodeList"
        elif path == "/apis/kubeflow.org/v1":
            return self.reply(200, {
                "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "kubeflow.org/v1",
                "resources": [{"name": "pytorchjobs", "singularName": "pytorchjob",
                               "namespaced": True, "kind": "PyTorchJob",
                               "verbs": ["get", "list", "watch"]}]})
        elif path == "/apis/kubeflow.org/v1/namespaces/ml/pytorchjobs/llama-pretrain":
            return self.reply(200, s.job)
        else:
            return self.reply(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                    "reason": "NotFound", "code": 404,
                                    "message": f"{path} not found"})
        self.reply(200, {"kind": kind, "apiVersion": "v1",
                         "metadata": {"resourceVersion": "100"}, "items": items})


@pytest.fixture
def controller_db(tmp_path):
    if not CONTROLLER:
        pytest.skip("LENS_CONTROLLER is not set (ctest sets it to the built lens-controller)")
    server = ApiServer()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: t\n  cluster:\n    server: http://127.0.0.1:{server.server_port}\n"
        "users:\n- name: u\n  user: {}\n"
        "contexts:\n- name: t\n  context: {cluster: t, user: u}\ncurrent-context: t\n")
    url = f"sqlite://{tmp_path}/lens.db"
    log = open(tmp_path / "controller.log", "w")
    proc = subprocess.Popen(
        [CONTROLLER, "--kubeconfig", str(kubeconfig), "--database", url,
         "--listen", "127.0.0.1:0", "--no-leader-election"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        store = None
        deadline = time.time() + 30
        while time.time() < deadline:
            assert proc.poll() is None, (tmp_path / "controller.log").read_text()
            if store is None and (tmp_path / "lens.db").exists():
                store = lens.Store.open(url, migrate=False)
            try:
                if store and len(store.workload_pods(JOB_UID)) == 4:
                    break
            except lens.LensError as e:
                # The file exists before the controller's migrations have made
                # the tables: not yet.
                if "no such table" not in str(e):
                    raise
            time.sleep(0.1)
        else:
            pytest.fail("the controller stored nothing:\n" + (tmp_path / "controller.log").read_text())
        yield store, server
    finally:
        server.closing.set()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0, (tmp_path / "controller.log").read_text()
        server.shutdown()


def test_pod_and_workload_queries_serve_the_controllers_rows(controller_db):
    store, server = controller_db
    page = store.pods(namespace="ml", deleted=False)
    assert page["total"] == 4
    master = next(p for p in page["items"] if p["name"] == "llama-pretrain-master-0")
    assert master["node"] == "mi300x-node-01" and master["phase"] == "Running"
    assert master["gpu_allocated"] == 8 and master["owner_uid"] == JOB_UID
    assert master["started_at"] > 1.7e9 and master["ended_at"] is None
    assert master["restarts"] == 0 and master["deleted"] is False
    assert store.pods(deleted=True)["total"] == 0

    resources = store.pod_resources(master["uid"])
    assert resources["gpu_vendor"] == "amd" and resources["gpu_allocated"] == 8
    assert resources["cpu_millis"] == 96000 and resources["memory_bytes"] == 2**40
    assert resources["rdma_allocated"] == 1

    events = store.pod_events(master["uid"])
    assert {e["event_type"] for e in events} == {"Created", "Scheduled", "Running"}
    snapshots = store.pod_snapshots(master["uid"])
    assert len(snapshots) == 1
    watched = json.loads(snapshots[0]["snapshot"])
    assert watched["phase"] == "Running"
    assert "env" not in snapshots[0]["snapshot"]

    job = store.workload(JOB_UID)
    assert job["kind"] == "PyTorchJob" and job["status"] == "Running"
    assert job["gpu_request"] == 32 and job["parent_uid"] == ""
    assert job["active_pods"] == 4
    assert [w["uid"] for w in store.workloads(parent_uid="")["items"]] == [JOB_UID]

    node = store.node("mi300x-node-01")
    assert node["status"] == "Ready" and node["gpu_count"] == 8
    assert node["gpu_allocatable"] == 8 and node["kubelet_version"] == "v1.30.4"
    assert node["container_runtime"].startswith("containerd://")
    # The agent's columns are lens-jobs': none known yet.
    assert node["agent_state"] == "" and node["agent_seen_at"] is None
    assert node["gpu_utilization_ratio"] is None and node["gpu_allocated"] == 0

    # It only read: lists, watches and one get of the owner (plus discovery).
    assert {m for m, _, _ in server.requests} == {"GET"}
    with pytest.raises(lens.NotFoundError):
        store.pod_resources("no-such-pod")
