"""lens.probe_* on the fixture hosts under test/fixtures/hosts."""
import json
import os
import subprocess

import pytest

import lens

HOSTS = os.path.join(os.environ["LENS_FIXTURES_DIR"], "hosts")


def roots(host):
    base = os.path.join(HOSTS, host)
    return dict(sysfs_root=base + "/sys", procfs_root=base + "/proc", dev_root=base + "/dev")


def test_probe_gpus_reports_eight_mi300x_in_base_units():
    gpus = lens.probe_gpus(nvml=False, **roots("mi300x-8x-mlx5"))
    assert len(gpus) == 8
    assert [g["index"] for g in gpus] == list(range(8))
    assert len({g["bdf"] for g in gpus}) == 8
    assert len({g["serial"] for g in gpus}) == 8
    for g in gpus:
        assert g["vendor"] == "amd"
        assert "MI300X" in g["model"]
        if "utilization_ratio" in g:
            assert 0.0 <= g["utilization_ratio"] <= 1.0
        if "temperature_junction_celsius" in g:
            assert 5 < g["temperature_junction_celsius"] < 130
        assert g["vram_total_bytes"] > 100 * 2**30


def test_probe_rdma_reports_bytes_not_four_octet_units():
    devices = lens.probe_rdma(**roots("mi300x-8x-mlx5"))
    assert len(devices) == 8
    port = devices[0]["ports"][0]
    assert port["tx_bytes"] == 4 * port["counters"]["port_xmit_data"]
    assert port["rx_bytes"] == 4 * port["counters"]["port_rcv_data"]
    assert port["link_layer"] in ("InfiniBand", "Ethernet")


def test_probe_node_and_empty_host():
    node = lens.probe_node(**roots("empty"))
    assert node["cpu_count"] > 0
    assert node["kernel_release"]
    assert lens.probe_gpus(nvml=False, **roots("empty")) == []
    assert lens.probe_rdma(**roots("empty")) == []


def test_probe_matches_the_cli_json():
    report = lens.probe(nvml=False, **roots("mi300x-8x-mlx5"))
    assert set(report) >= {"gpus", "rdma", "node"}
    cli = os.environ.get("LENS_CLI")
    if cli:
        base = os.path.join(HOSTS, "mi300x-8x-mlx5")
        out = subprocess.run([cli, "probe", "--json", "--no-nvml", "--sysfs-root", base + "/sys",
                              "--procfs-root", base + "/proc", "--dev-root", base + "/dev"],
                             check=True, capture_output=True, text=True).stdout
        from_cli = json.loads(out)
        assert [g["serial"] for g in from_cli["gpus"]] == [g["serial"] for g in report["gpus"]]
        assert [d["node_guid"] for d in from_cli["rdma"]] == [d["node_guid"] for d in report["rdma"]]


def test_bad_root_is_reported_not_empty():
    with pytest.raises(lens.LensError):
        lens.probe_node(sysfs_root="/nonexistent/sys", procfs_root="/nonexistent/proc",
                        dev_root="/nonexistent/dev")
