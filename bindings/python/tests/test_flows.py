"""lens.watch_flows against this machine's kernel (eBPF; needs root)."""
import os
import socket
import threading
import time

import pytest

import lens

def require_root():
    """The probe needs root (CAP_BPF, CAP_PERFMON); it attaches tracepoints
    by name, so no tracefs. Every kernel it supports loads one of its two
    sets of programs."""
    if os.geteuid() != 0:
        pytest.skip("eBPF needs root")


def test_watch_flows_reports_each_loopback_socket_exactly():
    require_root()
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    port = server.getsockname()[1]
    stop = threading.Event()

    def serve():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except socket.timeout:
                continue
            with conn:
                got = 0
                while got < 1000:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    got += len(chunk)
                conn.sendall(b"y" * 300)

    def clients():
        while not stop.is_set():
            with socket.create_connection(("127.0.0.1", port)) as c:
                c.sendall(b"x" * 1000)
                while c.recv(4096):
                    pass
            time.sleep(0.01)

    threads = [threading.Thread(target=serve), threading.Thread(target=clients)]
    for t in threads:
        t.start()
    try:
        flows = lens.watch_flows(2.0)
    finally:
        stop.set()
        for t in threads:
            t.join()
        server.close()

    # Sockets opened and closed within the watch carry their whole exchange.
    whole = [f for f in flows if f["opened"] and f["closed"]]
    mine = [f for f in whole if f["dport"] == port and f["role"] == "active"]
    assert len(mine) >= 5, flows[:5]
    for f in mine:
        assert f["saddr"] == "127.0.0.1" and f["daddr"] == "127.0.0.1"
        assert f["bytes_sent"] == 1000
        assert f["bytes_received"] == 300
        assert f["pid"] == os.getpid()
        assert f["class"] == "localhost"
        assert f["direction"] == "egress"
    accepted = [f for f in whole if f["sport"] == port and f["role"] == "passive"]
    assert accepted and all(f["bytes_received"] == 1000 for f in accepted)
    assert all(f["direction"] == "ingress" for f in accepted)


def test_watch_flows_rejects_a_non_positive_duration():
    with pytest.raises(lens.InvalidArgumentError):
        lens.watch_flows(0)
