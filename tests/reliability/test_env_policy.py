"""What `{{ env.NAME }}` and `{{ secrets.NAME }}` may read, and the masking of env values.

The action's credentials (GITHUB_TOKEN, GH_TOKEN, INPUT_*, ACTIONS_*, RUNNER_*, and the cloud credentials the
judge providers read themselves: AWS_*, GOOGLE_APPLICATION_CREDENTIALS...) never resolve, through
any indirection and with no `default` to stand in; an untrusted run resolves only the names in
env-allow; and every env value is masked in every output unless `--env-allow` lists its name. Each
attack runs against a listener on 127.0.0.1 that must never receive the value.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from pipeline import check_run, run_litmus, write_suite
from test_secrets_cli import leaks, outputs

from litmus.errors import ProbeError
from litmus.load import load_suites
from litmus.run.redact import encodings
from litmus.run.runner import RunOptions, run_suites, secret_values
from litmus.trust import Trust

# Values the action's runner holds: none may reach a request or an output.
CREDENTIALS = {
    "GITHUB_TOKEN": "ghs_Tq7Vx2Lm9Kp4Rz8Wc3",
    "gh_token": "gho_Bn5Yd1Hs6Jf0Qa2Ue7",
    "INPUT_GITHUB-TOKEN": "ghs_Mw4Xc8Pv3Nt6Gk1Rb9",
    "ACTIONS_RUNTIME_TOKEN": "eyJ0eXAiOiJKV1QiLCJhbGci",
    "RUNNER_TEMP": "Zr5Fq9Wd2Ty7Hm3Lx0",
    # The cloud credentials the judge providers read themselves (Bedrock, Vertex).
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI7K7MDENGbPxRfiCYEXAMPLEKEY",
    "GOOGLE_APPLICATION_CREDENTIALS": "/tmp/gha-Xq7Lp2Vb9Nw4.json",
}

CREDENTIAL_SUITE = """version: 1
suite: Credentials
variables:
  carried: "{variable}"
flows:
  - name: send
    steps:
      - name: send
        request:
          url: /echo
          headers: {{X-Carried: "{header}"}}
        assertions:
          - {{type: status_code, expected: 200}}
"""

# (the template, written in the header or in a suite variable, the name the error gives)
NEVER = [
    ("{{ env.GITHUB_TOKEN }}", "GITHUB_TOKEN"),
    ("{{ secrets.gh_token }}", "gh_token"),
    ("{{ env.ACTIONS_RUNTIME_TOKEN | base64 | urlencode }}", "ACTIONS_RUNTIME_TOKEN"),
    # Set or not, a never-resolve name is an error: no fallback stands in for a token.
    ("{{ env.RUNNER_TEMP | default('fallback') }}", "RUNNER_TEMP"),
    ("{{ env.RUNNER_DEBUG | default('fallback') }}", "RUNNER_DEBUG"),
    ("{{ secrets.AWS_SECRET_ACCESS_KEY }}", "AWS_SECRET_ACCESS_KEY"),
    ("{{ env.GOOGLE_APPLICATION_CREDENTIALS | default('fallback') }}", "GOOGLE_APPLICATION_CREDENTIALS"),
]


def _suite_with(template: str, in_variable: bool) -> str:
    if in_variable:
        return CREDENTIAL_SUITE.format(variable=template.replace('"', '\\"'), header="{{ carried }}")
    return CREDENTIAL_SUITE.format(variable="plain", header=template)


def _position(text: str, template: str) -> str:
    for number, line in enumerate(text.splitlines(), 1):
        if template in line:
            return f"probes/creds.yaml:{number}:{line.index(template) + 1}"
    raise AssertionError(f"{template} not in the suite")


@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.parametrize("in_variable", [False, True], ids=["direct", "suite-variable"])
@pytest.mark.parametrize(("template", "name"), NEVER, ids=[name for _, name in NEVER])
def test_a_never_resolve_name_is_a_positioned_load_error(tmp_path, target, command, in_variable, template, name):
    text = _suite_with(template, in_variable)
    write_suite(tmp_path, "creds.yaml", text)
    args = ["run", "--out", "out", "--base-url", target.base_url] if command == "run" else ["validate"]
    ran = run_litmus(args, cwd=tmp_path, env=CREDENTIALS)
    assert ran.code == 2, ran.output
    stderr = ran.stderr.decode()
    assert f"{_position(text, template)}: error: " in stderr, stderr
    assert f"{name} never resolves: the action's credentials" in stderr, stderr
    assert target.requests == []
    assert not (tmp_path / "out").exists()
    texts = outputs(ran, tmp_path / "out")
    assert [leak for value in CREDENTIALS.values() for leak in leaks(texts, value)] == []
    assert "fallback" not in ran.stdout.decode()


def test_the_brief_s_attack_input_token_through_a_variable_never_loads(tmp_path, target):
    text = _suite_with("{{ env.INPUT_GITHUB-TOKEN }}", in_variable=True)
    write_suite(tmp_path, "creds.yaml", text)
    ran = run_litmus(["run", "--out", "out", "--base-url", target.base_url], cwd=tmp_path,
                     env=CREDENTIALS)
    assert ran.code == 2, ran.output
    assert "INPUT_GITHUB-TOKEN never resolves" in ran.stderr.decode()
    assert target.requests == []


def _echo(target) -> None:
    def echo(req):
        body = {"query": req.query, "headers": {k.lower(): v for k, v in req.headers.items()},
                "json": req.json() if req.body else None}
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()

    target.route("/echo", echo)


def test_at_run_time_a_never_resolve_name_is_the_step_s_error_not_its_default(tmp_path, target):
    # A suite built by code (not by the loader) carries the template: the renderer refuses it itself.
    _echo(target)
    text = _suite_with("{{ env.SAFE_NAME }}", in_variable=True)
    write_suite(tmp_path, "creds.yaml", text)
    environ = {**CREDENTIALS, "SAFE_NAME": "value"}
    suite = load_suites([tmp_path / "probes"], root=tmp_path, environ=environ).suites[0]
    for template in ("{{ env.GITHUB_TOKEN | default('fallback') }}", "{{ secrets.INPUT_GITHUB-TOKEN | upper }}"):
        forged = dataclasses.replace(suite, variables={"carried": template})
        result = run_suites([forged], RunOptions(base_url=target.base_url), environ=environ)
        step = result.suites[0].flow_runs[0].steps[0]
        assert step.status == "error"
        assert "never resolves: the action's credentials" in step.error
        assert target.requests == []
        document = json.dumps(dataclasses.asdict(result))
        assert "fallback" not in document
        assert [v for value in CREDENTIALS.values() for v in encodings(value) if v in document] == []


UNTRUSTED_SUITE = """version: 1
suite: Untrusted
flows:
  - name: allowed
    steps:
      - name: send allowed
        request: {url: "/echo?v={{ env.OK }}"}
        assertions:
          - {type: status_code, expected: 200}
  - name: refused env
    steps:
      - name: send env
        request: {url: /echo, headers: {X-Hidden: "{{ env.HIDDEN }}"}}
  - name: refused secret
    steps:
      - name: send secret
        request: {url: /echo, json: {p: "{{ secrets.HIDDEN | default('none') }}"}}
"""
HIDDEN = "Hd8Qw3Zk6Vn1Px4Tj"
ALLOWED = "Ok5Rm2Wy9Cs7Fb"


def _untrusted(target) -> Trust:
    return Trust(False, "test: a fork's pull request", env_allow=frozenset({"OK"}),
                 allowed_origins=frozenset({target.base_url}))


def test_an_untrusted_run_resolves_only_names_in_env_allow(tmp_path, target):
    _echo(target)
    write_suite(tmp_path, "untrusted.yaml", UNTRUSTED_SUITE)
    environ = {"OK": ALLOWED, "HIDDEN": HIDDEN}
    # Loaded as the lead's action may have (or an older cache of it): the run itself still refuses.
    suites = load_suites([tmp_path / "probes"], root=tmp_path, environ=environ).suites
    result = run_suites(suites, RunOptions(base_url=target.base_url, trust=_untrusted(target)), environ=environ)
    allowed, env_step, secret_step = (flow_run.steps[0] for flow_run in result.suites[0].flow_runs)
    assert allowed.status == "passed"
    # Only the allowed flow's request went out: neither HIDDEN nor the `default` stood in for it.
    assert [r.query["v"] for r in target.requests] == [[ALLOWED]]
    for step in (env_step, secret_step):
        assert step.status == "error"
        assert "HIDDEN is not in env-allow" in step.error and "action input env-allow" in step.error
    document = json.dumps(dataclasses.asdict(result))
    assert [form for form in encodings(HIDDEN) if form in document] == []
    # Allowed, so shown: env-allow also means "not masked".
    assert ALLOWED in allowed.request.url


def test_an_untrusted_load_names_each_refused_variable_once_at_its_first_use(tmp_path, target):
    """One message per refused variable (`env.X` and `secrets.X` are one variable), at its first use,
    counting the uses: the reader fixes one setting, not one line per use."""
    path = write_suite(tmp_path, "untrusted.yaml", UNTRUSTED_SUITE)
    with pytest.raises(ProbeError) as raised:
        load_suites([path.parent], root=tmp_path, environ={"OK": ALLOWED, "HIDDEN": HIDDEN}, trust=_untrusted(target))
    errors = [(d.position.line, d.position.column, d.message) for d in raised.value.diagnostics]
    lines = UNTRUSTED_SUITE.splitlines()
    refused = ("{{ env.HIDDEN }}", "{{ secrets.HIDDEN | default('none') }}")
    uses = [(n, line.index(t) + 1) for t in refused for n, line in enumerate(lines, 1) if t in line]
    assert len(uses) == 2
    assert [(line, column) for line, column, _ in errors] == uses[:1]
    [(_, _, message)] = errors
    assert "HIDDEN is not in env-allow" in message
    assert f"(2 uses; the first at probes/untrusted.yaml:{uses[0][0]})" in message


MASKED_SUITE = """version: 1
suite: Env masking
variables:
  shouted: "{{ env.TENANT | upper }}"
flows:
  - name: echo
    steps:
      - name: send
        request:
          url: "/echo?host={{ env.BASE_HOST }}"
          headers: {X-Tenant: "{{ shouted }}", X-Region: "{{ env.REGION }}"}
          json: {tenant: "{{ env.TENANT }}"}
        extract:
          echoed: {json_path: $.json.tenant}
        assertions:
          - {type: status_code, expected: 201}
          - {type: json_path, path: $.json.tenant, expected: "other"}
          - {type: contains, value: "{{ env.BASE_HOST }}-absent"}
          - {type: extract_match, variable: echoed, expected: "x"}
"""
BASE_HOST = "Hq7Zx0Wm3Rk9Tb"
TENANT = "Tn4Vy8Qp2Lc6"
NOTICE = "env values masked in every output: "


@pytest.mark.parametrize(("args", "variable", "shown"), [
    ([], None, ()),
    (["--env-allow", "TENANT"], None, ("TENANT",)),
    (["--env-allow", "BASE_HOST,TENANT"], None, ("BASE_HOST", "TENANT")),
    (["--env-allow", "BASE_HOST", "--env-allow", "TENANT"], None, ("BASE_HOST", "TENANT")),
    ([], "BASE_HOST", ("BASE_HOST",)),
], ids=["masked", "one-allowed", "comma-separated", "repeated", "LITMUS_ENV_ALLOW"])
def test_env_values_are_masked_in_every_output_unless_allowed(tmp_path, target, args, variable, shown):
    _echo(target)
    write_suite(tmp_path, "masked.yaml", MASKED_SUITE)
    environ = {"BASE_HOST": BASE_HOST, "TENANT": TENANT, "REGION": "eu"}
    if variable:
        environ["LITMUS_ENV_ALLOW"] = variable
    ran = run_litmus(["run", "--out", "out", "--base-url", target.base_url, *args], cwd=tmp_path,
                     env=environ)
    assert ran.code == 1, ran.output
    # The values were sent: masking is of the outputs only.
    sent = target.requests[0]
    assert (sent.query["host"], sent.headers["X-Tenant"], sent.json()) == ([BASE_HOST], TENANT.upper(),
                                                                          {"tenant": TENANT})
    result = check_run(tmp_path / "out")
    texts = outputs(ran, tmp_path / "out")
    values = {"BASE_HOST": BASE_HOST, "TENANT": TENANT}
    for name, value in values.items():
        found = leaks(texts, value) + leaks(texts, value.upper()) if name == "TENANT" else leaks(texts, value)
        if name in shown:
            assert found, f"{name} is allowed, so shown"
        else:
            assert found == [], found
    masked = sorted(set(values) - set(shown))
    notices = [line for line in ran.stdout.decode().splitlines() if NOTICE in line]
    if masked:
        assert notices == [f"{NOTICE}{', '.join(masked)} (list a name in --env-allow to show it)"], ran.output
    else:
        assert notices == [], ran.output
    # A value too short to be a credential is not masked (it would hide ordinary words), nor named.
    request = result.suites[0].flow_runs[0].steps[0].request
    assert request.headers["X-Region"] == "eu"


def test_env_allow_cannot_allow_a_never_resolve_name(tmp_path, target):
    write_suite(tmp_path, "masked.yaml", MASKED_SUITE)
    ran = run_litmus(["run", "--out", "out", "--base-url", target.base_url, "--env-allow", "TENANT,GITHUB_TOKEN"],
                     cwd=tmp_path, env={"BASE_HOST": BASE_HOST, "TENANT": TENANT, "REGION": "eu"})
    assert ran.code == 2, ran.output
    assert "--env-allow GITHUB_TOKEN: never resolves" in ran.stderr.decode()
    assert target.requests == []


def test_the_action_s_pre_masking_includes_env_values_it_masks(tmp_path):
    write_suite(tmp_path, "masked.yaml", MASKED_SUITE)
    environ = {"BASE_HOST": BASE_HOST, "TENANT": TENANT, "REGION": "eu"}
    suites = load_suites([tmp_path / "probes"], root=tmp_path, environ=environ).suites
    assert sorted(secret_values(suites, environ, Trust.local())) == sorted([BASE_HOST, TENANT])
    assert list(secret_values(suites, environ, Trust.local(env_allow=["BASE_HOST"]))) == [TENANT]
