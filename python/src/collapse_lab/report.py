"""A collapse-lab RunReport as pandas DataFrames.

A RunReport (``collapse-lab run --out FILE``, the recordings in ``public/recorded/``) holds one
experiment: its conditions, each run over seeds, and paired comparisons between them. ``read_report``
checks it against the RunReport's JSON Schema (``schema/run-report.schema.json``, made from the zod
schema the app reads reports with) and lays it out as tidy frames. Column names are the report's
own (``heldoutSuccess``, ``excludesZero``), so a frame and the JSON read alike.

Reports written before collapse-lab computed a p-value for each paired difference carry none, and
their intervals follow older rules; ``restated_report`` reads such a file through
``collapse-lab report FILE --json``, which restates them as the app shows them.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import Any

import pandas as pd
from jsonschema import Draft202012Validator

REPORT_SCHEMA = "collapse-lab/run-report@1"

_SUMMARY = ["mean", "lo", "hi", "sd", "n"]
_PAIRED = [*_SUMMARY, "excludesZero", "p"]


class ReportError(ValueError):
    """The input is not a RunReport this package can read; the message says where."""


@lru_cache(maxsize=1)
def json_schema() -> dict[str, Any]:
    """The RunReport's JSON Schema (draft 2020-12), as shipped with the package."""
    text = resources.files("collapse_lab").joinpath("run-report.schema.json").read_text("utf-8")
    return json.loads(text)


def validate_report(data: Any) -> None:
    """Checks a parsed report against the JSON Schema; raises ReportError naming the first problems."""
    if not isinstance(data, Mapping):
        raise ReportError("not a RunReport: expected a JSON object")
    if data.get("schema") != REPORT_SCHEMA:
        raise ReportError(
            f'not a RunReport: "schema" is {json.dumps(data.get("schema"))}, expected "{REPORT_SCHEMA}"'
        )
    validator = Draft202012Validator(json_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        where = "; ".join(
            f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in errors[:3]
        )
        raise ReportError(f"RunReport is malformed: {where}")


@dataclass(frozen=True)
class Report:
    """One RunReport: the parsed JSON and its frames."""

    data: dict[str, Any]
    conditions: pd.DataFrame
    """One row per condition and metric: the mean over seeds and its 95% Student-t interval (lo, hi), sd, n."""
    seeds: pd.DataFrame
    """One row per condition and seed: every final metric of that seed's trained policy."""
    members: pd.DataFrame
    """One row per condition, seed and held-out panel member: the policy's success against that member."""
    curves: pd.DataFrame
    """One row per condition, seed and evaluation during training (step): the learning curves."""
    comparisons: pd.DataFrame
    """One row per comparison a − b on a metric, paired by seed: mean, lo, hi, sd, n, excludesZero, p
    (NaN where the report predates it), and the held-out comparisons' bootstrap interval."""
    member_comparisons: pd.DataFrame
    """One row per held-out comparison and panel member (reports that carry them)."""

    @property
    def preset(self) -> str | None:
        return self.data.get("preset")

    @property
    def config(self) -> dict[str, Any]:
        return self.data["config"]

    @property
    def benchmark(self) -> str | None:
        config = self.data.get("config")
        return config.get("benchmark") if isinstance(config, Mapping) else None


def read_report(source: str | PathLike[str] | Mapping[str, Any], *, validate: bool = True) -> Report:
    """Reads a RunReport from a file path or an already parsed dict.

    With ``validate`` (the default) the report is first checked against the JSON Schema; a file
    that is not JSON, or not a RunReport, raises ReportError.
    """
    if isinstance(source, Mapping):
        data = dict(source)
    else:
        path = Path(source)
        try:
            data = json.loads(path.read_text("utf-8"))
        except json.JSONDecodeError as e:
            raise ReportError(f"{path}: not JSON ({e})") from e
    if validate:
        validate_report(data)
    return Report(
        data=data,
        conditions=_conditions(data),
        seeds=_seeds(data),
        members=_members(data),
        curves=_curves(data),
        comparisons=_comparisons(data),
        member_comparisons=_member_comparisons(data),
    )


def restated_report(
    path: str | PathLike[str],
    *,
    command: Sequence[str] = ("npx", "collapse-lab"),
    cwd: str | PathLike[str] | None = None,
    timeout: float = 300,
) -> Report:
    """Reads a report as collapse-lab reads it: through ``collapse-lab report FILE --json``.

    Reports written before the p-value, or under older interval rules, come back restated by
    today's rules (the numbers the app and the CLI show); measured numbers are unchanged. Needs
    collapse-lab's command (``command``, run in ``cwd``: a clone where ``npm ci`` was run).
    """
    proc = subprocess.run(
        [*command, "report", str(Path(path).resolve()), "--json"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise ReportError(f"collapse-lab report {path} failed: {proc.stderr.strip()}")
    return read_report(json.loads(proc.stdout))


def _number_frame(rows: list[dict[str, Any]], columns: list[str], numeric: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=columns)
    for c in numeric:
        frame[c] = pd.to_numeric(frame[c], errors="coerce").astype("float64")
    if "n" in numeric:  # a count of seeds, missing in the oldest reports
        frame["n"] = frame["n"].round().astype("Int64")
    return frame


def _conditions(data: Mapping[str, Any]) -> pd.DataFrame:
    rows = [
        {"condition": c["id"], "metric": metric, **{k: s.get(k) for k in _SUMMARY}}
        for c in data["conditions"]
        for metric, s in c["summary"].items()
        if isinstance(s, Mapping)
    ]
    return _number_frame(rows, ["condition", "metric", *_SUMMARY], _SUMMARY)


def _is_scalar(v: Any) -> bool:
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))


def _seeds(data: Mapping[str, Any]) -> pd.DataFrame:
    metrics: list[str] = []  # every scalar metric any seed has, in the order met
    for c in data["conditions"]:
        for s in c["seeds"]:
            metrics += [k for k, v in s.items() if k != "seed" and _is_scalar(v) and k not in metrics]
    rows = [
        {"condition": c["id"], "seed": s["seed"], **{m: s.get(m) for m in metrics}}
        for c in data["conditions"]
        for s in c["seeds"]
    ]
    frame = _number_frame(rows, ["condition", "seed", *metrics], metrics)
    return frame.astype({"seed": "int64"})


def _members(data: Mapping[str, Any]) -> pd.DataFrame:
    rows = [
        {"condition": c["id"], "seed": s["seed"], "member": m, "heldoutSuccess": v}
        for c in data["conditions"]
        for s in c["seeds"]
        for m, v in (s.get("heldoutByMember") or {}).items()
    ]
    frame = _number_frame(rows, ["condition", "seed", "member", "heldoutSuccess"], ["heldoutSuccess"])
    return frame.astype({"seed": "int64"})


def _curves(data: Mapping[str, Any]) -> pd.DataFrame:
    keys: list[str] = []
    for c in data["conditions"]:
        for s in c["seeds"]:
            for p in s["curve"]:
                keys += [k for k, v in p.items() if k != "step" and _is_scalar(v) and k not in keys]
    rows = [
        {"condition": c["id"], "seed": s["seed"], "step": p["step"], **{k: p.get(k) for k in keys}}
        for c in data["conditions"]
        for s in c["seeds"]
        for p in s["curve"]
    ]
    frame = _number_frame(rows, ["condition", "seed", "step", *keys], keys)
    return frame.astype({"seed": "int64", "step": "int64"})


def _paired(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: d.get(k) for k in _PAIRED}


def _comparisons(data: Mapping[str, Any]) -> pd.DataFrame:
    rows = [
        {
            "a": c["a"],
            "b": c["b"],
            "metric": c["metric"],
            **_paired(c["difference"]),
            "bootstrapLo": (c.get("bootstrap") or {}).get("lo"),
            "bootstrapHi": (c.get("bootstrap") or {}).get("hi"),
        }
        for c in data.get("comparisons") or []
    ]
    numeric = [k for k in _PAIRED if k != "excludesZero"] + ["bootstrapLo", "bootstrapHi"]
    frame = _number_frame(rows, ["a", "b", "metric", *_PAIRED, "bootstrapLo", "bootstrapHi"], numeric)
    frame["excludesZero"] = frame["excludesZero"].astype("boolean")
    return frame


def _member_comparisons(data: Mapping[str, Any]) -> pd.DataFrame:
    rows = [
        {"a": c["a"], "b": c["b"], "metric": c["metric"], "member": m, **_paired(d)}
        for c in data.get("comparisons") or []
        for m, d in (c.get("byMember") or {}).items()
    ]
    numeric = [k for k in _PAIRED if k != "excludesZero"]
    frame = _number_frame(rows, ["a", "b", "metric", "member", *_PAIRED], numeric)
    frame["excludesZero"] = frame["excludesZero"].astype("boolean")
    return frame
