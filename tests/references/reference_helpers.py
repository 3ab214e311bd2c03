"""Building blocks for the accepted-references tests: the suite, the target's replies, running `litmus`, and
snapshots of the project to prove that nothing was written."""

from __future__ import annotations

import difflib
import os

from litmus.cli import main

SUITE = """\
version: 1
suite: Orders
context:
  name: orders
  scenarios:
    - id: delayed
      data: {order_id: 1042}
      reference_response: Order 1042 is delayed.   # approved in March
    - id: fresh
      data: {order_id: 7}
    - id: filed
      data: {order_id: 8}
      reference_response_file: answers/filed.txt
flows:
  - name: Ask
    steps:
      - name: ask
        request: {method: POST, url: /chat, json: {order_id: "{{ scenario.data.order_id }}"}}
        assertions:
          - type: accurate_with_scenario_context
            select: $.reply
"""


def reply_for(order_id) -> str:
    return f"Order {order_id} arrives on 5 December."


def litmus(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def tree(root) -> dict[str, bytes]:
    """Every file under `root` but the run's outputs and caches, by relative path."""
    found = {}
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = [d for d in subdirs if d not in ("litmus-report", ".litmus", ".git")]
        for name in names:
            path = os.path.join(directory, name)
            found[os.path.relpath(path, root)] = b"<link>" if os.path.islink(path) else open(path, "rb").read()
    return found


def changed_lines(old: str, new: str) -> tuple[list[str], list[str]]:
    """The removed and the added lines of the unified diff of two texts."""
    diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0))
    removed = [line[1:] for line in diff if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in diff if line.startswith("+") and not line.startswith("+++")]
    return removed, added


def refused(project, capsys, *argv: str) -> str:
    before = tree(project)
    code, out, err = litmus(capsys, *argv)
    assert code == 1, out + err
    assert "refused, nothing written" in err
    assert tree(project) == before
    return err
