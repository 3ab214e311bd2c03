"""`type: python` through `litmus run` and `litmus validate`: every return shape, exceptions, the
step's deadline, what the function sees, and a loader that checks the function without running it."""

from __future__ import annotations

import json

import pytest
from harness import outcomes, run_suite, suite_of

from support.cli import litmus
from support.target import Target

pytestmark = pytest.mark.timing  # the checks share a step deadline of 1.5 s

CHECKS = '''\
import time


def passes(response, context):
    return True


def passes_with_none(response, context):
    return None


def fails(response, context):
    return False


def fails_with_reason(response, context):
    return f"status {response.status}, wanted 201"


def fails_with_mismatches(response, context, limit):
    items = response.json()["items"]
    return [{"path": f"$.items[{i}].price", "expected": f"<= {limit}", "actual": item["price"],
             "reason": f"price {item['price']} over {limit}"}
            for i, item in enumerate(items) if item["price"] > limit]


def no_mismatches(response, context):
    return []


def returns_a_number(response, context):
    return 42


def returns_bad_items(response, context):
    return [{"where": "$"}]


def raises(response, context):
    total = response.json()["total"]
    return total / 0


def too_slow(response, context):
    time.sleep(5)
    return True


def sees_everything(response, context, expected_status, label):
    assert response.status == expected_status
    assert response.headers["content-type"] == "application/json"
    assert response.json()["total"] == 34 and '"total"' in response.text and response.elapsed_ms >= 0
    assert context.variables["total"] == 34 and context.run_index == 0 and context.scenario is None
    assert label == "total 34"
    return True
'''



# For `validate`, which must not run the file: a marker it would leave (the worker of a run could not
# write it: it writes only in its own temp dir).
MARKED_CHECKS = 'MARKER = __import__("pathlib").Path(__file__).with_name("imported.marker")\n' \
    'MARKER.write_text("the module ran")\n' + CHECKS


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(CHECKS.splitlines(), 1) if text in line)


FILE = "probes/checks/shapes.py"  # as the finding names it: relative to the repository root
CASES = [
    ("returns True", "passes", {}, "passed", None),
    ("returns None", "passes_with_none", {}, "passed", None),
    ("returns False", "fails", {}, "failed", [(f"{FILE}:{line_of('def fails(')}", "fails() returned False")]),
    ("returns a reason", "fails_with_reason", {}, "failed",
     [(f"{FILE}:{line_of('def fails_with_reason')}", "status 200, wanted 201")]),
    ("returns mismatches", "fails_with_mismatches", {"limit": 5}, "failed",
     [("$.items[0].price", "price 10 over 5"), ("$.items[1].price", "price 5.5 over 5")]),
    ("returns no mismatches", "no_mismatches", {}, "passed", None),
    ("returns a number", "returns_a_number", {}, "error", None),
    ("returns bad items", "returns_bad_items", {}, "error", None),
    ("raises", "raises", {}, "error", None),
    ("too slow", "too_slow", {}, "error", None),
    ("sees response, context and args", "sees_everything",
     {"expected_status": 200, "label": "total {{ total }}"}, "passed", None),
]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("python")
    assertions = [{"name": name, "type": "python", "function": f"checks/shapes.py:{function}",
                   **({"args": args} if args else {})} for name, function, args, _, _ in CASES]
    step = {"name": "order", "request": {"url": "/order", "timeout_ms": 1500},
            "extract": {"total": {"json_path": "$.total"}}, "assertions": assertions}
    with Target() as target:
        target.json("/order", {"total": 34, "items": [{"price": 10}, {"price": 5.5}, {"price": 3}]})
        done, results = run_suite(root, suite_of([step]), target.base_url,
                                  extra_files={"probes/checks/shapes.py": CHECKS})
    return root, done, outcomes(results)


@pytest.mark.parametrize("name, function, args, status, mismatches", CASES, ids=[c[0] for c in CASES])
def test_return_shapes(run, name, function, args, status, mismatches):
    outcome = run[2][name]
    assert outcome["status"] == status, outcome
    if mismatches is not None:
        assert [(m["path"], m["reason"]) for m in outcome["mismatches"]] == mismatches


def test_an_exception_is_an_error_with_its_last_line_at_the_functions_file_and_line(run):
    outcome = run[2]["raises"]
    defined = f"{FILE}:{line_of('def raises')}"
    assert outcome["reason"] == (f"{defined} raises() raised ZeroDivisionError: division by zero "
                                 f"(at {FILE}:{line_of('total / 0')})")
    assert outcome["mismatches"][0]["path"] == defined


def test_a_call_past_the_steps_deadline_is_an_error_and_the_run_goes_on(run):
    outcome = run[2]["too slow"]
    assert "did not return within the step's deadline" in outcome["reason"]
    assert run[2]["sees response, context and args"]["status"] == "passed"  # evaluated after it
    assert run[1].returncode == 0


def test_a_wrong_return_type_says_what_is_allowed(run):
    assert "returned int; expected True, None, False, a string or a list of mismatches" in \
        run[2]["returns a number"]["reason"]
    assert "item 0 is not a {path, expected, actual, reason} mapping" in run[2]["returns bad items"]["reason"]


def test_the_terminal_line_points_at_the_function(run):
    assert f"{FILE}:{line_of('def fails_with_reason')}: status 200, wanted 201" in run[1].stdout


def validate(root):
    return litmus(root, "validate", "--format", "json", "probes", timeout=60)


def write(root, function: str, checks: str | None = MARKED_CHECKS) -> None:
    (root / "probes" / "checks").mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    if checks is not None:
        (root / "probes" / "checks" / "shapes.py").write_text(checks)
    (root / "probes" / "suite.yaml").write_text(
        "version: 1\nsuite: S\nflows:\n  - name: f\n    steps:\n      - name: s\n        request: {url: /}\n"
        f"        assertions:\n          - type: python\n            function: {function}\n")


def errors(done) -> list[tuple[int, int, str]]:
    document = json.loads(done.stdout)
    return [(d["line"], d["column"], d["message"]) for d in document["diagnostics"] if d["severity"] == "error"]


def test_validate_checks_the_function_exists_without_running_the_file(tmp_path):
    write(tmp_path, "checks/shapes.py:passes")
    done = validate(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (tmp_path / "probes" / "checks" / "imported.marker").exists()


@pytest.mark.parametrize("function, checks, message", [
    ("checks/shapes.py:pases", MARKED_CHECKS, "'checks/shapes.py' defines no top-level function 'pases' "
                                       "(did you mean 'passes'?)"),
    ("checks/missing.py:passes", MARKED_CHECKS, "file 'checks/missing.py' does not exist"),
    ("../../outside.py:passes", MARKED_CHECKS, "'../../outside.py' resolves outside the repository root"),
    ("checks/shapes.py:passes", "def passes(:\n", "'checks/shapes.py' line 1: invalid Python"),
    ("checks/shapes.py", MARKED_CHECKS, "'function' must be path/to/file.py:function_name"),
])
def test_validate_reports_a_bad_function_at_its_position(tmp_path, function, checks, message):
    (tmp_path / "outside.py").write_text("def passes(r, c):\n    return True\n")
    write(tmp_path / "repo", function, checks)
    done = validate(tmp_path / "repo")
    assert done.returncode == 2
    ((line, column, text),) = errors(done)
    assert (line, column) == (10, 23)
    assert text.startswith(message), text
    assert not (tmp_path / "repo" / "probes" / "checks" / "imported.marker").exists()
