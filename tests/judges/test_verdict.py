import pytest

from litmus.judges.verdict import VerdictError, parse_verdict


def test_a_plain_verdict_parses_with_its_mismatches():
    verdict = parse_verdict('{"score": 82, "reason": "ok", "mismatches": '
                            '[{"path": "eta", "expected": "2026-12-03", "actual": "5 Dec", "reason": "wrong date"}]}')
    assert verdict.score == 82.0
    assert verdict.reason == "ok"
    assert verdict.mismatches[0].path == "eta"
    assert verdict.mismatches[0].actual == "5 Dec"


@pytest.mark.parametrize("text", [
    '```json\n{"score": 40, "reason": "r", "mismatches": []}\n```',
    '  ```\n{"score": 40, "reason": "r", "mismatches": []}```  ',
])
def test_one_fenced_code_block_around_the_json_is_tolerated(text):
    assert parse_verdict(text).score == 40


@pytest.mark.parametrize(("text", "why"), [
    ('{"score": 101, "reason": "r", "mismatches": []}', "outside 0-100"),
    ('{"score": -1, "reason": "r", "mismatches": []}', "outside 0-100"),
    ('{"score": "90", "reason": "r", "mismatches": []}', "must be a number"),
    ('{"score": true, "reason": "r", "mismatches": []}', "must be a number"),
    ('{"score": NaN, "reason": "r", "mismatches": []}', "must be a number"),
    ('{"reason": "r", "mismatches": []}', "missing field(s) score"),
    ('{"score": 50, "mismatches": []}', "missing field(s) reason"),
    ('{"score": 50, "reason": "r", "mismatches": null}', "mismatches must be a list"),
    ('{"score": 50, "reason": "r", "mismatches": [{"path": "$"}]}', "each mismatch needs"),
    ('Sure! Here is my verdict: {"score": 50, "reason": "r", "mismatches": []}', "not JSON"),
    ("[1, 2]", "expected a JSON object"),
    ("I cannot help with that.", "not JSON"),
])
def test_anything_else_is_rejected_with_the_reason(text, why):
    with pytest.raises(VerdictError, match=why.replace("(", r"\(").replace(")", r"\)")):
        parse_verdict(text)


def test_a_verdict_without_mismatches_listed_none():
    verdict = parse_verdict('{"score": 35, "reason": "too curt"}')
    assert (verdict.score, verdict.reason, verdict.mismatches) == (35.0, "too curt", ())


def test_lone_surrogates_in_a_verdict_become_replacement_characters():
    # Escaped inside the verdict JSON, and raw in the reply text (as a decoded chat envelope gives it).
    escaped = parse_verdict('{"score": 40, "reason": "bad \\ud800 text", "mismatches": '
                            '[{"path": "$", "expected": "\\udfff", "actual": "x", "reason": "r"}]}')
    raw = parse_verdict('{"score": 40, "reason": "bad \ud800 text", "mismatches": []}')
    assert escaped.reason == raw.reason == "bad \ufffd text"
    assert escaped.mismatches[0].expected == "\ufffd"
    escaped.reason.encode("utf-8")  # what writing results.json and the reports needs


@pytest.mark.parametrize("text", [
    '{"score": 10, "reason": "bad", "mismatches": [], "score": 95}',
    '{"score": 95, "reason": "ok", "reason": "also ok", "mismatches": []}',
    '{"score": 95, "reason": "ok", "mismatches": [{"path": "$", "path": "$.a", "expected": 1, "actual": 2, '
    '"reason": "r"}]}',
])
def test_a_key_given_twice_makes_the_verdict_unparseable(text):
    """Before, the last `score` won: a reply saying 10 and then 95 passed."""
    with pytest.raises(VerdictError, match="given twice"):
        parse_verdict(text)


def test_a_reply_over_64_kib_is_not_a_verdict_and_is_not_quoted_whole():
    from litmus.judges.verdict import MAX_REPLY_BYTES

    reason = "x" * MAX_REPLY_BYTES
    with pytest.raises(VerdictError) as caught:
        parse_verdict('{"score": 90, "reason": "' + reason + '", "mismatches": []}')
    assert len(str(caught.value)) < 300
    just_under = "y" * (MAX_REPLY_BYTES - 100)
    assert parse_verdict('{"score": 90, "reason": "' + just_under + '", "mismatches": []}').reason == just_under


def test_deeply_nested_json_is_unparseable_not_a_crash():
    with pytest.raises(VerdictError):
        parse_verdict("[" * 50_000 + "]" * 50_000)
