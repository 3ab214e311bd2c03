"""Run configuration: `litmus.yaml` at the repository root, `LITMUS_*` environment variables, flags.

Precedence, highest first: a command-line flag, then its `LITMUS_*` variable, then the project file
(`--config PATH`, else `litmus.yaml` at the root), then the built-in default. Today the file holds
one section, `judge` (see PROBE-FORMAT.md, "Run configuration and judges"); an unknown key is an
error with its file:line:column, so a typo never silently turns a judge off.

API keys are never configuration: `api_key_env` names the environment variable holding the key.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from litmus.errors import Diagnostic, Position, ProbeError

PROVIDERS = ("openai", "anthropic", "replay")
# For `similar`: an OpenAI-compatible /embeddings endpoint, or recorded embeddings only.
EMBEDDING_PROVIDERS = ("openai", "replay")
DEFAULT_BASE_URL = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
DEFAULT_API_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
DEFAULT_CACHE_DIR = ".litmus/cache"
CONFIG_FILE = "litmus.yaml"


@dataclass(frozen=True)
class ProviderConfig:
    """One judge tier: which API, which model, and where its key lives."""

    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"


@dataclass(frozen=True)
class EscalationConfig:
    # Escalate when |score - threshold| <= band, or when the verdict was unparseable.
    band: float
    # Fully resolved: fields left out in the file are already inherited from the first tier.
    to: ProviderConfig


@dataclass(frozen=True)
class JudgeConfig:
    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    threshold: float = 75
    concurrency: int = 8
    max_calls: int = 1000
    cache: Path = Path(DEFAULT_CACHE_DIR)
    escalation: EscalationConfig | None = None
    # The embeddings model of `similar`; None: not configured (a `similar` check is then an error).
    embeddings: ProviderConfig | None = None
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
        return ProviderConfig(self.provider, self.model, self.base_url, self.api_key_env)


@dataclass(frozen=True)
class RunConfig:
    # The file read, or None when there was none.
    path: Path | None = None
    # None: no judge configured (LLM-based assertions are skipped, Intent Evaluation is deterministic).
    judge: JudgeConfig | None = None


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
_FILE_KEYS = {key for key, *_ in _OVERRIDES} | {"escalation", "embeddings", "retries", "max_tokens"}
_TIER_KEYS = ("provider", "model", "base_url", "api_key_env")
_TRUE = ("1", "true", "yes", "on")


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "configuration and judge",
        "Flags override LITMUS_* environment variables, which override litmus.yaml at the repository root. "
        "API keys are read from the environment variable named by --judge-api-key-env, never from a file.",
    )
    group.add_argument("--config", metavar="PATH", help="project config file (default: litmus.yaml at the repository "
                       "root, if present) [LITMUS_CONFIG]")
    group.add_argument("--judge-provider", choices=PROVIDERS, help="openai (any OpenAI-compatible chat-completions "
                       "API), anthropic (Messages API) or replay (recorded verdicts only) [LITMUS_JUDGE_PROVIDER]")
    group.add_argument("--judge-model", metavar="NAME", help="judge model, e.g. gpt-4o-mini [LITMUS_JUDGE_MODEL]")
    group.add_argument("--judge-base-url", metavar="URL", help="API base URL, e.g. http://localhost:11434/v1 "
                       "[LITMUS_JUDGE_BASE_URL]")
    group.add_argument("--judge-api-key-env", metavar="VAR", help="NAME of the environment variable holding the API "
                       "key (default OPENAI_API_KEY / ANTHROPIC_API_KEY) [LITMUS_JUDGE_API_KEY_ENV]")
    group.add_argument("--judge-threshold", metavar="PERCENT", help="default pass threshold of LLM-based assertions "
                       "(default 75) [LITMUS_JUDGE_THRESHOLD]")
    group.add_argument("--judge-concurrency", metavar="N", help="judge calls in flight at once (default 8) "
                       "[LITMUS_JUDGE_CONCURRENCY]")
    group.add_argument("--judge-max-calls", metavar="N", help="budget: past N judge calls, LLM-based assertions are "
                       "skipped (default 1000) [LITMUS_JUDGE_MAX_CALLS]")
    group.add_argument("--judge-timeout-ms", metavar="MS", help="timeout of one judge call (default 60000) "
                       "[LITMUS_JUDGE_TIMEOUT_MS]")
    group.add_argument("--cache-dir", metavar="DIR", help=f"verdict cache and cassette directory (default "
                       f"{DEFAULT_CACHE_DIR}) [LITMUS_CACHE_DIR]")
    group.add_argument("--no-cache", action="store_true", default=None, help="neither read nor write cached "
                       "verdicts: every judge call goes to the provider [LITMUS_NO_CACHE=1]")
    group.add_argument("--record", action="store_true", default=None, help="also write a cassette per verdict, "
                       "for `--judge-provider replay` (e.g. offline demos, CI without keys) [LITMUS_RECORD=1]")


def resolve_config(args: argparse.Namespace, environ: Mapping[str, str], root: Path) -> RunConfig:
    """The run configuration from flags, environment and project file; ProbeError on bad input."""
    given = getattr(args, "config", None) or environ.get("LITMUS_CONFIG")
    path = (root / given) if given else root / CONFIG_FILE
    if given and not path.is_file():
        raise _error(f"config file {given} not found", Position(str(given)))
    section, positions = ({}, {})
    if path.is_file():
        section, positions = _read_judge_section(path, root)
    else:
        path = None
    display = _display(path, root) if path else "<flags>"

    values: dict[str, Any] = {k: v for k, v in section.items() if k in _FILE_KEYS}
    sources: dict[str, Position] = {k: positions[k] for k in values}
    for key, dest, variable, kind in _OVERRIDES:
        flag = getattr(args, dest, None)
        if flag is not None:
            values[key], sources[key] = _coerce(flag, kind, f"{key} (--{dest.replace('_', '-')})",
                                                Position("<command line>"))
        elif environ.get(variable):
            values[key], sources[key] = _coerce(environ[variable], kind, f"{key} ({variable})",
                                                Position("<environment>"))
    use_cache = not _flag(args, "no_cache", environ, "LITMUS_NO_CACHE")
    record = _flag(args, "record", environ, "LITMUS_RECORD")
    if not values:
        return RunConfig(path=path, judge=None)
    return RunConfig(path=path, judge=_judge(values, sources, display, root, use_cache, record))


def _judge(values: dict, sources: dict, display: str, root: Path, use_cache: bool, record: bool) -> JudgeConfig:
    where = sources.get("provider", Position(display))
    provider = values.get("provider")
    if provider is None:
        raise _error("judge.provider is required when any judge setting is given "
                     f"(one of {', '.join(PROVIDERS)})", where)
    model = values.get("model") or ("replay" if provider == "replay" else None)
    if model is None:
        raise _error(f"judge.model is required for provider {provider} (pin the judge model)", where)
    tier1 = _with_provider_defaults(ProviderConfig(provider, model, values.get("base_url"), values.get("api_key_env")))
    cache = Path(values.get("cache", DEFAULT_CACHE_DIR))
    config = JudgeConfig(
        provider=tier1.provider, model=tier1.model, base_url=tier1.base_url, api_key_env=tier1.api_key_env,
        cache=cache if cache.is_absolute() else root / cache, use_cache=use_cache, record=record,
        **{k: values[k] for k in ("threshold", "concurrency", "max_calls", "timeout_ms", "retries", "max_tokens")
           if k in values},
    )
    if "escalation" in values:
        config = replace(config, escalation=_escalation(values["escalation"], tier1, sources["escalation"]))
    if "embeddings" in values:
        config = replace(config, embeddings=_embeddings(values["embeddings"], tier1, sources["embeddings"]))
    elif tier1.provider == "replay":
        # A replayed run replays embeddings too: the cassettes hold both.
        config = replace(config, embeddings=ProviderConfig("replay", "recorded"))
    return config


def _embeddings(raw: Any, tier1: ProviderConfig, where: Position) -> ProviderConfig:
    if not isinstance(raw, dict) or set(raw) - set(_TIER_KEYS):
        raise _error("judge.embeddings takes provider (openai or replay), model, base_url and api_key_env", where)
    provider = raw.get("provider", "openai")
    if provider not in EMBEDDING_PROVIDERS:
        raise _error(f"judge.embeddings.provider: {provider!r} is not one of {', '.join(EMBEDDING_PROVIDERS)}", where)
    model = raw.get("model") or ("recorded" if provider == "replay" else None)
    if not isinstance(model, str) or not model.strip():
        raise _error("judge.embeddings.model is required (e.g. text-embedding-3-small)", where)
    # Like escalation: the judge's endpoint and key carry over only within the same provider.
    same = provider == tier1.provider
    return _with_provider_defaults(ProviderConfig(
        provider=provider, model=model.strip(),
        base_url=raw.get("base_url", tier1.base_url if same else None),
        api_key_env=raw.get("api_key_env", tier1.api_key_env if same else None),
    ))


def _escalation(raw: Any, tier1: ProviderConfig, where: Position) -> EscalationConfig:
    if not isinstance(raw, dict) or set(raw) - {"band", "to"} or not isinstance(raw.get("to"), dict):
        raise _error("judge.escalation takes `band` (percent) and `to` ({provider, model, base_url, api_key_env})",
                     where)
    band, _ = _coerce(raw.get("band", 10), "percent", "escalation.band", where)
    to = raw["to"]
    unknown = set(to) - set(_TIER_KEYS)
    if unknown:
        raise _error(f"judge.escalation.to: unknown key {sorted(unknown)[0]!r} (known: {', '.join(_TIER_KEYS)})", where)
    provider = _coerce(to.get("provider", tier1.provider), "choice", "escalation.to.provider", where)[0]
    # Where and how to authenticate only carry over within one provider: an OpenAI base URL or key
    # must never be sent to Anthropic because the second tier left them out.
    same = provider == tier1.provider
    tier2 = ProviderConfig(
        provider=provider,
        model=str(to.get("model", tier1.model)),
        base_url=to.get("base_url", tier1.base_url if same else None),
        api_key_env=to.get("api_key_env", tier1.api_key_env if same else None),
    )
    return EscalationConfig(band=band, to=_with_provider_defaults(tier2))


def _with_provider_defaults(tier: ProviderConfig) -> ProviderConfig:
    return replace(
        tier,
        base_url=(tier.base_url or DEFAULT_BASE_URL.get(tier.provider, "")).rstrip("/") or None,
        api_key_env=tier.api_key_env or DEFAULT_API_KEY_ENV.get(tier.provider),
    )


def _coerce(value: Any, kind: str, key: str, where: Position) -> tuple[Any, Position]:
    if kind == "choice":
        if value not in PROVIDERS:
            raise _error(f"judge.{key}: {value!r} is not one of {', '.join(PROVIDERS)}", where)
        return value, where
    if kind == "string":
        if not isinstance(value, str) or not value.strip():
            raise _error(f"judge.{key}: expected a non-empty string, got {value!r}", where)
        return value.strip(), where
    try:
        number = float(value) if kind == "percent" else int(str(value))
    except (TypeError, ValueError):
        number = None
    if number is None or isinstance(value, bool) or not _in_range(number, kind):
        expected = {"percent": "a number from 0 to 100", "positive": "a whole number >= 1",
                    "count": "a whole number >= 0"}[kind]
        raise _error(f"judge.{key}: expected {expected}, got {value!r}", where)
    return number, where


def _in_range(number: float, kind: str) -> bool:
    return {"percent": 0 <= number <= 100, "positive": number >= 1, "count": number >= 0}[kind]


def _flag(args: argparse.Namespace, dest: str, environ: Mapping[str, str], variable: str) -> bool:
    value = getattr(args, dest, None)
    if value is not None:
        return bool(value)
    return environ.get(variable, "").strip().lower() in _TRUE


def _read_judge_section(path: Path, root: Path) -> tuple[dict[str, Any], dict[str, Position]]:
    """The `judge` mapping of a config file and the position of each of its keys' values."""
    display = _display(path, root)
    try:
        node = yaml.compose(path.read_text("utf-8"), Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = Position(display, mark.line + 1, mark.column + 1) if mark else Position(display)
        raise _error(f"cannot read config: {getattr(exc, 'problem', None) or exc}", where) from None
    if node is None:
        return {}, {}
    if not isinstance(node, yaml.MappingNode):
        raise _error("the config file must be a mapping with a `judge` section", _pos(display, node))
    judge_node = None
    for key, value in node.value:
        if key.value != "judge":
            raise _error(f"unknown config section {key.value!r} (known: judge)", _pos(display, key))
        judge_node = value
    if judge_node is None or (isinstance(judge_node, yaml.ScalarNode) and judge_node.value in ("", "null", "~")):
        return {}, {}
    if not isinstance(judge_node, yaml.MappingNode):
        raise _error("`judge` must be a mapping", _pos(display, judge_node))
    data = yaml.safe_load(path.read_text("utf-8"))["judge"]
    positions = {}
    for key, value in judge_node.value:
        if key.value not in _FILE_KEYS:
            raise _error(f"unknown judge setting {key.value!r} (known: {', '.join(sorted(_FILE_KEYS))})",
                         _pos(display, key))
        positions[key.value] = _pos(display, value)
    for key in ("threshold", "concurrency", "max_calls", "timeout_ms", "retries", "max_tokens"):
        if key in data:
            kind = {"threshold": "percent", "max_calls": "count", "retries": "count"}.get(key, "positive")
            data[key] = _coerce(data[key], kind, key, positions[key])[0]
    for key in ("provider", "model", "base_url", "api_key_env", "cache"):
        if key in data:
            data[key] = _coerce(data[key], "choice" if key == "provider" else "string", key, positions[key])[0]
    return data, positions


def _pos(display: str, node: yaml.Node) -> Position:
    return Position(display, node.start_mark.line + 1, node.start_mark.column + 1)


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _error(message: str, where: Position) -> ProbeError:
    return ProbeError([Diagnostic("error", message, where)])

