"""The judge service of one run: providers per tier, verdict cache, cassettes, budget, totals.

The runner submits LLM-based assertions to `executor` (a pool of `concurrency` threads), so judge
calls overlap with other flow runs' HTTP work; everything here is thread-safe. One judgement:
for each tier, a cached verdict if there is one, else a provider call (counted against
`max_calls`); escalation decides which tiers run (`litmus.judges.escalation`). A tier that could
not be reached in UNREACHABLE_AFTER calls in a row (each already retried) is not called again in
this run: its remaining judgements are `error` with the same one-line reason.

Nothing the checkout holds decides a verdict on its own: cache entries git tracks are never read
(any mode), and a run that does not trust the checkout (`Trust`) replays no cassette the pull
request changed (`needs_review`, saying why).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from litmus.assertions._common import bounded, not_judged, show
from litmus.assertions.base import BudgetExhausted
from litmus.config import JudgeConfig, ProviderConfig
from litmus.decisions import DecisionBook, content_sha256, decide_outcome
from litmus.identity import INTENT, finding_key, fingerprint
from litmus.judges import assertion as judged_assertion
from litmus.judges import intent as intent_eval
from litmus.judges.cache import (
    DistrustedRecording,
    Recordings,
    cassette_key,
    cassette_store,
    embedding_cassette_key,
    embedding_cassettes,
    embedding_key,
    embedding_store,
    simulator_cassette_key,
    simulator_key,
    simulator_store,
    verdict_key,
    verdict_store,
)
from litmus.judges.embeddings import EMBEDDING_CLASSES, Embedding, HTTPEmbeddings, ReplayEmbeddings, cosine
from litmus.judges.escalation import Decision, TierResult, budget_blocked, decide, should_escalate
from litmus.judges.prompts import SCENARIO_TYPES, Prompt, intent_prompt, simulator_prompt
from litmus.judges.providers import (
    PROVIDER_CLASSES,
    Completion,
    HTTPProvider,
    HTTPTransport,
    JudgeConfigError,
    ProviderError,
)
from litmus.judges.simulator import NoCassette, SimulatedTurn, SimulatorError, parse_turn
from litmus.judges.verdict import VerdictError, parse_verdict
from litmus.load import repo_root
from litmus.results import AssertionOutcome, IntentEvaluation, JudgeRecord, JudgeTier, JudgeTotals, Mismatch
from litmus.run.flow import deterministic_intent
from litmus.run.redact import Redactor
from litmus.text import count
from litmus.trust import Trust

if TYPE_CHECKING:
    from litmus.assertions.base import EvalContext
    from litmus.model import Assertion, Scenario, Suite
    from litmus.results import FlowRunResult


# `similar`'s default threshold: the cosine similarity of two texts that say the same thing.
DEFAULT_SIMILARITY = 0.8
# Calls in a row that found the judge unreachable (after their own retries) before it is given up.
UNREACHABLE_AFTER = 2


class MissingCassette(ProviderError):
    """Replay: no recording for this prompt; the message names its key."""


class ReplayProvider:
    """Recorded replies only: the cassette under `key(prompt)`, or MissingCassette naming the key;
    DistrustedRecording for a cassette `recordings` refuses. `role` says whose recording it is (a judge
    tier, the simulated user)."""

    parameters: dict = {}

    def __init__(self, tier: ProviderConfig, config: JudgeConfig, recordings: Recordings,
                 key: Callable[[Prompt], str], role: str):
        self.name, self.model = tier.provider, tier.model
        self._store = cassette_store(config.cache)
        self._key = key
        self._role = role
        self._recordings = recordings

    def complete(self, prompt: Prompt) -> Completion:
        key = self._key(prompt)
        entry = self._store.get(key)
        if entry is None:
            raise MissingCassette(
                f"replay: no cassette {key} ({self._role}, prompt {prompt.version}: {prompt.summary}) in "
                f"{self._store.directory}; record one with --record and a live judge"
            )
        refusal = self._recordings.refusal(self._store.path(key))
        if refusal:
            raise DistrustedRecording(refusal)
        usage = entry.get("usage") or {}
        return Completion(entry["reply"], int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0)))

    def close(self) -> None:
        pass


class JudgeService:
    def __init__(self, config: JudgeConfig, tiers: list[HTTPProvider | ReplayProvider],
                 simulator: HTTPProvider | ReplayProvider, secrets: Mapping[str, str] | None = None,
                 embedder: HTTPEmbeddings | ReplayEmbeddings | None = None,
                 decisions: DecisionBook | None = None):
        self.config = config
        # The simulated user of `simulate:` steps (`judge.simulator`, else the first tier's model).
        self.simulator = simulator
        # Human decisions, asked before any judge: a match is the verdict, and no judge is called.
        self.decisions = decisions or DecisionBook(())
        self.tiers = tiers
        self.embedder = embedder
        # The cache entries git tracks are left out (module docstring); only a cache in use is listed.
        root = repo_root(config.cache) if config.use_cache else None
        self._embeddings = embedding_store(config.cache, root)
        self._embedding_cassettes = embedding_cassettes(config.cache)
        self.executor = ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="litmus-judge")
        self._verdicts = verdict_store(config.cache, root)
        self._simulations = simulator_store(config.cache, root)
        self._cassettes = cassette_store(config.cache)
        self._secrets = dict(secrets or {})
        self._redactor = Redactor()
        for name, value in self._secrets.items():
            self._redactor.register(value, name=name)
        self._lock = threading.Lock()
        # The redactors besides this service's own that mask each credential a client obtains later (the runs'), and
        # the credentials obtained so far (a token issued in the baseline run is still used in the next).
        self._masks: list[Redactor] = []
        self._issued: list[str] = []
        for client in {id(client): client for client in (*tiers, simulator, embedder)}.values():
            if isinstance(client, HTTPTransport):
                client.on_credential = self._mask_credential
        # Held for every cache or cassette write, and forever once the service is abandoned: a call
        # that returns after that writes nothing, so an exit right then cannot leave a partial file.
        self._store_lock = threading.Lock()
        self._totals = JudgeTotals()
        self._calls_by_model: dict[str, tuple[int, int, int]] = {}
        # Why the verdict cache was not used, when the trust policy turned it off.
        self.cache_note: str | None = None
        self._first_start: float | None = None
        self._last_end: float | None = None
        # Per tier: calls in a row that could not reach it, and the reason once it is given up.
        self._unreachable_calls = [0] * len(tiers)
        self._given_up: list[str | None] = [None] * len(tiers)

    @classmethod
    def from_config(cls, config: JudgeConfig | None, environ: Mapping[str, str] = os.environ,
                    trust: Trust | None = None, decisions: DecisionBook | None = None) -> JudgeService | None:
        """The service for `config` (None when no judge is configured); JudgeConfigError when a tier's
        API key variable is not set. `trust` (default: a local run's) decides which cassettes may be replayed;
        `decisions` are the human decisions that count in this run (the caller decided which files count)."""
        if config is None:
            return None
        trust = trust or Trust.local()
        distrusted_cache = config.use_cache and not trust.runs_pr_code
        if distrusted_cache:
            # A restored cache may hold what the pull request's own jobs wrote: an untrusted run neither reads
            # nor feeds it, so every verdict comes from the judge.
            config = dataclasses.replace(config, use_cache=False)
        root = repo_root(config.cache)
        recordings = Recordings(root if (root / ".git").exists() else None, trust)
        chain = [config.tier1] + ([config.escalation.to] if config.escalation else [])
        tiers: list[HTTPProvider | ReplayProvider] = []
        secrets: dict[str, str] = {}

        def api_key(tier: ProviderConfig, section: str, what: str) -> str | None:
            """The tier's API key or token, from the variable it names; None: the provider reads its own."""
            name = tier.credential_env
            if name is None:
                return None
            key = environ.get(name)
            if not key:
                field = "api_key_env" if tier.api_key_env else "token_env"
                kind = "an API key" if tier.api_key_env else "an access token"
                raise JudgeConfigError(f"the {tier.provider} {what} needs {kind} in the environment variable {name} "
                                       f"({section}{field}), which is not set")
            secrets[name] = key
            return key

        def masked(client):
            secrets.update(getattr(client, "credential_values", {}))  # what a provider read itself (Bedrock's AWS)
            return client

        def provider(tier: ProviderConfig, section: str, what: str, role: str,
                     recorded: Callable[[Prompt], str]) -> HTTPProvider | ReplayProvider:
            if tier.provider == "replay":
                return ReplayProvider(tier, config, recordings, recorded, role)
            return masked(PROVIDER_CLASSES[tier.provider](
                tier, api_key(tier, section, what), timeout_ms=config.timeout_ms, retries=config.retries,
                max_tokens=config.max_tokens, pool_size=config.concurrency, environ=environ,
            ))

        for number, tier in enumerate(chain, start=1):
            section = "judge." if number == 1 else "judge.escalation.to."
            recorded = functools.partial(cassette_key, tier=number)
            tiers.append(provider(tier, section, "judge", f"tier {number}", recorded))
        simulator = provider(config.simulator or config.tier1, "judge.simulator." if config.simulator else "judge.",
                             "simulated user", "simulated user", simulator_cassette_key)
        embedder = None
        if config.embeddings is not None and config.embeddings.provider == "replay":
            embedder = ReplayEmbeddings(config.cache, recordings)
        elif config.embeddings is not None:
            embedder = masked(EMBEDDING_CLASSES[config.embeddings.provider](
                config.embeddings, api_key(config.embeddings, "judge.embeddings.", "embeddings model"),
                timeout_ms=config.timeout_ms, retries=config.retries, pool_size=config.concurrency, environ=environ,
            ))
        service = cls(config, tiers, simulator, secrets, embedder, decisions)
        if distrusted_cache:
            service.cache_note = (f"the verdict cache {config.cache} is not used in an untrusted run (it may hold "
                                  "what the pull request wrote): every judged check is judged afresh")
        return service

    # ---- the two kinds of evaluation

    def evaluate_assertion(self, assertion: Assertion, ctx: EvalContext) -> AssertionOutcome:
        threshold = judged_assertion.threshold_for(assertion, ctx, self.config.threshold)
        # Kept also when there is no reference to judge against: accepting it is how a scenario gets its first.
        reply = judged_assertion.judged_reply(assertion, ctx)
        try:
            prompt, where, content = judged_assertion.build_prompt(assertion, ctx)
        except judged_assertion.NotJudgeable as exc:
            return judged_assertion.outcome(assertion, "error", str(exc), threshold=threshold, reply=reply, mismatches=[
                Mismatch(assertion.select or "$", "a judgeable response", None, str(exc))])
        human = self.decisions.lookup(ctx.finding_id(assertion), content)
        if human is not None:
            return judged_assertion.human_outcome(assertion, human, threshold, where, reply)
        try:
            decision = self.judge(prompt, threshold)
        except BudgetExhausted:
            return _hashed(not_judged(assertion, "budget", max_calls=self.config.max_calls, threshold=threshold),
                           content)
        return _hashed(judged_assertion.decision_outcome(assertion, decision, threshold, where, reply), content)

    def evaluate_transcript(self, assertion: Assertion, transcript: list[dict], ctx: EvalContext) -> AssertionOutcome:
        """An LLM-based assertion judged on a conversation (`conversation_assertions`): the judged text is the
        transcript (`[{role, content}]`, unmasked: the content hash is over it), mismatches name `turns[N]`."""
        threshold = judged_assertion.threshold_for(assertion, ctx, self.config.threshold)
        if assertion.type in SCENARIO_TYPES and ctx.scenario is None:
            return not_judged(assertion, "no_scenario", threshold=threshold)
        try:
            prompt, where, content = judged_assertion.build_transcript_prompt(assertion, transcript, ctx)
        except judged_assertion.NotJudgeable as exc:
            return judged_assertion.outcome(assertion, "error", str(exc), threshold=threshold, mismatches=[
                Mismatch("$", "a judgeable conversation", None, str(exc))])
        human = self.decisions.lookup(ctx.finding_id(assertion), content)
        if human is not None:
            return judged_assertion.human_outcome(assertion, human, threshold, where)
        try:
            decision = self.judge(prompt, threshold)
        except BudgetExhausted:
            return _hashed(not_judged(assertion, "budget", max_calls=self.config.max_calls, threshold=threshold),
                           content)
        return _hashed(judged_assertion.decision_outcome(assertion, decision, threshold, where,
                                                         place=judged_assertion.turn_placer(transcript)), content)

    def simulate_turn(self, persona: str, goal: str, transcript: list[dict], *, turn: int) -> SimulatedTurn:
        """The simulated user's message of `turn` after `transcript` (masked, as results.json has it): from the
        cache, a cassette (replay) or a call counted against `max_calls`. BudgetExhausted past the budget;
        NoCassette in replay when the transcript so far has no recording; SimulatorError when no turn came."""
        provider = self.simulator
        live = not isinstance(provider, ReplayProvider)
        masked = [{**message, "content": self._redact(judged_assertion.rendered_text(message.get("content", "")))}
                  for message in transcript]
        prompt = simulator_prompt(self._redact(persona), self._redact(goal), masked, turn)
        key = simulator_key(provider.name, provider.model, provider.parameters, prompt)
        entry = self._simulations.get(key, provider.name, provider.model) if live and self.config.use_cache else None
        started = time.monotonic()
        try:
            if entry is not None:
                completion = Completion(entry["reply"])
            else:
                if live:
                    self._reserve_call()
                completion = provider.complete(prompt)
        except MissingCassette as exc:
            raise NoCassette(turn, str(exc)) from None
        except DistrustedRecording as exc:
            raise SimulatorError(f"turn {turn}: {exc}") from None
        except ProviderError as exc:
            raise SimulatorError(f"turn {turn}: simulated user unavailable: {self._redact(str(exc))}") from None
        finally:
            self._clock(started)
        latency, cached = _ms(started), entry is not None or not live
        with self._lock:
            self._totals.cached += cached
            self._totals.input_tokens += 0 if cached else completion.input_tokens
            self._totals.output_tokens += 0 if cached else completion.output_tokens
            if not cached:
                self._count_call(provider.model, completion.input_tokens, completion.output_tokens)
        if entry is None and live and self.config.use_cache:
            self._store(self._simulations, key, prompt, provider, completion, latency, None)
        if entry is None and live and self.config.record:
            self._store(self._cassettes, simulator_cassette_key(prompt), prompt, provider, completion, latency, None)
        return parse_turn(completion.text)

    def evaluate_similarity(self, assertion: Assertion, ctx: EvalContext) -> AssertionOutcome:
        """`similar`: cosine similarity of the reference's and the response's embeddings vs `threshold`."""
        threshold = float(assertion.params.get("threshold", DEFAULT_SIMILARITY))

        def error(reason: str, path: str = "$") -> AssertionOutcome:
            return judged_assertion.outcome(assertion, "error", reason, threshold=threshold, mismatches=[
                Mismatch(path, "an embedding of each text", None, reason)])

        if self.embedder is None:
            return error("no embeddings model configured: set judge.embeddings (provider: openai, model: ...) in "
                         "litmus.yaml")
        try:
            text, where = judged_assertion.judged_text(assertion.select, ctx)
        except judged_assertion.NotJudgeable as exc:
            return error(str(exc), assertion.select or "$")
        rendered = judged_assertion.rendered_text(ctx.render(assertion.params["value"]))
        content = content_sha256(assertion.type, {"value": rendered}, text)
        human = self.decisions.lookup(ctx.finding_id(assertion), content)
        if human is not None:
            return judged_assertion.human_outcome(assertion, human, threshold, where)
        reference = self._redact(ctx.redact(rendered))
        text = self._redact(ctx.redact(text))
        if not text.strip():
            reason = "the response text is empty: nothing to compare with the reference"
            return judged_assertion.outcome(assertion, "failed", reason, score=0.0, threshold=threshold, mismatches=[
                Mismatch(where, reference, "", reason)])
        started = time.monotonic()
        try:
            (ref, ref_cached), (got, got_cached) = self._embed(reference), self._embed(text)
            similarity = round(cosine(ref.vector, got.vector), 4)
        except BudgetExhausted:
            return not_judged(assertion, "budget", max_calls=self.config.max_calls, threshold=threshold)
        except DistrustedRecording as exc:
            return judged_assertion.outcome(assertion, "needs_review", f"needs review: {exc}", threshold=threshold,
                                            content_sha256=content)
        except ProviderError as exc:
            return error(f"embeddings unavailable: {self._redact(str(exc))}")
        except ValueError as exc:
            return error(f"cannot compare the embeddings: {exc}")
        passed = similarity >= threshold
        verdict = f"cosine similarity {similarity:g} {'>=' if passed else '<'} {threshold:g}"
        tier = JudgeTier(self.embedder.name, self.embedder.model, similarity, verdict, _ms(started),
                         input_tokens=0 if ref_cached and got_cached else ref.input_tokens + got.input_tokens,
                         cached=ref_cached and got_cached)
        reason = f"{verdict} ({self.embedder.name}:{self.embedder.model}) to the reference {show(reference)}"
        mismatches = [] if passed else [Mismatch(where, reference, bounded(text), verdict)]
        return judged_assertion.outcome(assertion, "passed" if passed else "failed", reason, score=similarity,
                                        threshold=threshold, mismatches=mismatches,
                                        judge=JudgeRecord(escalated=False, tiers=[tier]), content_sha256=content)

    def _embed(self, text: str) -> tuple[Embedding, bool]:
        """The text's embedding and whether it came from the cache or a cassette (no call made)."""
        embedder = self.embedder
        live = not isinstance(embedder, ReplayEmbeddings)
        key = embedding_key(embedder.name, embedder.model, text)
        vector = self._embeddings.get(key) if live and self.config.use_cache else None
        if vector is not None:
            embedding, cached = Embedding(vector), True
        else:
            if live:
                self._reserve_call()
            started = time.monotonic()
            embedding, cached = embedder.embed(text), not live
            latency = _ms(started)
            # No write once the service is abandoned (see close); a failed write keeps the embedding.
            with self._store_lock, contextlib.suppress(OSError):
                if live and self.config.use_cache:
                    self._embeddings.put(key, text=text, provider=embedder.name, model=embedder.model,
                                         vector=embedding.vector, input_tokens=embedding.input_tokens,
                                         latency_ms=latency)
                if live and self.config.record:
                    self._embedding_cassettes.put(embedding_cassette_key(text), text=text, provider=embedder.name,
                                                  model=embedder.model, vector=embedding.vector,
                                                  input_tokens=embedding.input_tokens, latency_ms=latency)
        with self._lock:
            self._totals.cached += cached
            self._totals.input_tokens += 0 if cached else embedding.input_tokens
            if not cached:
                self._count_call(embedder.model, embedding.input_tokens, 0)
        return embedding, cached

    def evaluate_intent(self, suite: Suite, flow_run: FlowRunResult, scenario: Scenario | None,
                        unmasked: FlowRunResult | None = None) -> IntentEvaluation:
        """The flow run's Intent Evaluation; `flow_run` is the masked copy the judge reads, `unmasked` (default:
        the same) what the content hash is computed over."""
        if not suite.intent:
            return deterministic_intent(flow_run)
        threshold = float(suite.judge.threshold) if suite.judge and suite.judge.threshold is not None \
            else self.config.threshold
        content = content_sha256("intent", {"intent": suite.intent}, intent_eval.transcript(unmasked or flow_run),
                                 judged_assertion.scenario_facts(scenario))
        finding = fingerprint(finding_key(suite.name, flow_run.flow, flow_run.scenario, "", INTENT))
        human = self.decisions.lookup(finding, content)
        if human is not None:
            evaluation = IntentEvaluation(status="needs_review", method="judge", reason="", threshold=threshold)
            decide_outcome(evaluation, human)
            return evaluation
        data = json.dumps(scenario.data, indent=2, ensure_ascii=False, default=str) if scenario else None
        prompt = intent_prompt(self._redact(suite.intent), intent_eval.transcript(flow_run),
                               self._redact(data) if data is not None else None)
        try:
            decision = self.judge(prompt, threshold)
        except BudgetExhausted:
            fallback = deterministic_intent(flow_run)
            fallback.reason = f"judge budget of {self.config.max_calls} calls reached; deterministic: {fallback.reason}"
            fallback.judge_skip = "budget"
            return fallback
        return IntentEvaluation(
            status=decision.status, method="judge", reason=decision.reason, score=decision.score,
            threshold=threshold, judge=JudgeRecord(decision.escalated, [t.record for t in decision.tiers]),
            content_sha256=content,
        )

    # ---- one judgement: tiers, escalation, totals

    def judge(self, prompt: Prompt, threshold: float) -> Decision:
        """The decision on one prompt; BudgetExhausted when tier 1 needed a call past the budget."""
        start = time.monotonic()
        try:
            band = self.config.escalation.band if self.config.escalation else None
            results = [self._run_tier(0, prompt)]
            if should_escalate(results[0], threshold, band):
                try:
                    results.append(self._run_tier(1, prompt))
                except BudgetExhausted:
                    decision = budget_blocked(results[0], threshold, self.config.max_calls)
                    self._count(decision)
                    return decision
            decision = decide(results, threshold, band)
            self._count(decision)
            return decision
        finally:
            self._clock(start)

    def _run_tier(self, index: int, prompt: Prompt) -> TierResult:
        provider = self.tiers[index]
        live = not isinstance(provider, ReplayProvider)
        key = verdict_key(provider.name, provider.model, provider.parameters, prompt)
        started = time.monotonic()
        entry = self._verdicts.get(key, provider.name, provider.model) if live and self.config.use_cache else None
        try:
            if entry is not None:
                completion = Completion(entry["reply"])
            elif self._given_up[index] is not None:
                raise ProviderError(self._given_up[index], unreachable=True)
            elif live:
                self._reserve_call()
                completion = provider.complete(prompt)
            else:
                completion = provider.complete(prompt)
        except DistrustedRecording as exc:
            record = JudgeTier(provider.name, provider.model, None, str(exc), _ms(started), cached=True)
            return TierResult(record, distrusted=str(exc))
        except ProviderError as exc:
            message = self._redact(str(exc))
            self._note_reachability(index, message if exc.unreachable else None)
            record = JudgeTier(provider.name, provider.model, None, message, _ms(started), cached=not live)
            return TierResult(record, error=message, unreachable=exc.unreachable)
        if entry is None:
            self._note_reachability(index, None)
        latency = _ms(started)
        cached = entry is not None or not live
        try:
            verdict, reason = parse_verdict(completion.text), None
        except VerdictError as exc:
            verdict, reason = None, f"unparseable verdict: {exc}"
        tokens_in, tokens_out = (0, 0) if cached else (completion.input_tokens, completion.output_tokens)
        with self._lock:
            self._totals.cached += cached
            self._totals.input_tokens += tokens_in
            self._totals.output_tokens += tokens_out
            if not cached:
                self._count_call(provider.model, tokens_in, tokens_out)
        if verdict is not None and entry is None and live and self.config.use_cache:
            self._store(self._verdicts, key, prompt, provider, completion, latency, verdict)
        if self.config.record and live:
            self._store(self._cassettes, cassette_key(prompt, index + 1), prompt, provider, completion, latency,
                        verdict)
        record = JudgeTier(
            provider=provider.name, model=provider.model, score=verdict.score if verdict else None,
            reason=self._redact(verdict.reason if verdict else reason), latency_ms=latency,
            input_tokens=tokens_in, output_tokens=tokens_out, cached=cached,
        )
        return TierResult(record, verdict=verdict)

    def _store(self, store, key, prompt, provider, completion, latency, verdict) -> None:
        """Cache the reply; a cache that cannot be written costs a judge call next run, never this verdict."""
        with self._store_lock, contextlib.suppress(OSError):
            store.put(
                key, prompt=prompt, provider=provider.name, model=provider.model,
                reply=self._redact_reply(completion.text),
                input_tokens=completion.input_tokens, output_tokens=completion.output_tokens, latency_ms=latency,
                verdict=None if verdict is None else {
                    "score": verdict.score, "reason": verdict.reason,
                    "mismatches": [m.__dict__ for m in verdict.mismatches],
                },
            )

    def _note_reachability(self, index: int, unreachable: str | None) -> None:
        """Count calls in a row that could not reach tier `index`; give it up after UNREACHABLE_AFTER."""
        with self._lock:
            if unreachable is None:
                self._unreachable_calls[index] = 0
                return
            self._unreachable_calls[index] += 1
            if self._unreachable_calls[index] >= UNREACHABLE_AFTER and self._given_up[index] is None:
                self._given_up[index] = unreachable

    def _reserve_call(self) -> None:
        with self._lock:
            if self._totals.calls >= self.config.max_calls:
                raise BudgetExhausted
            self._totals.calls += 1

    def _count(self, decision: Decision) -> None:
        with self._lock:
            self._totals.escalated += decision.escalated
            self._totals.needs_review += decision.status == "needs_review"

    def _clock(self, start: float) -> None:
        end = time.monotonic()
        with self._lock:
            self._first_start = start if self._first_start is None else min(self._first_start, start)
            self._last_end = end if self._last_end is None else max(self._last_end, end)

    def _redact(self, text: str) -> str:
        return self._redactor.redact(text)

    def _redact_reply(self, text: str) -> str:
        """A reply for the cache with the keys masked in its strings only, so that it still parses."""
        try:
            return json.dumps(self._redactor.redact_value(json.loads(text)), ensure_ascii=False)
        except ValueError:
            return self._redact(text)

    @property
    def notes(self) -> tuple[str, ...]:
        """What the run should be told once: cache entries left unread because git tracks them."""
        tracked = len(self._verdicts.ignored) + len(self._embeddings.ignored)
        notes = [self.cache_note] if self.cache_note else []
        if tracked:
            notes.append(f"{count(tracked, 'judge cache entry', 'judge cache entries')} in {self.config.cache} tracked "
                         "by git not read: a committed cache entry could decide a verdict without the judge, so "
                         "those are judged again (keep the cache out of the repository, e.g. in .gitignore, and "
                         "restore it with actions/cache)")
        return tuple(notes)

    def mask_with(self, redactor: Redactor) -> None:
        """Have `redactor` (the run's) mask the tiers' credentials everywhere, like `{{ secrets.NAME }}` values: the
        API keys read from the environment, the credentials clients obtained so far, and each one they obtain later
        (an access token google-auth refreshes) as soon as they have it."""
        for name, value in self._secrets.items():
            redactor.register(value, name=name)
        with self._lock:
            self._masks.append(redactor)
            issued = list(self._issued)
        for value in issued:
            redactor.register(value)

    def _mask_credential(self, value: str) -> None:
        with self._lock:
            self._issued.append(value)
            masks = [self._redactor, *self._masks]
        for redactor in masks:
            redactor.register(value)

    def _count_call(self, model: str, input_tokens: int, output_tokens: int) -> None:
        """One call made (not cached, not replayed), by model: what the run's judge cost is priced from.
        Called holding `_lock`."""
        calls, tokens_in, tokens_out = self._calls_by_model.get(model, (0, 0, 0))
        self._calls_by_model[model] = (calls + 1, tokens_in + input_tokens, tokens_out + output_tokens)

    def calls_by_model(self) -> dict[str, tuple[int, int, int]]:
        """model -> (calls, input tokens, output tokens) of the calls this run made (litmus.usage.judge_totals)."""
        with self._lock:
            return dict(self._calls_by_model)

    def totals(self) -> JudgeTotals:
        with self._lock:
            wall = (self._last_end - self._first_start) * 1000 if self._first_start is not None else 0.0
            return JudgeTotals(**{**self._totals.__dict__, "wall_ms": round(wall, 1)})

    def close(self, *, abandon: bool = False) -> None:
        """Wait for the judge calls in flight, or (`abandon`, after SIGINT/SIGTERM) cancel the queued
        ones and leave those in flight unjoined, with no cache write after this returns."""
        if abandon:
            self._store_lock.acquire()  # never released: the process is about to end
            self.executor.shutdown(wait=False, cancel_futures=True)
            return
        self.executor.shutdown(wait=True)
        for provider in [*self.tiers, self.simulator]:
            provider.close()
        if self.embedder is not None:
            self.embedder.close()


def _hashed(outcome: AssertionOutcome, content: str) -> AssertionOutcome:
    """A judged outcome with the content hash a human decision would match (written on every one)."""
    outcome.content_sha256 = content
    return outcome


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)
