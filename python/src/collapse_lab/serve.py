"""collapse-lab's simulators from Python, through ``collapse-lab serve`` and the official OpenAI client.

``collapse-lab serve --preset ID`` exposes one preset's world behind the OpenAI chat API: the
reference simulator, the γ-aligned one (``aligned``, whose γ is the preset's), the VS simulator,
each held-out panel member, each latent human type, the exact Bayes predictive and the policies.
A chat turn is the dialogue so far in act texts (docs/remote.md); the reply is one act's text.
``ServedSimulator`` wraps one such model: sampled replies, the exact distribution over the acts
(from log-probs) and Verbalized Sampling (its ``:vs`` twin). ``serve`` starts the command and
yields its base URL, for scripts and tests.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from math import exp
from os import PathLike
from typing import Any

from openai import OpenAI

Message = dict[str, str]


@dataclass(frozen=True)
class Candidate:
    """One Verbalized Sampling candidate: a reply and its stated probability."""

    text: str
    probability: float


class ServedSimulator:
    """One model of ``collapse-lab serve``, played through ``openai.OpenAI``.

    ``base_url`` is the server's OpenAI base URL (``http://127.0.0.1:8000/v1`` by default);
    ``api_key`` the key ``serve --api-key-env`` asks for, if any. Extra keyword arguments go to
    ``OpenAI`` (``timeout``, ``max_retries``, …).
    """

    def __init__(
        self,
        model: str,
        base_url: str = "http://127.0.0.1:8000/v1",
        *,
        api_key: str | None = None,
        client: OpenAI | None = None,
        **client_options: Any,
    ) -> None:
        self.model = model
        # serve without --api-key-env takes any key; the SDK insists on one
        self.client = client or OpenAI(base_url=base_url, api_key=api_key or "none", **client_options)

    def example_messages(self) -> list[Message]:
        """A valid chat turn for this model, as the server lists it (act texts after a persona card)."""
        info = self.client.models.retrieve(self.model)
        return list(getattr(info, "example_messages", None) or [])  # serve's extra field

    def reply(
        self,
        messages: Sequence[Message],
        *,
        n: int = 1,
        seed: int | None = None,
        temperature: float | None = None,
    ) -> list[str]:
        """``n`` sampled replies (act texts); the same seed gives the same replies."""
        r = self.client.chat.completions.create(
            model=self.model,
            messages=list(messages),  # type: ignore[arg-type]
            n=n,
            **_optional(seed=seed, temperature=temperature),
        )
        return [c.message.content or "" for c in r.choices]

    def distribution(self, messages: Sequence[Message], *, top: int = 20) -> dict[str, float]:
        """The model's probability of each of its ``top`` most likely replies (act texts), exactly.

        Read from the reply's log-probabilities, which ``serve`` gives per act under the model's
        own distribution; with ``top`` at least the number of acts the state allows, they sum to 1.
        """
        r = self.client.chat.completions.create(
            model=self.model,
            messages=list(messages),  # type: ignore[arg-type]
            logprobs=True,
            top_logprobs=top,
            max_tokens=1,
        )
        content = r.choices[0].logprobs.content if r.choices[0].logprobs else None
        if not content:
            raise ValueError(f"{self.model}: the reply carries no log-probs")
        return {t.token: exp(t.logprob) for t in content[0].top_logprobs}

    def vs(
        self,
        messages: Sequence[Message],
        *,
        k: int | None = None,
        seed: int | None = None,
        temperature: float | None = None,
    ) -> list[Candidate]:
        """Verbalized Sampling: ``k`` candidate replies with stated probabilities (the ``:vs`` twin;
        ``k`` defaults to the preset's ``vs.k``)."""
        r = self.client.chat.completions.create(
            model=f"{self.model}:vs",
            messages=list(messages),  # type: ignore[arg-type]
            **_optional(seed=seed, temperature=temperature),
            **({"extra_body": {"vs_k": k}} if k is not None else {}),
        )
        reply = json.loads(r.choices[0].message.content or "{}")
        return [Candidate(c["text"], float(c["probability"])) for c in reply["responses"]]


def _optional(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


_LISTENING = re.compile(r"collapse-lab serve: .* at (http://\S+/v1)")


@contextmanager
def serve(
    *args: str,
    command: Sequence[str] = ("npx", "collapse-lab"),
    cwd: str | PathLike[str] | None = None,
    timeout: float = 300,
) -> Iterator[str]:
    """Runs ``collapse-lab serve ARGS`` on a free port of 127.0.0.1 and yields its base URL.

    ``args`` are serve's own (``"--preset", "persuasion-smoke"``); ``command`` runs collapse-lab in
    ``cwd`` (a clone where ``npm ci`` was run). The server is stopped when the block ends; one that
    does not start within ``timeout`` seconds, or exits, raises RuntimeError with what it printed.
    """
    proc = subprocess.Popen(
        [*command, "serve", *args, "--host", "127.0.0.1", "--port", "0", "--quiet"],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    found = threading.Event()
    url: list[str] = []
    printed: list[str] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            printed.append(line)
            m = _LISTENING.search(line)
            if m and not url:
                url.append(m.group(1))
                found.set()
        found.set()  # the command ended

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not found.wait(timeout):
            raise RuntimeError(f"collapse-lab serve did not start within {timeout:.0f} s")
        if not url:
            code = proc.wait(timeout=30)
            reader.join(timeout=5)
            raise RuntimeError(f"collapse-lab serve exited ({code}): {''.join(printed).strip()}")
        yield url[0]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(timeout=5)
