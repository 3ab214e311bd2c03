"""Cache entries are never trusted blindly: a poisoned, oversized, symlinked or malformed entry is a
miss (the judge is asked again), and a cache that cannot be written never costs the verdict."""

import json
import os

import pytest
from judge_helpers import assertion, config, context, evaluate, service

from litmus.judges.cache import MAX_ENTRY_BYTES


def _judge_once(fake_judge, cache):
    return evaluate(assertion("llm_rubric"), context(service(config(fake_judge, cache)), "hello"))


def _entry(cache):
    [path] = (cache / "verdicts").glob("*.json")
    return path


def _poison_score(path):
    data = json.loads(path.read_text())
    data["reply"] = json.dumps({"score": 100, "reason": "poisoned", "mismatches": []})
    path.write_text(json.dumps(data))


def _other_judge(path):
    data = json.loads(path.read_text())
    data["judge"] = {"provider": "openai", "model": "someone-else"}
    path.write_text(json.dumps(data))


def _oversized(path):
    data = json.loads(path.read_text())
    data["padding"] = "x" * MAX_ENTRY_BYTES
    path.write_text(json.dumps(data))


def _to_dev_zero(path):
    path.unlink()
    path.symlink_to("/dev/zero")


def _symlink_to_good_copy(path):
    copy = path.parent.parent / "elsewhere.json"
    copy.write_text(path.read_text())
    path.unlink()
    path.symlink_to(copy)


def _wrong_key(path):
    data = json.loads(path.read_text())
    data["key"] = "0" * 64
    path.write_text(json.dumps(data))


def _not_json(path):
    path.write_bytes(b"\xff{not json")


@pytest.mark.parametrize("spoil", [_poison_score, _other_judge, _oversized, _to_dev_zero, _symlink_to_good_copy,
                                   _wrong_key, _not_json])
def test_a_spoiled_entry_is_ignored_and_the_judge_asked_again(fake_judge, tmp_path, spoil):
    fake_judge.default.score = 20
    first = _judge_once(fake_judge, tmp_path)
    assert first.status == "failed" and len(fake_judge.calls()) == 1
    spoil(_entry(tmp_path))
    again = _judge_once(fake_judge, tmp_path)
    assert len(fake_judge.calls()) == 2  # asked again, not read from the spoiled entry
    assert (again.status, again.score) == ("failed", first.score)
    assert not again.judge.tiers[0].cached
    # The entry was rewritten whole from the new reply: a third run is served from it.
    assert _entry(tmp_path).is_file() and not _entry(tmp_path).is_symlink()
    third = _judge_once(fake_judge, tmp_path)
    assert len(fake_judge.calls()) == 2 and third.judge.tiers[0].cached


def test_a_cache_that_cannot_be_written_keeps_the_verdict(fake_judge, tmp_path):
    cache = tmp_path / "cache"
    cache.write_text("a file where the cache folder should be")
    fake_judge.default.score = 20
    outcome = _judge_once(fake_judge, cache)
    assert (outcome.status, outcome.score) == ("failed", 20)
    assert len(fake_judge.calls()) == 1


def test_a_verdict_file_replaced_by_a_fifo_does_not_hang(fake_judge, tmp_path):
    _judge_once(fake_judge, tmp_path)
    path = _entry(tmp_path)
    path.unlink()
    os.mkfifo(path)
    outcome = _judge_once(fake_judge, tmp_path)
    assert outcome.status == "passed" and len(fake_judge.calls()) == 2
