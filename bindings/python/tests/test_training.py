"""Tests of the `lens` Python module: training-log parsing.

Run by ctest (label `python`) with PYTHONPATH set to the built module and LENS_FIXTURES_DIR to
test/fixtures. Exact values come from real log lines written inline here; the checked-in
fixtures (test/fixtures/training/, formats described in their README.md) are used for
properties that must hold for every format.
"""

import calendar
import errno
import math
import os
import pathlib
import re
import subprocess
import sys
import threading
import time

import pytest

import lens

FIXTURES = pathlib.Path(
    os.environ.get(
        "LENS_FIXTURES_DIR",
        pathlib.Path(__file__).resolve().parents[3] / "test" / "fixtures",
    )
) / "training"
FIXTURE_LOGS = sorted(
    p for p in FIXTURES.glob("*") if p.suffix in (".log", ".jsonl")
) if FIXTURES.is_dir() else []

# Primus (Megatron with the Primus prefix) on MI300X, one line per logging interval.
PRIMUS_LINE = (
    "[20251023 12:39:12][rank-63/64][INFO ] [--------trainer.py:2382] :  iteration      424/"
    "   40000 | consumed samples:        27136 | elapsed time per iteration (ms): "
    "16601.3/17219.3 | hip mem usage/free/total/usage_ratio: 253.38GB/2.60GB/255.98GB/98.98% "
    "| throughput per GPU (TFLOP/s/GPU): 11.9/11.5 | tokens per GPU (tokens/s/GPU): "
    "246.7/238.1 | learning rate: 9.997254E-06 | global batch size:    64 | lm loss: "
    "4.447942E+00 | loss scale: 1.0 | grad norm: 6.142 | num zeros: 960902016.0 | number of "
    "skipped iterations:   0 | number of nan iterations:   0 |"
)

# Megatron-LM core_r0.x lines: a NaN loss (skipped iteration) and an infinite grad norm.
MEGATRON_NAN = (
    " iteration        5/     100 | consumed samples:          320 | elapsed time per "
    "iteration (ms): 1500.2 | learning rate: 1.000000E-04 | global batch size:    64 | lm "
    "loss: nan | loss scale: 65536.0 | number of skipped iterations:   1 | number of nan "
    "iterations:   1 |\n"
    " iteration        6/     100 | consumed samples:          384 | elapsed time per "
    "iteration (ms): 1490.8 | learning rate: 1.000000E-04 | global batch size:    64 | lm "
    "loss: 7.100000E+00 | loss scale: 32768.0 | grad norm: inf | number of skipped "
    "iterations:   0 | number of nan iterations:   0 |\n"
)

# TorchTitan with a rank prefix and ANSI colour codes, as torchrun prints it.
TORCHTITAN_LINE = (
    "0: [titan] 2025-09-18 14:02:17,357 - root - INFO - \x1b[31mstep:  1  \x1b[32mloss: "
    "12.3884  \x1b[38;2;180;60;0mgrad_norm: 17.0077  \x1b[38;2;54;234;195mmemory: "
    "61.82GiB(78.07%)  \x1b[34mtps: 3,021  \x1b[36mtflops: 168.57  \x1b[35mmfu: 17.04%\x1b[39m"
)

# DeepSpeed prints two lines per step; the parser merges them into one record.
DEEPSPEED_STEP = (
    "[2023-11-20 06:41:15,061] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=5, "
    "lr=[9.65e-06, 9.65e-06], mom=[(0.9, 0.95), (0.9, 0.95)]\n",
    "[2023-11-20 06:41:15,090] [INFO] [timer.py:260:stop] epoch=0/micro_step=10/global_step=10, "
    "RunningAvgSamplesPerSec=263.12, CurrSamplesPerSec=264.79, MemAllocated=5.87GB, "
    "MaxMemAllocated=6.61GB\n",
)

FIELD_NAMES = [name for name, _ in lens.iteration_fields()]
RECORD_KEYS = ["type", "run", "iteration", "line", "format", "timestamp", "rank",
               "world_size"] + FIELD_NAMES + ["extra"]
EVENT_KEYS = ["type", "run", "line", "format", "iteration", "timestamp", "duration_s", "path"]


def same(a, b):
    """Equality in which nan equals nan (dicts, lists and numbers)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def dicts(items):
    return [x.to_dict() for x in items]


def parse_in_chunks(data, sizes=(1, 2, 3, 5, 8, 13, 64), take_every=None, **options):
    """Feeds `data` in chunks of rotating sizes; takes records/events every `take_every` feeds
    (and at the end)."""
    parser = lens.TrainingLogParser(**options)
    records, events = [], []
    pos, i = 0, 0
    while pos < len(data):
        n = sizes[i % len(sizes)]
        parser.feed(data[pos:pos + n])
        pos, i = pos + n, i + 1
        if take_every and i % take_every == 0:
            records += parser.take_records()
            events += parser.take_events()
    parser.finish()
    return records + parser.take_records(), events + parser.take_events(), parser.stats


def test_version_and_field_table():
    assert re.fullmatch(r"\d+\.\d+\.\d+", lens.__version__)
    fields = lens.iteration_fields()
    assert len(fields) >= 20
    assert all(isinstance(f, tuple) and len(f) == 2 for f in fields)
    assert len(set(FIELD_NAMES)) == len(FIELD_NAMES)
    for name, help_text in fields:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", name)
        assert help_text
        prop = getattr(lens.IterationRecord, name)
        assert isinstance(prop, property) and prop.__doc__ == help_text
    assert {"loss", "elapsed_ms", "mem_usage_ratio", "tflops_per_gpu"} <= set(FIELD_NAMES)


def test_primus_line_typed_fields():
    log = lens.parse_training_text(PRIMUS_LINE)
    assert len(log.records) == 1 and log.events == []
    r = log.records[0]
    assert (r.run, r.iteration, r.line, r.format) == (1, 424, 1, "primus")
    assert (r.rank, r.world_size) == (63, 64)
    assert r.timestamp == calendar.timegm((2025, 10, 23, 12, 39, 12))
    assert r.target_iteration == 40000 and isinstance(r.target_iteration, int)
    assert r.consumed_samples == 27136 and isinstance(r.consumed_samples, int)
    assert r.num_zeros == 960902016 and isinstance(r.num_zeros, int)
    assert r.elapsed_ms == pytest.approx(16601.3)
    assert r.elapsed_ms_avg == pytest.approx(17219.3)
    assert r.mem_used_gb == pytest.approx(253.38)
    assert r.mem_free_gb == pytest.approx(2.60)
    assert r.mem_total_gb == pytest.approx(255.98)
    assert r.mem_usage_ratio == pytest.approx(0.9898)
    assert r.tflops_per_gpu == pytest.approx(11.9)
    assert r.tflops_per_gpu_avg == pytest.approx(11.5)
    assert r.tokens_per_s_per_gpu == pytest.approx(246.7)
    assert r.tokens_per_s_per_gpu_avg == pytest.approx(238.1)
    assert r.learning_rate == pytest.approx(9.997254e-06)
    assert r.loss == pytest.approx(4.447942) and isinstance(r.loss, float)
    assert r.grad_norm == pytest.approx(6.142)
    assert r.skipped_iterations == 0 and r.nan_iterations == 0
    for absent in ("epoch", "mfu", "params_norm", "samples_per_s", "consumed_tokens",
                   "actual_seqlen", "mem_max_allocated_gb"):
        assert getattr(r, absent) is None, absent
    assert r.extra == {}
    assert "iteration=424" in repr(r) and "loss=4.447942" in repr(r)
    with pytest.raises(AttributeError):
        r.loss = 1.0  # read-only


def test_to_dict_has_the_json_keys_of_present_fields_only():
    r = lens.parse_training_text(PRIMUS_LINE).records[0]
    d = r.to_dict()
    present = [k for k in RECORD_KEYS if k in d]
    assert list(d) == present  # JSON key order
    assert d["type"] == "iteration" and d["format"] == "primus"
    assert "epoch" not in d and "mfu" not in d and "extra" not in d
    for name in FIELD_NAMES:
        assert same(d.get(name), getattr(r, name)), name
    assert (d["rank"], d["world_size"], d["timestamp"]) == (63, 64, r.timestamp)


def test_torchtitan_ansi_line():
    r = lens.parse_training_text(TORCHTITAN_LINE).records[0]
    assert (r.format, r.iteration, r.rank) == ("torchtitan", 1, 0)
    assert r.loss == pytest.approx(12.3884)
    assert r.grad_norm == pytest.approx(17.0077)
    assert r.mem_used_gb == pytest.approx(61.82)
    assert r.mem_usage_ratio == pytest.approx(0.7807)
    assert r.tokens_per_s_per_gpu == pytest.approx(3021)
    assert r.mfu == pytest.approx(0.1704)
    assert r.elapsed_ms is None


def test_nan_and_inf_come_back_as_floats():
    log = lens.parse_training_text(MEGATRON_NAN)
    first, second = log.records
    assert isinstance(first.loss, float) and math.isnan(first.loss)
    assert math.isnan(first.to_dict()["loss"])
    assert first.skipped_iterations == 1 and first.nan_iterations == 1
    assert second.grad_norm == math.inf and second.to_dict()["grad_norm"] == math.inf
    assert first.grad_norm is None
    (summary,) = log.summaries()
    assert summary["nan_loss_records"] == 1
    assert summary["first_loss"] == pytest.approx(7.1)  # first *finite* loss
    assert (summary["first_iteration"], summary["last_iteration"]) == (5, 6)


def test_str_bytes_and_buffers_parse_alike():
    data = (PRIMUS_LINE + "\n" + MEGATRON_NAN).encode()
    want = dicts(lens.parse_training_text(data).records)
    assert len(want) == 3
    for text in (data.decode(), bytearray(data), memoryview(data)):
        assert same(dicts(lens.parse_training_text(text=text).records), want)
    with pytest.raises(TypeError):
        lens.parse_training_text(42)
    with pytest.raises(TypeError):
        lens.TrainingLogParser().feed(None)


def test_invalid_utf8_is_tolerated():
    data = b"\xff\xfe garbage \xc3\n" + PRIMUS_LINE.encode() + b"\n"
    log = lens.parse_training_text(data)
    assert [r.iteration for r in log.records] == [424]
    assert log.stats.lines == 2


def test_streaming_tiny_chunks_equals_whole_parse_inline():
    data = (PRIMUS_LINE + "\n" + MEGATRON_NAN + TORCHTITAN_LINE).encode()  # no final newline
    whole = lens.parse_training_text(data)
    records, events, stats = parse_in_chunks(data)
    assert same(dicts(records), dicts(whole.records)) and len(records) == 4
    assert same(stats.to_dict(), whole.stats.to_dict())


def test_streaming_str_chunks_and_run_numbering():
    parser = lens.TrainingLogParser(first_run=7)
    assert parser.current_run == 7
    for ch in MEGATRON_NAN:
        parser.feed(ch)
    # Iteration 6 stays open until its step is known to be complete.
    assert [r.iteration for r in parser.take_records()] == [5]
    parser.flush()
    assert [r.iteration for r in parser.take_records()] == [6]
    assert parser.take_records() == []
    parser.feed(MEGATRON_NAN)  # the counter goes back: a new run
    parser.finish()
    assert [(r.run, r.iteration) for r in parser.take_records()] == [(8, 5), (8, 6)]
    assert parser.current_run == 8
    assert parser.stats.records == 4 and parser.stats.lines == 4


def test_repeated_iteration_from_every_rank_is_dropped():
    other_rank = PRIMUS_LINE.replace("[rank-63/64]", "[rank-0/64]")
    log = lens.parse_training_text(PRIMUS_LINE + "\n" + other_rank + "\n")
    assert len(log.records) == 1
    assert log.stats.duplicate_iterations == 1
    assert log.stats.records == 1 and log.stats.lines == 2


def test_oversized_lines_are_counted_and_skipped():
    long_line = PRIMUS_LINE + " | extra" * 2000  # ~16 KB metric line
    data = long_line + "\n" + PRIMUS_LINE.replace("424/", "425/") + "\n"
    for chunks in ([data], [data[i:i + 1000] for i in range(0, len(data), 1000)]):
        parser = lens.TrainingLogParser(max_line_bytes=100)  # raised to the 4096 minimum
        for chunk in chunks:
            parser.feed(chunk)
        parser.finish()
        assert [r.iteration for r in parser.take_records()] == [425]
        assert parser.stats.oversized_lines == 1 and parser.stats.lines == 2


def check_take_mid_stream():
    """Taking records between the two DeepSpeed lines of one step, then across every fixture
    with takes every few chunks. Run in a child process by the test below: a parser bug here
    has crashed the interpreter (heap corruption), which must fail one test, not the suite."""
    parser = lens.TrainingLogParser()
    parser.feed(DEEPSPEED_STEP[0])
    assert parser.take_records() == []  # its timer line may still come
    parser.flush()
    (first,) = parser.take_records()
    assert first.iteration == 10 and first.samples_per_s is None
    parser.feed(DEEPSPEED_STEP[1])
    parser.finish()
    (merged,) = parser.take_records()  # the step again, with the timer line's fields
    assert merged.iteration == 10 and merged.run == first.run
    assert merged.samples_per_s == pytest.approx(264.79)
    assert merged.mem_max_allocated_gb == pytest.approx(6.61)
    assert merged.learning_rate == pytest.approx(9.65e-06)
    for path in FIXTURE_LOGS:
        whole = lens.parse_training_log(path)
        records, events, stats = parse_in_chunks(path.read_bytes(), take_every=50)
        # Without flush() every (run, iteration) comes out once, complete.
        assert same(dicts(records), dicts(whole.records)), path.name
        assert same(dicts(events), dicts(whole.events)), path.name
        assert same(stats.to_dict(), whole.stats.to_dict()), path.name


def test_take_records_mid_stream():
    code = "import test_training; test_training.check_take_mid_stream()"
    child = subprocess.run([sys.executable, "-c", code], cwd=pathlib.Path(__file__).parent,
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, (
        f"child exited with {child.returncode} (negative: killed by that signal)\n"
        f"{child.stderr[-3000:]}")


@pytest.mark.parametrize("path", FIXTURE_LOGS, ids=lambda p: p.name)
def test_fixture_streaming_equals_file_parse(path):
    log = lens.parse_training_log(path)
    assert log.records, f"no records parsed from {path.name}"
    assert log.stats.records == len(log.records)
    assert log.stats.events == len(log.events)
    assert log.stats.bytes == path.stat().st_size
    data = path.read_bytes()
    assert same(dicts(lens.parse_training_text(data).records), dicts(log.records))
    records, events, stats = parse_in_chunks(data)
    assert same(dicts(records), dicts(log.records))
    assert same(dicts(events), dicts(log.events))
    assert same(stats.to_dict(), log.stats.to_dict())


@pytest.mark.parametrize("path", FIXTURE_LOGS, ids=lambda p: p.name)
def test_fixture_dicts_and_summaries(path):
    log = lens.parse_training_log(str(path))
    rows = log.records_as_dicts()
    assert same(rows, dicts(log.records))
    for r, row in zip(log.records, rows):
        assert set(row) <= set(RECORD_KEYS)
        assert list(row) == [k for k in RECORD_KEYS if k in row]
        assert row["format"] == r.format != "unknown"
        assert row["run"] == r.run and row["iteration"] == r.iteration
        for name in FIELD_NAMES:
            assert same(row.get(name), getattr(r, name)), name
    for e in log.events:
        d = e.to_dict()
        assert list(d) == [k for k in EVENT_KEYS if k in d]
        assert d["type"] == e.type in ("training_start", "checkpoint_save_start",
                                       "checkpoint_save_end", "training_end")
        assert e.path is None or (isinstance(e.path, str) and e.path)
        assert e.duration_s is None or e.duration_s >= 0
    summaries = log.summaries()
    assert [s["run"] for s in summaries] == sorted({r.run for r in log.records} |
                                                   {e.run for e in log.events})
    assert sum(s["iterations"] for s in summaries) == len(log.records)
    assert "lines" in log.format_summary()


def test_checkpoint_events():
    paths = [p for p in FIXTURE_LOGS if p.name.startswith("megatron_lm_core")]
    if not paths:
        pytest.skip("fixture megatron_lm_core_r0.x.log not present")
    log = lens.parse_training_log(paths[0])
    ends = [e for e in log.events if e.type == "checkpoint_save_end"]
    assert ends
    for e in ends:
        assert isinstance(e.iteration, int) and e.iteration > 0
        assert e.path and e.path.startswith("/")
        assert e.format == "megatron" and e.line > 0
        assert "checkpoint_save_end" in repr(e)


def test_pandas_dataframe():
    pandas = pytest.importorskip("pandas", reason="python3-pandas is not installed")
    frame = pandas.DataFrame(lens.parse_training_text(MEGATRON_NAN).records_as_dicts())
    assert list(frame["iteration"]) == [5, 6]
    assert math.isnan(frame["loss"][0])


def test_missing_file_raises_file_not_found_naming_the_path(tmp_path):
    missing = tmp_path / "no-such-job.log"
    with pytest.raises(FileNotFoundError) as info:
        lens.parse_training_log(missing)
    err = info.value
    assert isinstance(err, lens.NotFoundError) and isinstance(err, lens.LensError)
    assert isinstance(err, OSError)
    assert str(missing) in str(err)
    assert err.code == "NOT_FOUND"
    assert err.errno == errno.ENOENT
    assert err.filename == str(missing)


def test_directory_raises_value_error(tmp_path):
    with pytest.raises(ValueError) as info:
        lens.parse_training_log(path=str(tmp_path))
    assert isinstance(info.value, lens.InvalidArgumentError)
    assert isinstance(info.value, lens.LensError)
    assert str(tmp_path) in str(info.value)
    assert info.value.code == "INVALID_ARGUMENT"


def test_unreadable_file_raises_permission_error(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("running as root: file permissions are not enforced")
    path = tmp_path / "secret.log"
    path.write_text(PRIMUS_LINE)
    path.chmod(0)
    with pytest.raises(PermissionError) as info:
        lens.parse_training_log(path)
    assert isinstance(info.value, lens.PermissionDeniedError)
    assert str(path) in str(info.value)


def test_gil_is_released_while_parsing():
    # While a parse holds the GIL no other thread runs Python code; if it releases the GIL,
    # the main thread keeps ticking during the parse.
    data = (PRIMUS_LINE + "\n" + MEGATRON_NAN).encode() * 40000  # ~28 MB
    window = {}

    def parse():
        window["start"] = time.perf_counter()
        window["log"] = lens.parse_training_text(data)
        window["end"] = time.perf_counter()

    thread = threading.Thread(target=parse)
    ticks = []
    thread.start()
    while thread.is_alive():
        ticks.append(time.perf_counter())
    thread.join()
    assert window["end"] - window["start"] > 0.02, "parse too fast to observe"
    during = [t for t in ticks if window["start"] < t < window["end"]]
    assert len(during) > 100
    assert window["log"].stats.lines == 120000


def test_parallel_parses_match_sequential():
    if not FIXTURE_LOGS:
        pytest.skip(f"no fixture logs under {FIXTURES}")
    want = {p: dicts(lens.parse_training_log(p).records) for p in FIXTURE_LOGS}
    got = {}

    def work(p):
        got[p] = dicts(lens.parse_training_log(p).records)

    threads = [threading.Thread(target=work, args=(p,)) for p in FIXTURE_LOGS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(same(got[p], want[p]) for p in FIXTURE_LOGS)


def test_validations_and_memory_reports():
    log = lens.parse_training_log(FIXTURES / "megatron_lm_core_r0.x.log")
    assert [v.split for v in log.validations][-2:] == ["validation", "test"]
    last_periodic = [v for v in log.validations if not v.end_of_training][-1]
    assert (last_periodic.run, last_periodic.iteration) == (2, 800)
    assert last_periodic.loss == pytest.approx(3.066381)
    assert last_periodic.perplexity == pytest.approx(21.46409)
    assert last_periodic.to_dict()["type"] == "validation"
    assert log.stats.validations == len(log.validations)
    report = log.memory_reports[0]
    assert (report.rank, report.iteration, report.context) == (0, 10, "after 10 iterations")
    assert report.allocated_mb > 0 and report.to_dict()["type"] == "memory_report"
    summary = log.summaries()[0]
    assert summary["validations"] > 0 and "last_validation_loss" in summary


def test_streaming_takes_validations_in_order():
    parser = lens.TrainingLogParser()
    parser.feed((FIXTURES / "hf_trainer.log").read_bytes())
    parser.finish()
    validations = parser.take_validations()
    assert [v.iteration for v in validations] == [60, 120]
    assert all(v.format == "hf_trainer" and v.loss is not None for v in validations)
    assert parser.take_validations() == [] and parser.take_memory_reports() == []
