"""The JSON depth limit: exact at the limit, blind to brackets inside strings, any encoding json reads."""

from __future__ import annotations

import json

import pytest

from litmus.response import MAX_JSON_DEPTH, BodyNotJSON, Response, nested_deeper


def nested(depth: int, value: object = 1) -> object:
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


@pytest.mark.parametrize("depth", [1, 5, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH])
def test_up_to_the_limit_a_body_is_json(depth):
    body = json.dumps(nested(depth)).encode()
    assert not nested_deeper(body, MAX_JSON_DEPTH)
    assert Response(200, {}, body, 1.0).json() == nested(depth)


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 900, 100_000])
def test_past_the_limit_json_is_an_error_not_a_crash(depth):
    body = b"[" * depth + b"]" * depth
    with pytest.raises(BodyNotJSON, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
        Response(200, {}, body, 1.0).json()


def test_brackets_inside_strings_do_not_count():
    shallow = json.dumps([{"text": "[" * 500 + "{" * 500}, "]]]]}}}}" * 100]).encode()
    assert not nested_deeper(shallow, MAX_JSON_DEPTH)
    assert nested_deeper(json.dumps(nested(4, "[[[[")).encode(), 3)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-32-le"])
def test_every_encoding_json_reads_is_checked(encoding):
    deep = json.dumps(nested(MAX_JSON_DEPTH + 1)).encode(encoding)
    shallow = json.dumps(nested(3)).encode(encoding)
    assert nested_deeper(deep, MAX_JSON_DEPTH) and not nested_deeper(shallow, MAX_JSON_DEPTH)
