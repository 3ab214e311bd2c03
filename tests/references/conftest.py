"""The project the accepted-references tests run in: a repository with the Orders suite, a target that
answers each order and the fake judge."""

from __future__ import annotations

import json
import os

import pytest
from reference_helpers import SUITE, reply_for

from support.cli import write_judge_config
from support.fake_judge import API_KEY


@pytest.fixture
def project(tmp_path, monkeypatch, target, fake_judge):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    for name in [n for n in os.environ if n.startswith("LITMUS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("JUDGE_KEY", API_KEY)
    (tmp_path / ".git").mkdir()  # the repository root
    (tmp_path / "probes" / "answers").mkdir(parents=True)
    (tmp_path / "probes" / "orders.yaml").write_text(SUITE)
    (tmp_path / "probes" / "answers" / "filed.txt").write_text("Order 8 was delivered.\n")
    write_judge_config(tmp_path, fake_judge.openai_base_url)
    target.route("/chat", lambda req: (200, {"Content-Type": "application/json"},
                                       json.dumps({"reply": reply_for(req.json()["order_id"])}).encode()))
    return tmp_path
