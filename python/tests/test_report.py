"""A real RunReport (persuasion-quick, as recorded) as pandas frames: every frame lines up with the
JSON; the conditions' means are the means of their seeds; each paired difference is the mean over
seeds of a − b, read from the seeds' frame; held-out success is the mean over the panel members;
every committed report passes the JSON Schema; bad input raises ReportError naming where; and
``restated_report`` adds the p-values a file written before them lacks, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import collapse_lab
from collapse_lab import ReportError, read_report, restated_report, validate_report
from conftest import QUICK, RECORDED, REPO


@pytest.fixture(scope="module")
def raw() -> dict:
    return json.loads(QUICK.read_text("utf-8"))


@pytest.fixture(scope="module")
def report() -> collapse_lab.Report:
    return read_report(QUICK)


def test_frames_line_up_with_the_json(report: collapse_lab.Report, raw: dict) -> None:
    assert report.preset == "persuasion-quick"
    assert report.benchmark == "persuasion"
    ids = [c["id"] for c in raw["conditions"]]
    assert ids == ["base", "single", "vs", "population"]
    assert list(report.conditions["condition"].unique()) == ids
    single = raw["conditions"][1]
    row = report.conditions.query("condition == 'single' and metric == 'heldoutSuccess'").iloc[0]
    for k in ("mean", "lo", "hi", "sd", "n"):
        assert row[k] == single["summary"]["heldoutSuccess"][k]
    assert len(report.seeds) == sum(len(c["seeds"]) for c in raw["conditions"]) == 12
    assert report.seeds["seed"].dtype == np.int64
    points = sum(len(s["curve"]) for c in raw["conditions"] for s in c["seeds"])
    assert len(report.curves) == points
    last = single["seeds"][2]["curve"][-1]
    got = report.curves.query("condition == 'single' and seed == 2").iloc[-1]
    assert (got["step"], got["heldout"], got["entropy"]) == (last["step"], last["heldout"], last["entropy"])
    assert len(report.comparisons) == len(raw["comparisons"]) == 9
    assert report.member_comparisons.empty  # written before per-member differences


def test_a_conditions_mean_is_the_mean_of_its_seeds(report: collapse_lab.Report) -> None:
    by_seed = report.seeds.groupby("condition", sort=False)[
        ["trainSuccess", "heldoutSuccess", "humanSuccess", "policyEntropy"]
    ].mean()
    summary = report.conditions.pivot(index="condition", columns="metric", values="mean")
    for metric in by_seed.columns:
        np.testing.assert_allclose(by_seed[metric], summary.loc[by_seed.index, metric], rtol=1e-12)


def test_each_paired_difference_is_the_mean_of_a_minus_b_over_seeds(report: collapse_lab.Report) -> None:
    seeds = report.seeds.set_index(["condition", "seed"])
    for c in report.comparisons.itertuples():
        a = seeds.loc[c.a][c.metric]
        b = seeds.loc[c.b][c.metric]
        assert list(a.index) == list(b.index)  # the same seeds, paired
        assert c.mean == pytest.approx((a - b).mean(), rel=1e-12)
        assert c.n == len(a)
        assert c.lo < c.mean < c.hi
    assert report.comparisons["p"].isna().all()  # this file predates the p-value


def test_held_out_success_is_the_mean_over_panel_members(report: collapse_lab.Report) -> None:
    members = report.members.groupby(["condition", "seed"], sort=False)["heldoutSuccess"].agg(["mean", "size"])
    assert set(members["size"]) == {5}
    joined = report.seeds.set_index(["condition", "seed"]).join(members)
    np.testing.assert_allclose(joined["heldoutSuccess"], joined["mean"], rtol=1e-9)


@pytest.mark.parametrize(
    "path",
    sorted(RECORDED.glob("*.json")) + sorted(
        REPO / "docs" / "runs" / r["report"]  # every run report, as docs/runs/index.json lists them
        for r in json.loads((REPO / "docs" / "runs" / "index.json").read_text())["runs"]
    ),
    ids=lambda p: str(Path(p).relative_to(REPO)),
)
def test_every_committed_report_passes_the_json_schema(path: Path) -> None:
    r = read_report(path)
    assert not r.seeds.empty and not r.conditions.empty


def test_bad_input_raises_report_error_naming_where(raw: dict, tmp_path: Path) -> None:
    spoiled = json.loads(json.dumps(raw))
    spoiled["conditions"][1]["seeds"][0]["curve"][0]["step"] = "zero"
    with pytest.raises(ReportError, match=r"conditions/1/seeds/0/curve/0/step: 'zero' is not of type 'number'"):
        read_report(spoiled)
    with pytest.raises(ReportError, match=r'"schema" is null, expected "collapse-lab/run-report@1"'):
        validate_report({"schema": None})
    with pytest.raises(ReportError, match="expected a JSON object"):
        validate_report([1, 2])
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema": "collapse-lab/run-report@1", ')
    with pytest.raises(ReportError, match=r"broken\.json: not JSON"):
        read_report(broken)
    partial = {k: v for k, v in raw.items() if k != "simulators"}
    with pytest.raises(ReportError, match="'simulators' is a required property"):
        read_report(partial)
    assert len(read_report(partial, validate=False).seeds) == 12  # read as it is, unchecked


def test_restated_report_adds_the_p_values_through_the_cli(
    report: collapse_lab.Report, command: tuple[str, ...]
) -> None:
    restated = restated_report(QUICK, command=command, cwd=REPO)
    p = restated.comparisons["p"]
    assert p.notna().all() and ((p > 0) & (p <= 1)).all()
    # three seeds: no sign pattern gives a two-sided p below 2/8
    assert p.min() == pytest.approx(0.25)
    pd.testing.assert_frame_equal(restated.seeds, report.seeds)  # measured numbers unchanged
    pd.testing.assert_series_equal(restated.comparisons["mean"], report.comparisons["mean"])
    assert not restated.member_comparisons.empty
    assert set(restated.member_comparisons["member"]) == {f"family-{x}" for x in "abcde"}
    with pytest.raises(ReportError, match="not a RunReport"):
        restated_report(REPO / "package.json", command=command, cwd=REPO)
