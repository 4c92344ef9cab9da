"""report/pool_view.py: `zfslab pool`'s table fits 80 columns and its --json record says whether the
model agrees, on the pools captured in the guest."""

from __future__ import annotations

import json

import pytest

from test_pool_model import version
from test_pool_read import SERIES, captures_of, read_both
from zfslab.model.pool_findings import findings
from zfslab.model.pool_model import check_model
from zfslab.report.pool_view import finding_lines, pool_lines, pool_record


@pytest.mark.parametrize("series", SERIES)
def test_every_captured_pool_fits_80_columns_and_its_record_is_json(series):
    for pool, folder in captures_of(series):
        for state in read_both(series, pool, folder=folder):
            check = check_model(state, version(series), expanded=state.expanded)
            found = findings(state, {}, 0)
            lines = pool_lines(state, check)
            assert max(len(line) for line in lines) <= 80, (pool, lines)
            assert any(line.startswith("SIZE ") for line in lines)
            prose = finding_lines(check, found)
            assert len(prose) == 3 + len(found)
            record = json.loads(json.dumps(pool_record(state, check, found)))
            assert record["model"]["agrees"] is check.agrees
            assert [f["code"] for f in record["findings"]] == [f.code for f in found]
            assert record["vdevs"][0]["children"]
