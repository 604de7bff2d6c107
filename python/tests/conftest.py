"""Shared paths: the repository the package lives in, its recordings, and its command."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RECORDED = REPO / "public" / "recorded"
QUICK = RECORDED / "persuasion-quick.json"
# collapse-lab's command from this clone (node runs its TypeScript through tsx; no build step)
COMMAND = ("node", str(REPO / "bin" / "collapse-lab.mjs"))


@pytest.fixture(scope="session")
def command() -> tuple[str, ...]:
    """collapse-lab's command; the tests that run it need Node and the clone's node_modules."""
    if shutil.which("node") is None or not (REPO / "node_modules").is_dir():
        pytest.fail(f"these tests run collapse-lab itself: install Node 20 and run `npm ci` in {REPO}")
    return COMMAND
