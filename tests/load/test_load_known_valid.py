"""Valid JSONPaths and schemas are remembered across processes; invalid ones never are."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

SUITE = textwrap.dedent("""\
    version: 1
    suite: Remembered
    flows:
      - name: f
        steps:
          - name: s
            request: {url: http://127.0.0.1:1/x}
            assertions:
              - {type: json_path, path: "$.items[*].price", json_type: number}
              - type: schema
                schema: {type: object, required: [items]}
    """)

# Loads the suite in a fresh interpreter and says which checkers it had to import.
PROBE = textwrap.dedent("""\
    import sys
    from litmus.errors import ProbeError
    from litmus.load import load_suites
    try:
        load_suites([sys.argv[1]], root=sys.argv[2], environ={})
        print("ok", end=" ")
    except ProbeError as error:
        print("error", error.diagnostics[0].message, end=" ")
    print("jsonschema" in sys.modules, "jsonpath_ng" in sys.modules)
    """)


def load_in_fresh_process(path, cache_home, **env):
    environ = {**os.environ, "XDG_CACHE_HOME": str(cache_home), **env}
    done = subprocess.run([sys.executable, "-c", PROBE, str(path), str(path.parent)],
                          capture_output=True, text=True, env=environ, check=True)
    return done.stdout.strip()


def test_second_process_skips_the_checkers(tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    cache = tmp_path / "cache"
    assert load_in_fresh_process(suite, cache) == "ok True True"
    assert load_in_fresh_process(suite, cache) == "ok False False"
    stored = json.loads((cache / "litmus" / "known-valid.json").read_text())
    assert len(stored["keys"]) == 2


def test_a_changed_value_is_checked_again_and_invalid_ones_are_never_remembered(tmp_path):
    suite = tmp_path / "suite.yaml"
    cache = tmp_path / "cache"
    suite.write_text(SUITE)
    load_in_fresh_process(suite, cache)
    suite.write_text(SUITE.replace("$.items[*].price", "$.items[*.price"))
    for _ in range(2):
        assert load_in_fresh_process(suite, cache).startswith("error invalid JSONPath '$.items[*.price'")


def test_switched_off_it_writes_nothing(tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    cache = tmp_path / "cache"
    for _ in range(2):
        assert load_in_fresh_process(suite, cache, LITMUS_CHECK_CACHE="0") == "ok True True"
    assert not (cache / "litmus").exists()


def test_a_corrupt_store_only_means_checking_again(tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    cache = tmp_path / "cache"
    (cache / "litmus").mkdir(parents=True)
    (cache / "litmus" / "known-valid.json").write_text("{not json")
    assert load_in_fresh_process(suite, cache) == "ok True True"
    assert load_in_fresh_process(suite, cache) == "ok False False"
