"""The claims page (gcc.experiments.claims_page): one row per paper statement in words, the result
box's numbers from the table, a forest plot per theorem, a glossary of the short names."""
from __future__ import annotations

import re

import matplotlib
import pandas as pd
import pytest

from gcc.experiments import claims, claims_page
from gcc.experiments.dnn_claims import DNN_CLAIMS

matplotlib.use("Agg")


def _root(tmp_path):
    """A results root with worst-case slopes on the lower-bound family (tight) and on x sin x (loose)."""
    folder = tmp_path / "worst_case_rate"
    folder.mkdir(parents=True)
    rows = []
    for function, slope in (("bump (lower bound)", -3.0), ("x sin x", -6.0), ("bump (decoder test)", -2.0)):
        base = {"function": function, "scheme": "gcc", "straggler": "worst", "quantity": "loss", "n_points": 6}
        rows += [{**base, "fixed": "S=2", "variable": "N", "slope": slope, "ci_low": slope - 0.1,
                  "ci_high": slope + 0.1},
                 {**base, "fixed": "S=4", "variable": "N", "slope": slope, "ci_low": slope - 0.1,
                  "ci_high": slope + 0.1}]
    pd.DataFrame(rows).to_csv(folder / "slopes.csv", index=False)
    return tmp_path


def test_every_claim_belongs_to_one_statement():
    ids = [c.id for c in claims.CLAIMS] + list(DNN_CLAIMS)
    owners = {i: [s.words for s in claims_page.STATEMENTS if i in s.claims] for i in ids}
    assert all(len(o) == 1 for o in owners.values()), {i: o for i, o in owners.items() if len(o) != 1}
    assert {i for s in claims_page.STATEMENTS for i in s.claims} == set(ids)


def test_headline_table_counts_per_kind_of_function_in_words(tmp_path):
    table = claims.build_claims_table(_root(tmp_path))
    head = claims_page.headline_table(table)
    assert list(head.columns) == ["statement", "source", "lower-bound family", "decoder test", "typical functions",
                                  "evidence"]
    assert len(head) == len(claims_page.STATEMENTS)
    thm1 = head.iloc[0]
    # two fixed-S rows each: the family tight, x sin x loose (6 against 3), the decoder test violated (2 against 3)
    assert thm1["lower-bound family"] == "2 tight"
    assert thm1["typical functions"] == "2 loose"
    assert thm1["decoder test"] == "2 violated"
    text = " ".join(head.astype(str).to_numpy().ravel())
    ids = [c.id for c in claims.CLAIMS if "-" in c.id] + list(DNN_CLAIMS)
    assert not [i for i in ids if re.search(rf"(?<![\w-]){re.escape(i)}(?![\w-])", text)]
    assert head.iloc[0]["evidence"] == '<a href="worst_case_rate.html">worst case rate</a>'
    assert claims_page.headline_table(table, link="doc").iloc[0]["evidence"].startswith("{doc}`")


def test_result_box_values_quote_the_table(tmp_path):
    table = claims.build_claims_table(_root(tmp_path))
    values = {v["key"]: v["number"] for v in claims_page.box_values(table)}
    # Theorem 1: two fixed-S rows on the family (tight), two on x sin x (loose), two decoder-test rows violated
    assert (values["thm1_family_tight"], values["thm1_family"]) == (2, 2)
    assert (values["thm1_typical_loose"], values["thm1_typical"]) == (2, 2)
    assert values["violated_where"] == f"2 on \u201c{claims_page.STATEMENTS[0].words}\u201d"
    assert values["n_statements"] == len(claims_page.STATEMENTS) and values["n_points"] == 6 * 6
    # every {{ value.<key> }} of the notebook's box is one of the values the notebook records
    from pathlib import Path

    prose = (Path(__file__).resolve().parent.parent / "notebooks" / "claims_table.md").read_text()
    box = prose.split(":::{admonition}")[1].split(":::")[0]
    recorded = set(values)
    assert set(re.findall(r"\{\{ value\.(\w+) \}\}", box)) <= recorded and "gcc-result" in box


def test_readable_and_glossary_replace_the_short_names(tmp_path):
    table = claims.build_claims_table(_root(tmp_path))
    shown = claims_page.readable(claims.open_rows(table, "violated"))
    assert list(shown.columns[:2]) == ["statement", "test"] and "claim" not in shown.columns
    assert "measured (95% CI)" in shown.columns
    glossary = claims_page.glossary(table)
    assert list(glossary.columns) == ["short name", "statement", "test"]
    assert set(glossary["short name"]) == set(table["claim"])


def test_forest_plot_one_panel_per_theorem_readable_text(tmp_path):
    table = claims.build_claims_table(_root(tmp_path))
    fig = claims_page.plot_forest(table)
    axes = [ax for ax in fig.axes]
    assert [ax.get_title(loc="left") for ax in axes] == ["Theorem 1: GCC, (S+1)^3 N^-3"]
    labels = [t.get_text() for t in axes[0].get_yticklabels()]
    assert labels == ["N slope at fixed S, bumps: lower bound", "N slope at fixed S, x sin x",
                      "N slope at fixed S, bumps: decoder test"]
    assert min(t.get_fontsize() for t in axes[0].get_yticklabels()) >= 9
    assert fig.get_size_inches()[0] <= 6.7


def test_headline_table_rejects_an_unknown_link():
    with pytest.raises(ValueError, match="link"):
        claims_page.headline_table(pd.DataFrame(columns=claims.CLAIM_COLUMNS), link="pdf")


def test_claim_words_name_the_statement_and_the_test():
    assert claims_page.claim_words("thm1-N") == ("GCC's worst-case loss falls like (S+1)^3 / N^3 (noiseless workers) "
                                                 "(N slope at fixed S)")
    assert claims_page.claim_words("no-such-claim") == "no-such-claim"
