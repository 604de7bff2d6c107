"""collapse-lab's simulators from Python: a real ``collapse-lab serve --preset persuasion-smoke``
started on 127.0.0.1 by ``collapse_lab.serve`` and played through the official OpenAI client.
Sampled replies are act texts and reproducible by seed; the exact distribution read from
log-probs sums to 1 and its mode is the temperature-0 reply; the aligned simulator is the reference
raised to the preset's γ (the known γ); VS returns k candidates with their probabilities; a
message that is no allowed act, and a preset that does not exist, fail with the server's reason."""

from __future__ import annotations

import math
from collections.abc import Iterator

import openai
import pytest

from collapse_lab import ServedSimulator, serve
from conftest import REPO

GAMMA = 10  # persuasion-smoke's simulator.gamma: the aligned simulator is π_ref^γ


@pytest.fixture(scope="module")
def base_url(command: tuple[str, ...]) -> Iterator[str]:
    with serve("--preset", "persuasion-smoke", command=command, cwd=REPO) as url:
        yield url


@pytest.fixture(scope="module")
def turn(base_url: str) -> list[dict[str, str]]:
    messages = ServedSimulator("aligned", base_url).example_messages()
    assert messages[0] == {"role": "system", "content": messages[0]["content"]}
    assert messages[0]["content"].startswith("Persona card:")
    return messages


def test_replies_are_act_texts_and_reproducible_by_seed(base_url: str, turn: list[dict[str, str]]) -> None:
    sim = ServedSimulator("reference", base_url)
    replies = sim.reply(turn, n=8, seed=3)
    assert len(replies) == 8
    assert sim.reply(turn, n=8, seed=3) == replies
    dist = sim.distribution(turn)
    assert set(replies) <= set(dist)


def test_the_distribution_is_exact_and_its_mode_is_the_greedy_reply(base_url: str, turn: list[dict[str, str]]) -> None:
    sim = ServedSimulator("reference", base_url)
    dist = sim.distribution(turn)
    assert sum(dist.values()) == pytest.approx(1, abs=1e-6)
    assert sim.reply(turn, temperature=0) == [max(dist, key=dist.get)]


def test_the_aligned_simulator_is_the_reference_raised_to_gamma(base_url: str, turn: list[dict[str, str]]) -> None:
    ref = ServedSimulator("reference", base_url).distribution(turn)
    aligned = ServedSimulator("aligned", base_url).distribution(turn)
    # log p_aligned(a) − γ log p_ref(a) is one constant (the two normalisers) over the acts
    shifts = [math.log(aligned[a]) - GAMMA * math.log(ref[a]) for a in aligned if aligned[a] > 1e-6]
    assert len(shifts) >= 2
    assert max(shifts) - min(shifts) == pytest.approx(0, abs=1e-3)
    assert max(aligned.values()) > max(ref.values())  # collapsed onto its mode


def test_vs_gives_k_candidates_with_probabilities(base_url: str, turn: list[dict[str, str]]) -> None:
    cands = ServedSimulator("aligned", base_url).vs(turn, k=3, seed=1)
    assert len(cands) == 3
    # each candidate states its act's probability under the simulator; together at most 1
    assert all(0 < c.probability <= 1 for c in cands)
    assert sum(c.probability for c in cands) <= 1 + 1e-6
    assert all(c.text for c in cands)


def test_a_message_that_is_no_allowed_act_is_refused_with_the_allowed_texts(base_url: str, turn: list[dict[str, str]]) -> None:
    bad = [turn[0], {"role": "user", "content": "Tell me about the weather."}]
    with pytest.raises(openai.BadRequestError) as e:
        ServedSimulator("reference", base_url, max_retries=0).reply(bad)
    assert '"Tell me about the weather." is not an act the Persuader can say here; say one of:' in str(e.value)


def test_a_server_that_cannot_start_says_why(command: tuple[str, ...]) -> None:
    with pytest.raises(RuntimeError, match=r"exited \(2\).*no-such-preset"):
        with serve("--preset", "no-such-preset", command=command, cwd=REPO):
            pass
