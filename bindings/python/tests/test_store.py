"""Tests of lens.Store: opening, storing a training log, and the read queries (SQLite).

The PostgreSQL backend runs the same C++ conformance suite (test/store); here we check the Python
surface: arguments, dict shapes, units and exceptions.
"""

import math
import os
import pathlib
import threading

import pytest

import lens

FIXTURES = pathlib.Path(
    os.environ.get(
        "LENS_FIXTURES_DIR",
        pathlib.Path(__file__).resolve().parents[3] / "test" / "fixtures",
    )
) / "training"
PRIMUS = FIXTURES / "primus_rocm.log"


@pytest.fixture
def store(tmp_path):
    return lens.Store.open(f"sqlite://{tmp_path}/lens.db")


def test_open_reports_backend_and_schema(store, tmp_path):
    assert store.backend == "sqlite"
    assert str(tmp_path) in store.target
    status = store.schema_status()
    assert status["current_version"] == status["latest_version"] >= 1
    assert all(m["applied"] and m["applied_at"] > 1.6e9 for m in status["migrations"])


def test_bad_urls_raise_clear_errors(tmp_path):
    with pytest.raises(lens.InvalidArgumentError, match="unknown scheme") as e:
        lens.Store.open("mysql://root:hunter2@db/lens")
    assert "hunter2" not in str(e.value)
    with pytest.raises(lens.NotFoundError, match="does not exist"):
        lens.Store.open(f"sqlite://{tmp_path}/missing/lens.db")
    with pytest.raises(lens.LensError) as e:
        lens.Store.open("postgresql://lens:hunter2@127.0.0.1:1/lens")
    assert e.value.code == "UNAVAILABLE"
    assert "127.0.0.1" in str(e.value) and "hunter2" not in str(e.value)


def test_store_training_log_is_idempotent(store):
    first = store.store_training_log("job-1", PRIMUS)
    assert first["records"] == 90 and first["source"].endswith("primus_rocm.log")
    store.store_training_log("job-1", PRIMUS)
    runs = store.training_runs("job-1")
    assert [r["run"] for r in runs] == [1, 2, 3]
    assert sum(r["iterations"] for r in runs) == 90
    page = store.iterations("job-1", page_size=1)
    assert page["total"] == 90


def test_restart_logs_continue_run_numbers(store):
    store.store_training_log("job-1", PRIMUS, source="pod-a")
    store.store_training_log("job-1", PRIMUS, source="pod-b")
    assert [r["run"] for r in store.training_runs("job-1")] == [1, 2, 3, 4, 5, 6]
    assert store.iterations("job-1", page_size=1)["total"] == 180


def test_iteration_queries_return_record_dicts(store):
    store.store_training_log("job-1", PRIMUS)
    page = store.iterations("job-1", run=2, min_iteration=100, max_iteration=200,
                            sort="iteration", descending=True, page_size=5)
    assert page["total"] == 11
    assert [r["iteration"] for r in page["items"]] == [200, 190, 180, 170, 160]
    rec = page["items"][0]
    assert rec["run"] == 2 and rec["format"] == "primus"
    assert isinstance(rec["loss"], float) and not math.isnan(rec["loss"])
    latest = store.latest_iteration("job-1")
    assert latest["run"] == 3
    events = store.training_events("job-1")
    assert {e["type"] for e in events} >= {"training_start", "training_end"}
    with pytest.raises(lens.InvalidArgumentError, match="allowed: iteration, timestamp"):
        store.iterations("job-1", sort="loss")
    with pytest.raises(lens.InvalidArgumentError, match="pageSize"):
        store.iterations("job-1", page_size=5000)
    with pytest.raises(lens.NotFoundError):
        store.latest_iteration("nope")


def test_empty_queries_have_page_shape(store):
    for page in (store.nodes(), store.pods(), store.workloads(parent_uid=""),
                 store.containers(), store.device_changes(), store.container_events()):
        assert page == {"items": [], "total": 0, "page_num": 1, "page_size": 100}
    assert store.gpu_devices("n1") == [] and store.storage() == []
    with pytest.raises(lens.NotFoundError):
        store.node("n1")


def test_queries_run_from_threads(store):
    store.store_training_log("job-1", PRIMUS)
    totals = []

    def read():
        for _ in range(20):
            totals.append(store.iterations("job-1", page_size=1)["total"])

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert totals == [90] * 80


def test_store_training_log_stores_validations(store):
    counts = store.store_training_log("job-2", FIXTURES / "megatron_lm_core_r0.x.log")
    assert counts["validations"] > 0 and counts["memory_reports"] > 0
    store.store_training_log("job-2", FIXTURES / "megatron_lm_core_r0.x.log")  # idempotent
    stored = store.training_validations("job-2")
    assert len(stored) == counts["validations"]
    assert stored[-1]["split"] == "test" and stored[-1]["end_of_training"] is True
    assert all(v["type"] == "validation" and "loss" in v for v in stored)


@pytest.mark.parametrize("url", [
    "postgresql://lens:s3cretA@127.0.0.1:1/db",
    "postgresql://lens@127.0.0.1:1/db?password=s3cretB",
    "host=127.0.0.1 port=1 password=s3cretC",
])
def test_open_never_shows_a_password(url):
    with pytest.raises(Exception) as err:
        lens.Store.open(url)
    assert "s3c" not in str(err.value)
