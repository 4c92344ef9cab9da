"""--disk-price: what the disks cost, and each layout's price per usable TB in plan and report."""

import csv
import io
import json
import math

import pytest

from zfslab.errors import UsageError
from zfslab.commands._prices import check_prices, parse_disk_prices
from zfslab.model.cost import DiskPrices
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.plan import disk_set, mixed_disk_set, plan
from zfslab.model.units import TB


def test_one_price_for_every_disk_and_one_per_size():
    assert parse_disk_prices("250").of(4 * TB) == 250
    prices = parse_disk_prices("12TB=250, 8TB=150.5")
    assert (prices.of(12 * TB), prices.of(8 * TB), prices.of(4 * TB)) == (250, 150.5, None)


@pytest.mark.parametrize("text", ["abc", "-5", "0", "0.0", "inf", "nan", "1e3", "$250", "250EUR", "", "1,250",
                                  "12TB=", "=250", "12TB=250,12TB=300", "12XB=250", "12TB=-1"])
def test_a_price_that_is_no_plain_positive_number_is_refused_with_the_fix(text):
    with pytest.raises(UsageError) as e:
        parse_disk_prices(text)
    message = str(e.value)
    assert message.startswith(f"--disk-price {text!r}: ") and "e.g. --disk-price 250" in message
    assert "\n" not in message


def test_the_prices_must_fit_the_plans_sizes():
    sizes = {12 * TB: 4, 8 * TB: 4}
    with pytest.raises(UsageError, match=r"several sizes .*--disk-price 12TB=PRICE,8TB=PRICE"):
        check_prices(parse_disk_prices("250"), sizes, "250")
    with pytest.raises(UsageError, match="no price for the 8.00 TB disks; add 8TB=PRICE"):
        check_prices(parse_disk_prices("12TB=250"), sizes, "12TB=250")
    with pytest.raises(UsageError, match="has no 10.00 TB disks"):
        check_prices(parse_disk_prices("12TB=250,8TB=1,10TB=3"), sizes, "x")
    check_prices(parse_disk_prices("12TB=250,8TB=150"), sizes, "x")


def test_prices_are_checked_where_they_are_built():
    with pytest.raises(ValueError):
        DiskPrices(((None, math.nan),))
    with pytest.raises(ValueError):
        DiskPrices(((None, 1.0), (4 * TB, 2.0)))


def test_each_layout_pays_for_the_disks_it_uses():
    rows = {r.layout: r for r in plan(disk_set(6, 20 * TB), prices=parse_disk_prices("400"))}
    for r in rows.values():  # every candidate of 6 disks uses all 6 (spares included)
        assert r.disks_price == 6 * 400
        assert r.price_per_usable_tb == pytest.approx(2400 / r.usable_tb)
    assert rows["raidz2:6"].price_per_usable_tb > rows["raidz1:6"].price_per_usable_tb
    mixed = plan(mixed_disk_set([(4, 12 * TB), (4, 8 * TB)]), prices=parse_disk_prices("12TB=250,8TB=150"),
                 layouts=[parse_layout("raidz2:4+raidz2:4")])
    assert mixed[0].disks_price == 4 * 250 + 4 * 150
    assert plan(disk_set(6, 20 * TB), layouts=[parse_layout("raidz2:6")])[0].price_per_usable_tb is None


def test_plan_shows_the_price_in_its_table_json_csv_and_reason(run_cli):
    r = run_cli("plan", "6x20TB", "--data", "media", "--disk-price", "400", "--json")
    record = json.loads(r.stdout)
    row = next(x for x in record["layouts"] if x["layout"] == "raidz2:6")
    assert row["disks_price"] == 2400 and row["price_per_usable_tb"] == round(2400 / row["usable_tb"], 2)
    table = run_cli("plan", "6x20TB", "--data", "media", "--disk-price", "400").stdout
    assert "/TB" in table and f"{row['price_per_usable_tb']:.2f}" in table
    assert "per usable TB (the disks 2,400)" in " ".join(table.split())
    rows = list(csv.DictReader(io.StringIO(run_cli("plan", "6x20TB", "--disk-price", "400", "--csv").stdout)))
    assert all(float(x["disks_price"]) == 2400 for x in rows)
    assert all(float(x["price_per_usable_tb"]) > 0 for x in rows)


def test_the_csv_keeps_its_columns_without_a_price(run_cli):
    with_price = run_cli("plan", "6x20TB", "--disk-price", "400", "--csv").stdout.splitlines()[0]
    without = run_cli("plan", "6x20TB", "--csv").stdout.splitlines()
    assert with_price == without[0]
    rows = list(csv.DictReader(io.StringIO("\n".join(without))))
    assert {x["price_per_usable_tb"] for x in rows} == {""}


def test_report_carries_the_price(run_cli):
    rows = list(csv.DictReader(io.StringIO(run_cli("report", "--plan", "6x8TB", "--disk-price", "150", "--csv").stdout)))
    assert all(float(x["disks_price"]) == 900 for x in rows)


@pytest.mark.parametrize("value", ["abc", "0", "-1", "inf", "12TB=250"])
def test_a_bad_price_is_one_line_and_exit_2(run_cli, value):
    r = run_cli("plan", "6x20TB", f"--disk-price={value}")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith(f"zfslab: error: --disk-price {value!r}: ") and r.stderr.count("\n") == 1


def test_priority_cost_picks_the_lowest_price_per_usable_tb_in_budget(run_cli):
    from zfslab.model.recommend import Goal, recommend
    from zfslab.model.reliability.params import RiskParams
    rows = plan(mixed_disk_set([(6, 12 * TB), (4, 8 * TB)]), prices=parse_disk_prices("12TB=250,8TB=120"),
                risk=RiskParams(disk_bytes=12 * TB, years=(5,)))
    rec = recommend(rows, Goal(priority="cost"))
    feasible = [r for r in rows if r.layout in rec.shortlist]
    by = {r.layout: r for r in rows}
    assert by[rec.layout].price_per_usable_tb == min(r.price_per_usable_tb for r in feasible)
    assert "the lowest price per usable TB" in rec.reason


def test_priority_cost_without_a_price_says_what_to_add(run_cli):
    r = run_cli("plan", "12x4TB", "--priority", "cost")
    assert r.exit_code == 2 and r.stderr == ("zfslab: error: --priority cost needs what the disks cost: add "
                                             "--disk-price PRICE, e.g. --disk-price 250\n")
