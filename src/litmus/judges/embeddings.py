"""Embeddings for `similar`: each provider's embeddings client, recorded embeddings, cosine.

The judge service (`litmus.judges.service`) owns caching, cassettes and the call budget, as for
verdicts; this module only speaks the wire format and does the arithmetic.
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from litmus.judges.cache import DistrustedRecording, Recordings, embedding_cassette_key, embedding_cassettes
from litmus.judges.providers import AzureEndpoint, BedrockSigning, GoogleEndpoint, HTTPTransport, ProviderError
from litmus.text import clip


@dataclass(frozen=True)
class Embedding:
    vector: list[float]
    input_tokens: int = 0


class HTTPEmbeddings(HTTPTransport, ABC):
    """An embeddings API over HTTP: a text in, its vector out."""

    @abstractmethod
    def embed(self, text: str) -> Embedding:
        """The text's embedding in this provider's wire format."""

    def _vector(self, vector: object, where: str, input_tokens: object) -> Embedding:
        if not isinstance(vector, list) or not vector or not all(_is_number(x) for x in vector):
            raise self._error(f"{where} is not a list of numbers: {json.dumps(vector)[:200]}")
        return Embedding([float(x) for x in vector], int(input_tokens or 0))


class OpenAIEmbeddings(HTTPEmbeddings):
    """`POST {base_url}/embeddings` as OpenAI (and vLLM, Ollama, LiteLLM...) serve it."""

    def embed(self, text: str) -> Embedding:
        data = self._post(self._url("embeddings"), self._headers(), {"model": self.model, "input": text})
        try:
            vector = data["data"][0]["embedding"]
        except (KeyError, IndexError, TypeError):
            raise self._error(f"no data[0].embedding in reply: {json.dumps(data)[:200]}") from None
        return self._vector(vector, "data[0].embedding", (data.get("usage") or {}).get("prompt_tokens"))


class AzureOpenAIEmbeddings(AzureEndpoint, OpenAIEmbeddings):
    """Azure OpenAI embeddings: the OpenAI wire format on a deployment of the team's own resource."""


class BedrockEmbeddings(BedrockSigning, HTTPEmbeddings):
    """Amazon Titan text embeddings through Bedrock's `InvokeModel` (`POST /model/{modelId}/invoke`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_credentials()

    def embed(self, text: str) -> Embedding:
        data = self._post(self._model_url("invoke"), {}, {"inputText": text})
        return self._vector(data.get("embedding"), "embedding", data.get("inputTextTokenCount"))


class GeminiEmbeddings(GoogleEndpoint, HTTPEmbeddings):
    """Gemini embeddings: `embedContent` on the Generative Language API, `predict` on Vertex AI (the two APIs differ
    here, unlike for `generateContent`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._set_up_credentials()

    def embed(self, text: str) -> Embedding:
        if self.name == "gemini":
            body = {"content": {"parts": [{"text": text}]}}
            data = self._post(self._google_url("embedContent"), self._headers(), body)
            return self._vector((data.get("embedding") or {}).get("values"), "embedding.values", 0)
        data = self._post(self._google_url("predict"), self._headers(), {"instances": [{"content": text}]})
        try:
            embeddings = data["predictions"][0]["embeddings"]
        except (KeyError, IndexError, TypeError):
            raise self._error(f"no predictions[0].embeddings in reply: {json.dumps(data)[:200]}") from None
        return self._vector(embeddings.get("values"), "predictions[0].embeddings.values",
                            (embeddings.get("statistics") or {}).get("token_count"))


class ReplayEmbeddings:
    """Recorded embeddings only: the cassette for the text, or an error naming the missing key;
    DistrustedRecording for a cassette `recordings` refuses."""

    def __init__(self, cache_dir: Path, recordings: Recordings, model: str = "recorded"):
        self.name, self.model = "replay", model
        self._store = embedding_cassettes(cache_dir)
        self._recordings = recordings

    def embed(self, text: str) -> Embedding:
        key = embedding_cassette_key(text)
        vector = self._store.get(key)
        if vector is None:
            shown = clip(text, 60)
            raise ProviderError(f"replay: no embedding cassette {key} for {shown!r} in {self._store.directory}; "
                                "record one with --record and a live embeddings model")
        refusal = self._recordings.refusal(self._store.path(key))
        if refusal:
            raise DistrustedRecording(refusal)
        return Embedding(vector)

    def close(self) -> None:
        pass


def cosine(a: list[float], b: list[float]) -> float:
    """Cosine similarity; ValueError for vectors of different sizes or of length zero."""
    if len(a) != len(b):
        raise ValueError(f"the two embeddings have different sizes ({len(a)} and {len(b)}): recorded with "
                         "different models?")
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    if norm == 0:
        raise ValueError("an embedding of length zero has no direction to compare")
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


EMBEDDING_CLASSES: dict[str, type[HTTPEmbeddings]] = {
    "openai": OpenAIEmbeddings, "azure_openai": AzureOpenAIEmbeddings, "bedrock": BedrockEmbeddings,
    "vertex": GeminiEmbeddings, "gemini": GeminiEmbeddings,
}
