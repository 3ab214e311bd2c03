"""Run configuration: `litmus.yaml` at the repository root, `LITMUS_*` environment variables, flags.

Precedence, highest first: a command-line flag, then its `LITMUS_*` variable, then the project file
(`--config PATH`, else `litmus.yaml` at the root), then the built-in default. The file holds two
sections, `judge` (see PROBE-FORMAT.md, "Run configuration and judges") and `pricing` (USD per million
tokens by model, for the `cost` check and the totals: see docs/cost.md); an unknown key is an
error with its file:line:column, so a typo never silently turns a judge off. Every problem of the
file is reported at once (`litmus validate` checks it too). `judge: {provider: none}` or
`--no-judge` turns judging off on purpose.

API keys are never configuration: `api_key_env` names the environment variable holding the key,
and never one of the action's credentials (`litmus.trust.NEVER_RESOLVE`). A key is sent only to the
endpoint it was configured for: a second tier or embeddings model on another endpoint does not
inherit it. A run that does not trust the checkout (`Trust`) reads the file as it is at the base
commit, and takes judge endpoints and key names only from flags and `LITMUS_*` variables (the
action's inputs) or the provider's defaults; `RunConfig.notes` says what was left out.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from litmus import files
from litmus.errors import Position, ProbeError
from litmus.files import MAX_FILE_BYTES
from litmus.git import file_at, file_size_at, has_commit
from litmus.load.diagnostics import Collector, Span
from litmus.numbers import number_argument, parse_number
from litmus.text import did_you_mean
from litmus.trust import NEVER_RESOLVE, Trust, never_resolves, origin
from litmus.usage import Price

# `none` turns judging off on purpose (like --no-judge): LLM-based assertions are skipped and counted.
NO_JUDGE = "none"
# The judges in a team's own cloud (docs/judges.md, "Providers in your own cloud").
CLOUD_PROVIDERS = ("azure_openai", "bedrock", "vertex", "gemini")
PROVIDERS = ("openai", "anthropic", *CLOUD_PROVIDERS, "replay", NO_JUDGE)
# For `similar`: each provider's embeddings API, or recorded embeddings only (Anthropic has none).
EMBEDDING_PROVIDERS = ("openai", *CLOUD_PROVIDERS, "replay")
DEFAULT_BASE_URL = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com",
                    "gemini": "https://generativelanguage.googleapis.com"}
DEFAULT_API_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY",
                       "azure_openai": "AZURE_OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}
# What a provider reads itself from the environment to sign with (botocore's names), besides its key variable.
SIGNING_SECRETS = {"bedrock": ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")}
# The provider fields besides provider and model, per provider; those a provider needs are required.
PROVIDER_FIELDS: dict[str, tuple[str, ...]] = {
    "openai": ("base_url", "api_key_env"), "anthropic": ("base_url", "api_key_env"),
    "azure_openai": ("base_url", "deployment", "api_version", "api_key_env", "token_env"),
    "bedrock": ("base_url", "region"), "vertex": ("base_url", "project", "location", "token_env"),
    "gemini": ("base_url", "api_key_env"), "replay": (),
}
REQUIRED_FIELDS = {"azure_openai": ("base_url", "deployment", "api_version"), "bedrock": ("region",),
                   "vertex": ("project", "location")}
# Fields that build the endpoint's host or path: anything else (a dot, a slash, `@`, `#`) could send the key
# elsewhere, so a value outside these is an error, never escaped and sent.
FIELD_PATTERNS = {
    "region": re.compile(r"[a-z]{2}(-[a-z]+)+-\d{1,2}"),  # AWS: us-east-1, ap-southeast-2, us-gov-west-1
    "location": re.compile(r"global|[a-z]+(-[a-z]+)*\d{1,2}"),  # Google Cloud: us-central1, europe-west4, global
    "project": re.compile(r"[a-z][a-z0-9-]{4,28}[a-z0-9]"),  # Google Cloud project id
    "deployment": re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"),  # Azure OpenAI deployment name
    "api_version": re.compile(r"\d{4}-\d{2}-\d{2}(-preview)?"),  # Azure OpenAI api-version
}
FIELD_EXAMPLES = {"region": "us-east-1", "location": "us-central1", "project": "my-project-123",
                  "deployment": "gpt-4o-mini", "api_version": "2024-10-21"}
DEFAULT_CACHE_DIR = ".litmus/cache"
CONFIG_FILE = "litmus.yaml"
# A `pricing:` entry's fields: USD per million tokens.
PRICE_KEYS = ("input_per_mtok", "output_per_mtok")


@dataclass(frozen=True)
class ProviderConfig:
    """One judge tier: which API, which model, and where its key lives."""

    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    # The NAME of the variable holding an OAuth / Entra access token (azure_openai, vertex), sent as a bearer token.
    token_env: str | None = None
    # Azure OpenAI: the deployment called and the api-version query parameter.
    deployment: str | None = None
    api_version: str | None = None
    # Bedrock: the AWS region; Vertex AI: the Google Cloud project and location.
    region: str | None = None
    project: str | None = None
    location: str | None = None

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def secret_variables(self) -> tuple[str, ...]:
        """The variables whose values this tier sends or signs with: masked in every output of the run."""
        return tuple(filter(None, (self.credential_env, *SIGNING_SECRETS.get(self.provider, ()))))

    @property
    def credential_env(self) -> str | None:
        """The variable this tier's credential is read from (an API key, else a token); None: the provider's own
        credentials (Bedrock's AWS variables, Vertex's application-default credentials)."""
        return self.api_key_env or self.token_env


@dataclass(frozen=True)
class EscalationConfig:
    # Escalate when |score - threshold| <= band, or when the verdict was unparseable.
    band: float
    # Fully resolved: fields left out in the file are already inherited from the first tier.
    to: ProviderConfig


@dataclass(frozen=True)
class JudgeConfig(ProviderConfig):
    """The first tier's fields (ProviderConfig's), then the settings of the judge as a whole."""

    threshold: float = 75
    concurrency: int = 8
    max_calls: int = 1000
    cache: Path = Path(DEFAULT_CACHE_DIR)
    escalation: EscalationConfig | None = None
    # The embeddings model of `similar`; None: not configured (a `similar` check is then an error).
    embeddings: ProviderConfig | None = None
    # The simulated user of `simulate:` steps; None: the first tier plays it.
    simulator: ProviderConfig | None = None
    # --no-cache: neither read nor write verdicts (the replay provider still reads cassettes).
    use_cache: bool = True
    # --record: also write a cassette per verdict, for the replay provider.
    record: bool = False
    timeout_ms: float = 60_000
    # Retries of one call on 429, 5xx and connection errors (a timed-out read is retried once).
    retries: int = 3
    max_tokens: int = 1024

    @property
    def tier1(self) -> ProviderConfig:
        return ProviderConfig(**{name: getattr(self, name) for name in _TIER_KEYS})


@dataclass(frozen=True)
class RunConfig:
    # The file read, or None when there was none.
    path: Path | None = None
    # None: no judge (LLM-based assertions are not evaluated, Intent Evaluation is deterministic).
    judge: JudgeConfig | None = None
    # --no-judge or judge.provider none: no judge on purpose; LLM-based assertions skipped, not failed.
    judge_disabled: bool = False
    # What the untrusted policy left out or read elsewhere (e.g. the PR's litmus.yaml), for the log and comment.
    notes: tuple[str, ...] = ()
    # `pricing:`: model (or model prefix) -> its price, for the target's and the judge's tokens (litmus.usage).
    pricing: Mapping[str, Price] = dataclasses.field(default_factory=dict)


# A config file's judge settings with their positions, and its pricing.
Sections = tuple[dict[str, Any], dict[str, Position], dict[str, Price]]

# Settings that a flag or a LITMUS_* variable can give: (judge key, flag dest, variable, kind).
_OVERRIDES: tuple[tuple[str, str, str, str], ...] = (
    ("provider", "judge_provider", "LITMUS_JUDGE_PROVIDER", "choice"),
    ("model", "judge_model", "LITMUS_JUDGE_MODEL", "string"),
    ("base_url", "judge_base_url", "LITMUS_JUDGE_BASE_URL", "string"),
    ("api_key_env", "judge_api_key_env", "LITMUS_JUDGE_API_KEY_ENV", "string"),
    ("threshold", "judge_threshold", "LITMUS_JUDGE_THRESHOLD", "percent"),
    ("concurrency", "judge_concurrency", "LITMUS_JUDGE_CONCURRENCY", "positive"),
    ("max_calls", "judge_max_calls", "LITMUS_JUDGE_MAX_CALLS", "count"),
    ("cache", "cache_dir", "LITMUS_CACHE_DIR", "string"),
    ("timeout_ms", "judge_timeout_ms", "LITMUS_JUDGE_TIMEOUT_MS", "positive"),
)
_TIER_KEYS = ("provider", "model", "base_url", "api_key_env", "token_env", "deployment", "api_version", "region",
              "project", "location")
# Tier keys only the file gives (no flag): credentials and cloud coordinates are the repository's configuration.
_FILE_TIER_KEYS = ("token_env", "deployment", "api_version", "region", "project", "location")
_FILE_KEYS = {key for key, *_ in _OVERRIDES} | {"escalation", "embeddings", "simulator", "retries", "max_tokens",
                                                *_FILE_TIER_KEYS}
# Variable names: refused when they name one of the action's credentials, left out of an untrusted run's file.
_CREDENTIAL_KEYS = ("api_key_env", "token_env")
_TRUE = ("1", "true", "yes", "on")
# Where a setting given by a flag or a LITMUS_* variable is said to come from (the operator's, never the PR's).
_COMMAND_LINE, _ENVIRONMENT = "<command line>", "<environment>"


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "configuration and judge",
        "Flags override LITMUS_* environment variables, which override litmus.yaml at the repository root. "
        "API keys are read from the environment variable named by --judge-api-key-env, never from a file.",
    )
    group.add_argument("--config", metavar="PATH", help="project config file (default: litmus.yaml at the repository "
                       "root, if present) [LITMUS_CONFIG]")
    group.add_argument("--judge-provider", choices=PROVIDERS, help="openai (any OpenAI-compatible chat-completions "
                       "API), anthropic (Messages API), azure_openai, bedrock, vertex, gemini (their fields, e.g. "
                       "region or deployment, are set in litmus.yaml; see docs/judges.md), replay (recorded verdicts "
                       "only) or none (like --no-judge) [LITMUS_JUDGE_PROVIDER]")
    group.add_argument("--no-judge", action="store_true", default=None, help="deterministic checks only, on purpose: "
                       "LLM-based assertions are skipped and counted, and do not fail the suite. Without a judge and "
                       "without this flag they are not evaluated, which fails their suite [LITMUS_NO_JUDGE=1]")
    group.add_argument("--judge-model", metavar="NAME", help="judge model, e.g. gpt-4o-mini [LITMUS_JUDGE_MODEL]")
    group.add_argument("--judge-base-url", metavar="URL", help="API base URL, e.g. http://localhost:11434/v1; for "
                       "azure_openai the resource's https://NAME.openai.azure.com; for bedrock and vertex it replaces "
                       "the endpoint built from region / location (a private endpoint) [LITMUS_JUDGE_BASE_URL]")
    group.add_argument("--judge-api-key-env", metavar="VAR", help="NAME of the environment variable holding the API "
                       "key (default OPENAI_API_KEY / ANTHROPIC_API_KEY / AZURE_OPENAI_API_KEY / GEMINI_API_KEY; "
                       "bedrock reads the AWS_* variables itself) [LITMUS_JUDGE_API_KEY_ENV]")
    group.add_argument("--judge-threshold", metavar="PERCENT", type=_number_flag("threshold"),
                       help="default pass threshold of LLM-based assertions "
                       "(default 75) [LITMUS_JUDGE_THRESHOLD]")
    group.add_argument("--judge-concurrency", metavar="N", type=_number_flag("concurrency"),
                       help="judge calls in flight at once (default 8) "
                       "[LITMUS_JUDGE_CONCURRENCY]")
    group.add_argument("--judge-max-calls", metavar="N", type=_number_flag("max_calls"),
                       help="budget: past N judge calls, LLM-based assertions are "
                       "skipped (default 1000) [LITMUS_JUDGE_MAX_CALLS]")
    group.add_argument("--judge-timeout-ms", metavar="MS", type=_number_flag("timeout_ms"),
                       help="timeout of one judge call (default 60000) "
                       "[LITMUS_JUDGE_TIMEOUT_MS]")
    group.add_argument("--cache-dir", metavar="DIR", help=f"verdict cache and cassette directory (default "
                       f"{DEFAULT_CACHE_DIR}) [LITMUS_CACHE_DIR]")
    group.add_argument("--no-cache", action="store_true", default=None, help="neither read nor write cached "
                       "verdicts: every judge call goes to the provider [LITMUS_NO_CACHE=1]")
    group.add_argument("--record", action="store_true", default=None, help="also write a cassette per verdict, "
                       "for `--judge-provider replay` (e.g. offline demos, CI without keys) [LITMUS_RECORD=1]")


def resolve_config(args: argparse.Namespace, environ: Mapping[str, str], root: Path,
                   trust: Trust | None = None) -> RunConfig:
    """The run configuration from flags, environment and project file; ProbeError (every problem found,
    each with its position) on bad input. `trust` (default: a local run's) decides which copy of the file
    is read and which of its settings apply (see the module docstring)."""
    trust = trust or Trust.local()
    problems = Collector()
    notes: list[str] = []
    given = getattr(args, "config", None) or environ.get("LITMUS_CONFIG")
    path = (root / given) if given else root / CONFIG_FILE
    if given and not path.is_file():
        problems.error(Span(Position(str(given))), f"config file {given} not found")
        raise ProbeError(problems.diagnostics)
    section, positions, pricing = ({}, {}, {})
    if not trust.runs_pr_code and _inside(path, root):
        # The work tree's copy may be the pull request's: the base commit's is the repository's own (its
        # `pricing:` too: a pull request that could price its target's tokens at zero could pass any cost gate).
        text = _text_at_base(path, root, trust.base_sha, notes, problems)
        if text is None:
            path = None
        else:
            section, positions, pricing = _config_sections(_display(path, root), text, problems)
    elif os.path.lexists(path):  # a FIFO or a link to /dev/zero is refused by name, not skipped as absent
        section, positions, pricing = _read_config_sections(path, root, problems)
    else:
        path = None
    display = _display(path, root) if path else "<flags>"

    values: dict[str, Any] = {k: v for k, v in section.items() if k in _FILE_KEYS}
    sources: dict[str, Position] = {k: positions[k] for k in values}
    for key, dest, variable, kind in _OVERRIDES:
        flag = getattr(args, dest, None)
        if flag is not None:
            given_value, where = flag, Position(_COMMAND_LINE)
            label = f"{key} (--{dest.replace('_', '-')})"
        elif environ.get(variable):
            given_value, where, label = environ[variable], Position(_ENVIRONMENT), f"{key} ({variable})"
        else:
            continue
        value = _coerce(given_value, kind, label, where, problems)
        if value is not _INVALID:
            values[key], sources[key] = value, where
    _refuse_credential_names(values, sources, problems)
    if not trust.runs_pr_code:
        values, left_out = _untrusted_settings(values, sources, trust)
        if left_out:
            notes.append(f"judge settings from {display} not applied: {', '.join(left_out)}: in an untrusted run "
                         "the judge's endpoints and API key variables come only from the action's inputs "
                         "(judge-base-url, judge-api-key) or the provider's defaults")
    use_cache = not _flag(args, "no_cache", environ, "LITMUS_NO_CACHE")
    record = _flag(args, "record", environ, "LITMUS_RECORD")
    disabled = _flag(args, "no_judge", environ, "LITMUS_NO_JUDGE") or values.get("provider") == NO_JUDGE
    judge = None
    if values and not disabled:
        judge = _judge(values, sources, display, root, use_cache, record, problems)
    if problems.errors:
        raise ProbeError(sorted(problems.errors, key=lambda d: (d.position.path, d.position.line,
                                                                d.position.column)))
    return RunConfig(path=path, judge=judge, judge_disabled=disabled, notes=tuple(notes), pricing=pricing)


def _text_at_base(path: Path, root: Path, base_sha: str | None, notes: list[str], problems: Collector) -> str | None:
    """The config file as it is at the base commit, or None (no file: at the base, or the base unknown);
    a note when the work tree's copy, which the pull request may have written, is not the one applied."""
    display = _display(path, root)
    if not base_sha or not has_commit(root, base_sha):
        why = "the base commit is unknown" if not base_sha else f"the base commit {base_sha[:12]} is not in the " \
                                                                 "checkout (fetch it, e.g. fetch-depth: 0)"
        if path.is_file():
            notes.append(f"{display} is not read: this run is untrusted and {why}, so the pull request's copy "
                         "cannot be told from the repository's; only the action's inputs and the defaults apply")
        return None
    short = base_sha[:12]
    size = file_size_at(root, base_sha, display)
    if size is None:
        if path.is_file():
            notes.append(f"the PR's changes to {display} are not applied: the base commit {short} has no {display}")
        return None
    data = file_at(root, base_sha, display) if size <= MAX_FILE_BYTES else None
    if data is None:
        why = f"larger than {MAX_FILE_BYTES} bytes" if size > MAX_FILE_BYTES else "git cannot read it"
        problems.error(Span(Position(display)), f"cannot read config at the base commit {short}: {why}")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.error(Span(Position(display)), f"cannot read config at the base commit {short}: {exc}")
        return None
    if _bounded_bytes(path) != data:
        notes.append(f"the PR's changes to {display} are not applied: it is read as at the base commit {short}")
    return text


def _bounded_bytes(path: Path) -> bytes | None:
    """The work tree's copy, for comparison only (None when unreadable or too large to be a config)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= MAX_FILE_BYTES else None


def _inside(path: Path, root: Path) -> bool:
    """Whether `path` is in the repository (a file elsewhere, e.g. in the runner's temp, is not the checkout's)."""
    return path.resolve().is_relative_to(root.resolve())


def _tier_sections(values: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """Each provider section (judge, escalation.to, embeddings, simulator) as given: the prefix naming its
    fields, the setting whose position it has, and the section."""
    sections = [("judge.", "api_key_env", values)]
    escalation = values.get("escalation")
    if isinstance(escalation, dict) and isinstance(escalation.get("to"), dict):
        sections.append(("judge.escalation.to.", "escalation", escalation["to"]))
    for name in ("embeddings", "simulator"):
        if isinstance(values.get(name), dict):
            sections.append((f"judge.{name}.", name, values[name]))
    return sections


def _refuse_credential_names(values: dict[str, Any], sources: dict[str, Position], problems: Collector) -> None:
    """Every mode: no `api_key_env` or `token_env` may name one of the action's credentials (the GitHub token, its
    inputs, the cloud credentials the providers read themselves...)."""
    for prefix, setting, section in _tier_sections(values):
        for field in _CREDENTIAL_KEYS:
            name = section.get(field)
            if isinstance(name, str) and never_resolves(name):
                where = sources[field] if prefix == "judge." else sources[setting]
                problems.error(Span(where),
                               f"{prefix}{field}: {name!r} names one of the action's credentials "
                               f"({', '.join(NEVER_RESOLVE)}), which never resolve, in any mode; name the "
                               "variable that holds the judge's API key or token")


def _untrusted_settings(values: dict[str, Any], sources: dict[str, Position],
                        trust: Trust) -> tuple[dict[str, Any], list[str]]:
    """The settings without what an untrusted run takes from no config file: endpoints (`base_url`) and
    API key variables (`api_key_env`, unless env-allow lists the name); and the fields left out."""
    kept = dict(values)
    left_out: list[str] = []

    def allowed(section: dict[str, Any], field: str) -> bool:
        return field in _CREDENTIAL_KEYS and trust.may_resolve(str(section[field]))

    for field in ("base_url", *_CREDENTIAL_KEYS):
        from_file = field in kept and sources[field].path not in (_COMMAND_LINE, _ENVIRONMENT)
        if from_file and not allowed(kept, field):
            del kept[field]
            left_out.append(f"judge.{field}")
    if isinstance(kept.get("escalation"), dict) and isinstance(kept["escalation"].get("to"), dict):
        kept["escalation"] = {**kept["escalation"], "to": dict(kept["escalation"]["to"])}
    for name in ("embeddings", "simulator"):
        if isinstance(kept.get(name), dict):
            kept[name] = dict(kept[name])
    for prefix, _, section in _tier_sections(kept)[1:]:  # copies: sections only a file can give
        for field in ("base_url", *_CREDENTIAL_KEYS):
            if field in section and not allowed(section, field):
                del section[field]
                left_out.append(prefix + field)
    return kept, left_out


def _judge(values: dict, sources: dict, display: str, root: Path, use_cache: bool, record: bool,
           problems: Collector) -> JudgeConfig | None:
    where = Span(sources.get("provider", Position(display)))
    provider = values.get("provider")
    if provider is None:
        if "provider" not in sources:  # a provider that was given but invalid is already reported
            problems.error(where, "judge.provider is required when any judge setting is given "
                                  f"(one of {', '.join(PROVIDERS)})")
        return None
    model = values.get("model") or ("replay" if provider == "replay" else None)
    if model is None:
        problems.error(where, f"judge.model is required for provider {provider} (pin the judge model)")
    escalation = _escalation(values["escalation"], provider, sources["escalation"], problems) \
        if "escalation" in values else None
    if model is None or escalation is _INVALID:
        return None
    tier1 = _with_provider_defaults(ProviderConfig(provider, model, **_fields(values)))
    valid = _check_tier("judge.", tier1, lambda field: sources.get(field, sources["provider"]), problems)
    if escalation is not None:
        escalation = EscalationConfig(escalation.band, _inherit(escalation.to, tier1))
        valid &= _check_tier("judge.escalation.to.", escalation.to, lambda _: sources["escalation"], problems)
    if "embeddings" in values:
        embeddings = _embeddings(values["embeddings"], tier1, sources["embeddings"], problems)
        if embeddings is _INVALID:
            return None
    else:
        # A replayed run replays embeddings too: the cassettes hold both.
        embeddings = ProviderConfig("replay", "recorded") if tier1.provider == "replay" else None
    simulator = _simulator(values["simulator"], tier1, sources["simulator"], problems) \
        if "simulator" in values else None
    if simulator is _INVALID:
        return None
    for name, tier in (("embeddings", embeddings), ("simulator", simulator)):
        if tier is not None and name in sources:
            valid &= _check_tier(f"judge.{name}.", tier, lambda _, name=name: sources[name], problems)
    if not valid:
        return None
    cache = Path(values.get("cache", DEFAULT_CACHE_DIR))
    return JudgeConfig(
        **{name: getattr(tier1, name) for name in _TIER_KEYS},
        cache=cache if cache.is_absolute() else root / cache, use_cache=use_cache, record=record,
        escalation=escalation, embeddings=embeddings, simulator=simulator,
        **{k: values[k] for k in ("threshold", "concurrency", "max_calls", "timeout_ms", "retries", "max_tokens")
           if k in values},
    )


def _embeddings(raw: Any, tier1: ProviderConfig, where: Position, problems: Collector) -> Any:
    """The embeddings model of `similar`, or _INVALID (the problem recorded)."""
    span = Span(where)
    if not isinstance(raw, dict) or set(raw) - set(_TIER_KEYS):
        problems.error(span, f"judge.embeddings takes {', '.join(_TIER_KEYS)} (provider: one of "
                             f"{', '.join(EMBEDDING_PROVIDERS)})")
        return _INVALID
    # A cloud judge's own embeddings by default (the team's tenant, the same credentials); else OpenAI's.
    provider = raw.get("provider", tier1.provider if tier1.provider in CLOUD_PROVIDERS else "openai")
    if provider not in EMBEDDING_PROVIDERS:
        problems.error(span, f"judge.embeddings.provider: {provider!r} is not one of {', '.join(EMBEDDING_PROVIDERS)}")
        return _INVALID
    model = raw.get("model") or ("recorded" if provider == "replay" else None)
    if not isinstance(model, str) or not model.strip():
        problems.error(span, "judge.embeddings.model is required (e.g. text-embedding-3-small)")
        return _INVALID
    return _inherit(ProviderConfig(provider, model.strip(), **_fields(raw)), tier1)


def _simulator(raw: Any, tier1: ProviderConfig, where: Position, problems: Collector) -> Any:
    """The simulated user's provider, fields left out taken from the first tier; or _INVALID (the problem recorded)."""
    span = Span(where)
    if not isinstance(raw, dict) or set(raw) - set(_TIER_KEYS):
        problems.error(span, f"judge.simulator takes {', '.join(_TIER_KEYS)} (fields left out are the judge's)")
        return _INVALID
    provider = _coerce(raw.get("provider", tier1.provider), "choice", "simulator.provider", where, problems)
    if provider == NO_JUDGE:
        problems.error(span, "judge.simulator.provider: 'none' plays no user; leave judge.simulator out to use the "
                             "judge")
        return _INVALID
    model = raw.get("model")
    if provider is _INVALID or (model is not None and (not isinstance(model, str) or not model.strip())):
        if provider is not _INVALID:
            problems.error(span, f"judge.simulator.model: expected a non-empty string, got {model!r}")
        return _INVALID
    model = model.strip() if model else ("replay" if provider == "replay" else "")
    return _inherit(ProviderConfig(provider, model, **_fields(raw)), tier1)


def _escalation(raw: Any, provider: str, where: Position, problems: Collector) -> Any:
    """The escalation section with `to` as given (fields left out are None), or _INVALID."""
    span = Span(where)
    if not isinstance(raw, dict) or set(raw) - {"band", "to"} or not isinstance(raw.get("to"), dict):
        problems.error(span, f"judge.escalation takes `band` (percent) and `to` ({{{', '.join(_TIER_KEYS)}}})")
        return _INVALID
    band = _coerce(raw.get("band", 10), "percent", "escalation.band", where, problems)
    to = raw["to"]
    unknown = set(to) - set(_TIER_KEYS)
    if unknown:
        problems.error(span, f"judge.escalation.to: unknown key {sorted(unknown)[0]!r} "
                             f"(known: {', '.join(_TIER_KEYS)})")
    tier_provider = _coerce(to.get("provider", provider), "choice", "escalation.to.provider", where, problems)
    if tier_provider == NO_JUDGE:
        problems.error(span, "judge.escalation.to.provider: 'none' turns judging off; it cannot be a second tier")
        return _INVALID
    if unknown or band is _INVALID or tier_provider is _INVALID:
        return _INVALID
    model = to.get("model")
    return EscalationConfig(band=band, to=ProviderConfig(
        provider=tier_provider, model=str(model) if model is not None else "", **_fields(to)))


def _inherit(to: ProviderConfig, tier1: ProviderConfig) -> ProviderConfig:
    """A second tier (or the embeddings model) with the fields it left out taken from tier 1, where safe."""
    # Where and how to authenticate only carry over within one provider: an OpenAI base URL or key
    # must never be sent to Anthropic because the second tier left them out. And a key goes only to
    # the endpoint it was configured for: a tier on another endpoint names its own (or the default).
    # Cloud coordinates (region, project, deployment...) carry over within one provider too, and decide the
    # endpoint, so they are inherited before it is built.
    same = to.provider == tier1.provider
    coordinates = {name: getattr(to, name) or (getattr(tier1, name) if same else None) for name in _FILE_TIER_KEYS
                   if name != "token_env"}
    tier = _with_provider_defaults(replace(to, model=to.model or tier1.model, **coordinates,
                                           base_url=to.base_url or (tier1.base_url if same and not to.region
                                                                    and not to.location else None)))
    if to.credential_env or not (same and _same_endpoint(tier.base_url, tier1.base_url)):
        return tier
    return replace(tier, api_key_env=tier1.api_key_env, token_env=tier1.token_env)


def _same_endpoint(url: str | None, other: str | None) -> bool:
    """Whether a key for `other` may go to `url`: the same origin (scheme, host, port)."""
    return url == other or (origin(url or "") or url) == (origin(other or "") or other)


def _with_provider_defaults(tier: ProviderConfig) -> ProviderConfig:
    """The tier with its endpoint (given, else built from its coordinates, else the provider's) and key variable
    (given, else the provider's, unless a token is configured instead)."""
    return replace(
        tier,
        base_url=(tier.base_url or _built_endpoint(tier) or DEFAULT_BASE_URL.get(tier.provider, "")).rstrip("/")
        or None,
        api_key_env=tier.api_key_env or (None if tier.token_env else DEFAULT_API_KEY_ENV.get(tier.provider)),
    )


def _built_endpoint(tier: ProviderConfig) -> str | None:
    """The endpoint a provider builds from its coordinates (used only once `_check_tier` accepted them)."""
    if tier.provider == "bedrock" and tier.region:
        return f"https://bedrock-runtime.{tier.region}.amazonaws.com"
    if tier.provider == "vertex" and tier.location:
        return "https://aiplatform.googleapis.com" if tier.location == "global" else \
            f"https://{tier.location}-aiplatform.googleapis.com"
    return None


def _fields(section: Mapping[str, Any]) -> dict[str, Any]:
    """The provider fields of a tier section besides provider and model, as given (None when left out)."""
    return {name: None if section.get(name) is None else _text(section[name]) for name in _TIER_KEYS[2:]}


def _text(value: Any) -> Any:
    """A scalar as written: YAML reads `api_version: 2024-10-21` as a date, which is meant as its text."""
    return value.isoformat() if isinstance(value, datetime.date) else str(value)


def _check_tier(prefix: str, tier: ProviderConfig, where: Callable[[str], Position], problems: Collector) -> bool:
    """Whether the tier's fields fit its provider: each field one it takes, those it needs given, the values that
    build its endpoint matching their patterns; every problem is recorded at `where(field)`."""
    takes, valid = PROVIDER_FIELDS[tier.provider], True
    for field in _TIER_KEYS[2:]:
        value = getattr(tier, field)
        if value is None or field in takes or (tier.provider == "replay" and field in ("base_url", "api_key_env")):
            continue  # a replayed tier ignores where the recorded one was
        users = [name for name, fields in PROVIDER_FIELDS.items() if field in fields]
        problems.error(Span(where(field)), f"{prefix}{field}: provider {tier.provider} takes no {field} "
                                           f"(it is for {', '.join(users)})")
        valid = False
    for field in REQUIRED_FIELDS.get(tier.provider, ()):
        if not getattr(tier, field):
            example = FIELD_EXAMPLES.get(field, "https://NAME.openai.azure.com")
            problems.error(Span(where("provider")), f"{prefix}{field} is required for provider {tier.provider} "
                                                    f"(e.g. {example})")
            valid = False
    for field, pattern in FIELD_PATTERNS.items():
        value = getattr(tier, field)
        if value is not None and not pattern.fullmatch(value):
            problems.error(Span(where(field)), f"{prefix}{field}: {value!r} is not a valid {field} (e.g. "
                                               f"{FIELD_EXAMPLES[field]}): it builds the endpoint the credentials "
                                               "are sent to")
            valid = False
    if tier.provider == "azure_openai" and tier.api_key_env and tier.token_env:
        problems.error(Span(where("token_env")), f"{prefix}token_env: give api_key_env or token_env, not both")
        valid = False
    return valid


# What `_coerce` returns for a value it reported as invalid.
_INVALID: Any = type("Invalid", (), {"__repr__": lambda self: "INVALID"})()


def _coerce(value: Any, kind: str, key: str, where: Position, problems: Collector) -> Any:
    """The value converted to `kind`, or _INVALID (the problem recorded)."""
    span = Span(where)
    if kind == "choice":
        if value not in PROVIDERS:
            problems.error(span, f"judge.{key}: {value!r} is not one of {', '.join(PROVIDERS)}")
            return _INVALID
        return value
    if kind == "string":
        value = _text(value) if isinstance(value, datetime.date) else value
        if not isinstance(value, str) or not value.strip():
            problems.error(span, f"judge.{key}: expected a non-empty string, got {value!r}")
            return _INVALID
        return value.strip()
    try:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError(f"expected a number, got {value!r}")
        return parse_number(str(value), **_bounds(key.split()[0], kind))
    except ValueError as exc:
        problems.error(span, f"judge.{key}: {exc}")
        return _INVALID


def _bounds(key: str, kind: str) -> dict[str, Any]:
    """What `parse_number` accepts for the numeric judge setting `key` of `kind`."""
    if kind == "percent":
        return {"whole": False, "low": 0, "high": 100}
    return {"whole": True, "low": 1 if kind == "positive" else 0, "high": _HIGHEST[key]}


def _number_flag(key: str):
    """The flag's value checked as the setting `key` is, when the flag is parsed."""
    return number_argument(**_bounds(key, _KINDS[key]))


# Beyond these a whole-number judge setting is a typo: calls in flight, one call's time (a job's 6-hour
# limit), a reply's length, a run's calls, retries of one call.
_HIGHEST = {"concurrency": 1_000, "timeout_ms": 6 * 3600 * 1000, "max_tokens": 1_000_000,
            "max_calls": 1_000_000_000, "retries": 100}


def _flag(args: argparse.Namespace, dest: str, environ: Mapping[str, str], variable: str) -> bool:
    value = getattr(args, dest, None)
    if value is not None:
        return bool(value)
    return environ.get(variable, "").strip().lower() in _TRUE


_KINDS = {"threshold": "percent", "max_calls": "count", "retries": "count", "concurrency": "positive",
          "timeout_ms": "positive", "max_tokens": "positive", "provider": "choice", "model": "string",
          "base_url": "string", "api_key_env": "string", "cache": "string",
          **{key: "string" for key in _FILE_TIER_KEYS}}


def _read_config_sections(path: Path, root: Path, problems: Collector) -> Sections:
    """The valid settings of the `judge` mapping of a config file and the position of each, and its
    `pricing`; every problem found is recorded in `problems`."""
    display = _display(path, root)
    try:
        real = files.resolve_found(path, root, shown=display)  # inside the repository, as every file
        text = files.read_bytes(real, MAX_FILE_BYTES, shown=display, what="config files").decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.error(Span(Position(display)), f"cannot read config: {getattr(exc, 'strerror', None) or exc}")
        return {}, {}, {}
    return _config_sections(display, text, problems)


def _config_sections(display: str, text: str, problems: Collector) -> Sections:
    """The valid settings of the `judge` mapping of a config file's text and the position of each, and its
    `pricing`."""
    problems.add_source(display, text)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = Position(display, mark.line + 1, mark.column + 1) if mark else Position(display)
        problems.error(Span(where), f"cannot read config: {getattr(exc, 'problem', None) or exc}")
        return {}, {}, {}
    if node is None:
        return {}, {}, {}
    if not isinstance(node, yaml.MappingNode):
        problems.error(_span(display, node), "the config file must be a mapping with a `judge` section")
        return {}, {}, {}
    judge_node = pricing_node = None
    for key, value in node.value:
        if key.value == "judge":
            judge_node = value
        elif key.value == "pricing":
            pricing_node = value
        else:
            problems.error(_span(display, key), f"unknown config section {key.value!r} (known: judge, pricing)"
                                                f"{did_you_mean(str(key.value), ['judge', 'pricing'])}")
    pricing = _pricing(display, pricing_node, problems) if pricing_node is not None else {}
    if judge_node is None or (isinstance(judge_node, yaml.ScalarNode) and judge_node.value in ("", "null", "~")):
        return {}, {}, pricing
    if not isinstance(judge_node, yaml.MappingNode):
        problems.error(_span(display, judge_node), "`judge` must be a mapping")
        return {}, {}, pricing
    data, positions = {}, {}
    for key, value in judge_node.value:
        name = key.value
        if name not in _FILE_KEYS:
            problems.error(_span(display, key), f"unknown judge setting {name!r}{did_you_mean(str(name), _FILE_KEYS)} "
                                                f"(known: {', '.join(sorted(_FILE_KEYS))})")
            continue
        where = _pos(display, value)
        plain = yaml.safe_load(yaml.serialize(value))
        if name not in _KINDS:  # a section (escalation): checked by its own function, with this position
            data[name], positions[name] = plain, where
            continue
        coerced = _coerce(plain, _KINDS[name], name, where, problems)
        if coerced is not _INVALID:
            data[name], positions[name] = coerced, where
        elif name == "provider":
            positions[name] = where  # given, but invalid: reported once, not again as "missing"
    return data, positions, pricing


def _pricing(display: str, node: yaml.Node, problems: Collector) -> dict[str, Price]:
    """`pricing: {MODEL: {input_per_mtok, output_per_mtok}}`: USD per million tokens, each price checked."""
    if not isinstance(node, yaml.MappingNode):
        problems.error(_span(display, node), "`pricing` must be a mapping of model names to "
                                             "{input_per_mtok, output_per_mtok}")
        return {}
    prices = {}
    for key, value in node.value:
        model = key.value
        if not isinstance(key, yaml.ScalarNode) or not str(model).strip():
            problems.error(_span(display, key), "a `pricing` key must be a model name (or the start of one)")
            continue
        if not isinstance(value, yaml.MappingNode):
            problems.error(_span(display, value), f"pricing.{model} must be {{input_per_mtok, output_per_mtok}}")
            continue
        rates, given = {}, set()
        for rate_key, rate in value.value:
            name = rate_key.value
            if name not in PRICE_KEYS:
                problems.error(_span(display, rate_key), f"unknown pricing setting {name!r}"
                                                         f"{did_you_mean(str(name), PRICE_KEYS)} (known: "
                                                         f"{', '.join(PRICE_KEYS)}, USD per million tokens)")
                continue
            given.add(name)
            plain = yaml.safe_load(yaml.serialize(rate))
            try:
                if isinstance(plain, bool) or not isinstance(plain, int | float):
                    raise ValueError(f"expected a number of USD per million tokens, got {plain!r}")
                rates[name] = parse_number(str(plain), whole=False, low=0, high=1e6)
            except ValueError as exc:
                problems.error(_span(display, rate), f"pricing.{model}.{name}: {exc}")
        if missing := [name for name in PRICE_KEYS if name not in given]:
            problems.error(_span(display, key), f"pricing.{model} needs {' and '.join(missing)} "
                                                "(USD per million tokens)")
        elif len(rates) == len(PRICE_KEYS):
            prices[str(model)] = Price(**rates)
    return prices


def _span(display: str, node: yaml.Node) -> Span:
    return Span(_pos(display, node), max(0, node.end_mark.index - node.start_mark.index))


def _pos(display: str, node: yaml.Node) -> Position:
    return Position(display, node.start_mark.line + 1, node.start_mark.column + 1)


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)



