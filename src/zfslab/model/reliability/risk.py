"""Risk of data loss for a layout: the exact chains (engine A) under ZFS or classic semantics,
and two well-known calculators reproduced from their published formulas.

- `zfs`: a vdev is lost when more of its disks fail than its parity before they are resilvered;
  a read error while a vdev has no redundancy left costs the affected blocks, not the pool.
- `classic`: as RAID calculators assume, a read error during a critical rebuild of the full
  disk loses the array (docs/reliability.md#loss-semantics).
- `wintelguy`: wintelguy.com's RAID reliability calculator (docs/reliability.md#wintelguy).
- `backblaze`: Backblaze's erasure-coding durability period model (docs/reliability.md#backblaze).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from zfslab.errors import ParamError
from zfslab.model.layouts import Layout, VdevGroup, VdevKind
from zfslab.model.reliability import markov
from zfslab.model.reliability.params import HOURS_PER_YEAR, RiskParams

MODELS = ("zfs", "classic", "wintelguy", "backblaze")
MTTDL_CAVEAT = ("MTTDL is a mean over constant failure rates and exponential repairs; it hides that "
                "losses come early and in clusters. Judge by P(loss) over the years.")


@dataclass(frozen=True, slots=True)
class VdevRisk:
    """One top-level vdev of a group (all `count` alike)."""

    vdev: str
    count: int
    mttr_hours: float
    mttdl_hours: float
    p_loss: tuple[float, ...]  # by params.years
    critical_episodes_per_hour: float  # entries into "no redundancy left" (no parity at all: scrubs per hour)
    read_errors_per_critical: float  # expected bad blocks read in one critical resilver
    # expected damaging critical episodes of one such vdev by each of params.years (the field
    # model's by age band); 0 where a read error loses the vdev instead (classic)
    damaging_by_year: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class RiskResult:
    model: str
    engine: str
    years: tuple[float, ...]
    mttdl_hours: float
    p_loss: tuple[float, ...]
    p_damage: tuple[float, ...]
    expected_bytes_lost: tuple[float, ...]  # damaged blocks (partial loss)
    expected_bytes_lost_pool: tuple[float, ...]  # whole-pool loss x the bytes stored
    dominant_cause: str
    vdevs: tuple[VdevRisk, ...] = ()
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        def by_year(values):
            return {f"{y:g}": v for y, v in zip(self.years, values)}
        total = tuple(a + b for a, b in zip(self.expected_bytes_lost, self.expected_bytes_lost_pool))
        return {
            "model": self.model, "engine": self.engine, "mttdl_hours": self.mttdl_hours,
            "mttdl_years": self.mttdl_hours / HOURS_PER_YEAR, "p_loss": by_year(self.p_loss),
            "p_damage": by_year(self.p_damage), "expected_bytes_lost": by_year(self.expected_bytes_lost),
            "expected_bytes_lost_whole_pool": by_year(self.expected_bytes_lost_pool),
            "expected_bytes_lost_total": by_year(total), "dominant_cause": self.dominant_cause,
            "mttdl_caveat": MTTDL_CAVEAT,
            "vdevs": [{"vdev": v.vdev, "count": v.count, "mttr_hours": v.mttr_hours, "mttdl_hours": v.mttdl_hours,
                       "p_loss": by_year(v.p_loss), "critical_episodes_per_hour": v.critical_episodes_per_hour,
                       "read_errors_per_critical": v.read_errors_per_critical} for v in self.vdevs],
            **self.extra,
        }


def _shape(group: VdevGroup) -> tuple[int, int]:
    """(disks whose failures count, parity)."""
    return group.width, group.parity


def _surviving_read_bytes(group: VdevGroup, params: RiskParams, fill: float) -> float:
    """Bytes read from the survivors in a resilver with no redundancy left (docs/reliability.md#read-errors)."""
    per_disk = fill * params.disk_bytes
    if group.kind is VdevKind.DRAID:
        return group.draid_data * per_disk
    return (group.width - group.parity) * per_disk


def _survivors_read(group: VdevGroup) -> int:
    """Disks whose data a resilver with no redundancy left reads: as _surviving_read_bytes() counts them."""
    return group.draid_data if group.kind is VdevKind.DRAID else group.width - group.parity


def field_hits(disks: float, params: RiskParams, fill: float, live_hours: float,
               episodes_per_year: float | None = None) -> tuple[float, float]:
    """(latent-error episodes, bad records) a read of `disks` disks' `fill` meets when errors born in
    the last `live_hours` are still unfound: the field model (docs/reliability.md#field-error-model),
    at `episodes_per_year` per disk (default: the class's study rate)."""
    rate = params.lse_episodes_per_year if episodes_per_year is None else episodes_per_year
    episodes = disks * rate / HOURS_PER_YEAR * live_hours * fill
    return episodes, episodes * params.lse_records_per_episode


def _age_bands(params: RiskParams) -> tuple[tuple[float, ...], tuple[tuple[float, ...], ...]]:
    """The latent-error rates the mission passes through and, per horizon, the hours spent at each
    (docs/reliability.md#by-age); one band at the study rate for the datasheet model or no bands."""
    if not (params.field and params.lse_age_bands):
        return (params.lse_episodes_per_year,), tuple((y * HOURS_PER_YEAR,) for y in params.years)
    by_age = params.lse_by_age()
    return (tuple(rate for _, rate in by_age.bands),
            tuple(tuple(y * HOURS_PER_YEAR for y in by_age.years_in_bands(params.disk_age_years, t))
                  for t in params.years))


def _spare_availability(layout: Layout, lam: float, admin_hours: float) -> float:
    """P(a hot spare is free) from the spare stock chain: consumed at N*lam, each restocked after the admin delay."""
    spares = layout.hot_spares
    if spares == 0:
        return 0.0
    if admin_hours == 0:
        return 1.0
    fail = (layout.disks - spares) * lam
    weights = [1.0]  # relative probabilities of s free spares, from s = S down to 0
    for used in range(1, spares + 1):
        weights.append(weights[-1] * fail / (used / admin_hours))
    return 1.0 - weights[-1] / sum(weights)


def vdev_chain(group: VdevGroup, layout: Layout, params: RiskParams, *, full_disk: bool = False,
               frailty_variance: float = 0.0) -> tuple[markov.Chain, float]:
    """The chain of one vdev and its mean repair hours; `frailty_variance` > 0 for disks of one batch
    (mirror, raidz, single disk: markov.birth_death)."""
    lam = params.failure_rate_per_hour
    fill = 1.0 if full_disk else params.fill
    mirror = group.kind is VdevKind.MIRROR
    heal = params.with_(fill=fill).resilver_hours(mirror)
    slow = 1.0 / (params.replace_hours + heal)
    if group.kind is VdevKind.DRAID:
        speedup = group.width / (group.draid_data + group.parity)
        seq = params.with_(fill=fill).resilver_hours(False, speedup)
        fast = 1.0 / (params.detect_hours + seq)
        chain = markov.draid(group.width, group.parity, group.draid_spares, lam, fast, slow, slow,
                             parallel=params.parallel_repair)
        return chain, 1.0 / (fast if group.draid_spares else slow)
    avail = _spare_availability(layout, lam, params.replace_hours)
    mu = avail / (params.detect_hours + heal) + (1 - avail) * slow
    n, p = _shape(group)
    return markov.birth_death(n, p, lam, mu, parallel=params.parallel_repair,
                              frailty_variance=frailty_variance), 1.0 / mu


def _critical_flux(group: VdevGroup, lam: float, mttr: float, parallel: bool) -> float:
    """Entries per hour into the state with p disks down: prod_{k<p} (n-k) lam * MTTR^(p-1) [/(p-1)!]."""
    n, p = _shape(group)
    if group.kind is VdevKind.DRAID:
        n = group.width
    # in logarithms: mttr ** 254 of a 255-way mirror overflows a float
    log_flux = sum(math.log((n - k) * lam) for k in range(p)) + (p - 1) * math.log(mttr)
    if parallel:
        log_flux -= math.lgamma(p)
    # each entry needs a failure: never more than all disks' failure rate (the product form
    # holds only while lam x MTTR << 1)
    return math.exp(min(log_flux, math.log(n * lam)))


# A log vdev's loss loses data only if the system also crashes before the transaction groups its
# records cover are written to the pool: about two txgs (zfs_txg_timeout = 5 s each); see
# docs/reliability.md#allocation-classes. Unclean shutdowns per year is an assumption, given apart.
LOG_WINDOW_S = 10.0
CRASHES_PER_YEAR = 2.0


def class_params(group: VdevGroup, params: RiskParams) -> RiskParams:
    """The risk inputs of a special, dedup or log vdev: its own disk size when the layout names one."""
    return params.with_(disk_bytes=group.smallest_bytes) if group.sizes else params


def markov_risk(layout: Layout, params: RiskParams, *, usable_bytes: int, model: str = "zfs",
                class_disk: RiskParams | None = None, crashes_per_year: float = CRASHES_PER_YEAR) -> RiskResult:
    """Engine A under `zfs` or `classic` semantics. Special and dedup vdevs are vdevs of the pool
    (their loss loses it), with the inputs of `class_disk` (default: `params`) and their own disk
    size; log vdevs give a separate term, extra["log"] (docs/reliability.md#allocation-classes)."""
    if model not in ("zfs", "classic"):
        raise ParamError("model", model, "the Markov engine computes zfs or classic")
    if not (math.isfinite(crashes_per_year) and 0 <= crashes_per_year <= 8760):
        raise ParamError("crashes_per_year", f"{crashes_per_year:g}", "give 0 to 8760 unclean shutdowns a year")
    classic = model == "classic"
    hours = [y * HOURS_PER_YEAR for y in params.years]
    # the field model's rate changes with the disks' age: damage accrues per age band, each band for
    # the hours each horizon spends in it (one band, all the hours, when the rate is constant). Disks
    # of another class (a special vdev's) have bands of their own: one accrual per set of bands.
    accrual: dict[tuple, tuple[list[float], list[float]]] = {}  # bands -> per band: damaging episodes
    # per hour and expected bad blocks per hour, pool-wide
    vdevs: list[VdevRisk] = []
    extra_loss_rate = 0.0  # classic: read errors that lose the array, per hour
    ssd = class_disk or params
    members = [("", g, params) for g in layout.groups] + [
        (f"{c.alloc_class}=", c.group, class_params(c.group, ssd)) for c in layout.classes if c.holds_pool_data]
    for prefix, g, vp in members:
        lam = vp.failure_rate_per_hour
        chain, mttr = vdev_chain(g, layout, vp, full_disk=classic)
        mttdl = markov.mean_time_to_loss(chain)
        p_v = markov.loss_probabilities(chain, hours)
        flux = 0.0
        if g.parity > 0:
            flux = _critical_flux(g, lam, mttr, vp.parallel_repair)
        elif g.parity == 0:
            # no redundancy, ever: each scrub reads all the allocated data, and every read error or
            # latent defect it meets is a damaged block (docs/reliability.md#no-redundancy)
            flux = 1.0 / (vp.scrub_days * 24)
        bands = _age_bands(vp)
        band_rates, band_hours = bands
        per_band = [_read_hits(g, vp, classic, rate) for rate in band_rates]
        m_mean, p_hit_mean = _read_hits(g, vp, classic, None)  # at the study rate: the vdev's summary and MTTDL
        damaging = tuple(sum((flux * ph * bh for (_, ph), bh in zip(per_band, hb)), 0.0) for hb in band_hours)
        if classic and g.parity > 0:
            extra_loss_rate += g.count * flux * p_hit_mean
            rate = 1.0 / mttdl + flux * p_hit_mean
            mttdl = 1.0 / rate if rate > 0 else math.inf
            p_v = [1.0 if p >= 1 else -math.expm1(math.log1p(-p) - d) for p, d in zip(p_v, damaging)]
            damaging = tuple(0.0 for _ in damaging)
        else:
            damage_rate, bad_blocks_rate = accrual.setdefault(bands, ([0.0] * len(band_rates), [0.0] * len(band_rates)))
            for b, (m, p_hit) in enumerate(per_band):
                damage_rate[b] += g.count * flux * p_hit
                bad_blocks_rate[b] += g.count * flux * m
        vdevs.append(VdevRisk(prefix + g.token, g.count, mttr, mttdl, tuple(p_v), flux, m_mean, damaging))
    p_loss = tuple(markov.pool_loss_probability([(v.p_loss[i], v.count) for v in vdevs]) for i in range(len(hours)))
    rate = sum(v.count / v.mttdl_hours for v in vdevs)
    mttdl_pool = 1.0 / rate if rate > 0 else math.inf  # each vdev's MTTDL beyond a float's range

    def accrued(i: int, which: int) -> float:  # damaging episodes (0) or bad blocks (1) by horizon i
        return sum((r * h for (_, hours_by), rates in accrual.items() for r, h in zip(rates[which], hours_by[i])), 0.0)
    p_damage = tuple(-math.expm1(-accrued(i, 0)) for i in range(len(hours)))
    bytes_partial = tuple(accrued(i, 1) * params.block_bytes for i in range(len(hours)))
    stored = params.fill * usable_bytes
    bytes_pool = tuple(p * stored for p in p_loss)
    extra = {}
    if layout.of_class("log"):
        extra["log"] = log_risk(layout, class_params(layout.of_class("log")[0], ssd), crashes_per_year)
    return RiskResult(model, "markov", params.years, mttdl_pool, p_loss, p_damage, bytes_partial, bytes_pool,
                      _dominant(layout, p_loss, p_damage, classic, tuple(vdevs)), tuple(vdevs), extra)


def _read_hits(g: VdevGroup, vp: RiskParams, classic: bool, episodes_per_year: float | None) -> tuple[float, float]:
    """(bad records, P(at least one)) met in one critical episode of vdev `g` (for parity 0: one
    scrub), the field model at `episodes_per_year` (None: the study rate) or the datasheet's BER."""
    hits = None  # field model: error episodes met (m is then the bad records)
    latent = 0.0
    if g.parity == 0:
        latent = g.width * vp.lse_per_hour * vp.scrub_days * 24 * vp.fill
        if vp.field:
            hits, m = field_hits(g.width, vp, vp.fill, vp.scrub_days * 24, episodes_per_year)
        else:
            m = g.width * vp.fill * vp.disk_bytes * 8 * vp.ber_per_bit
        m += latent
    else:
        fill = 1.0 if classic else vp.fill
        if vp.field:
            # episodes born since the last scrub on the survivors' part read (docs/reliability.md#field-error-model)
            hits, m = field_hits(_survivors_read(g), vp, fill, vp.scrub_days * 24 / 2, episodes_per_year)
        else:
            m = _surviving_read_bytes(g, vp, fill) * 8 * vp.ber_per_bit
        if vp.lse_per_hour and not classic:
            # live latent errors on the survivors' allocated parts (docs/reliability.md#latent-sector-errors)
            latent = (g.width - g.parity) * vp.lse_per_hour * vp.scrub_days * 24 / 2 * vp.fill
            m += latent
    if hits is not None:
        hits += latent  # --lse-per-hour's defects are one record each
    return m, -math.expm1(-(m if hits is None else hits))


def log_risk(layout: Layout, params: RiskParams, crashes_per_year: float = CRASHES_PER_YEAR) -> dict:
    """P(losing the last seconds of synchronous writes) by params.years: a log vdev is lost (all of
    its disks) and the system crashes within LOG_WINDOW_S after, before the pool holds those writes.
    Not a pool loss: the pool imports without the log (zpool import -m)."""
    lost_per_hour = 0.0
    for g in layout.of_class("log"):
        chain, _ = vdev_chain(g, layout, params)
        lost_per_hour += g.count / markov.mean_time_to_loss(chain)
    crash_in_window = crashes_per_year / HOURS_PER_YEAR * LOG_WINDOW_S / 3600
    rate = lost_per_hour * min(crash_in_window, 1.0)
    return {"p_sync_write_loss": {f"{y:g}": -math.expm1(-rate * y * HOURS_PER_YEAR) for y in params.years},
            "log_vdev_lost_per_year": lost_per_hour * HOURS_PER_YEAR, "crashes_per_year": crashes_per_year,
            "window_s": LOG_WINDOW_S}


def _dominant(layout: Layout, p_loss, p_damage, classic: bool, vdevs: tuple[VdevRisk, ...] = ()) -> str:
    i = min(range(len(p_loss)), key=lambda k: abs(k - len(p_loss) // 2))
    classes = [v for v in vdevs if "=" in v.vdev]
    if classes and p_loss[i] > 0:
        worst = max(vdevs, key=lambda v: 1 - (1 - v.p_loss[i]) ** v.count)
        share = (1 - (1 - worst.p_loss[i]) ** worst.count) / p_loss[i]
        if worst in classes and share > 0.5:
            cls = worst.vdev.split("=")[0]
            return (f"the {cls} vdev ({worst.vdev}): {100 * min(share, 1):.0f} % of P(pool loss); its loss loses "
                    f"the pool, give it more disks")
    if layout.failures_guaranteed == 0:
        return "no redundancy: any failed disk loses the pool"
    if classic:
        return "a second failure or a read error during a full-disk rebuild (classic RAID semantics)"
    if p_damage[i] > p_loss[i]:
        return "damaged blocks: read errors while a vdev has no redundancy left, during its resilver"
    return "pool loss: more disks fail in one vdev than its parity before the resilver ends"


def wintelguy_risk(layout: Layout, params: RiskParams) -> RiskResult:
    """wintelguy.com/raidmttdl.pl: RAID 6 verified, other parities by its pattern (docs/reliability.md#wintelguy)."""
    mtbf = params.mtbf_hours if params.mtbf_hours is not None else HOURS_PER_YEAR / params.afr
    rate = params.resilver_mb_s if params.resilver_mb_s is not None else params.healing_mb_s(False)
    mttr = params.replace_hours + params.disk_bytes / (rate * 1e6) / 3600
    inverse = 0.0
    df_total = lse_total = 0.0
    read_error = 0.0
    for g in layout.groups:
        n, p = _shape(g)
        groups = g.count
        if p == 0:
            df = mtbf / n / groups
            inverse += 1 / df
            df_total += 1 / df
            continue
        # 1/MTTDL_DF = groups x prod_{k<=p}(n-k) x MTTR^p / (p! MTBF^(p+1)), in logarithms: a 255-way
        # mirror's MTBF^255 is beyond a float
        log_df_rate = (math.log(groups) + sum(math.log(n - k) for k in range(p + 1)) + p * math.log(mttr)
                       - math.lgamma(p + 1) - (p + 1) * math.log(mtbf))
        df_rate = _exp_capped(log_df_rate)
        read_error = 1 - (1 - params.ber_per_bit) ** ((n - p) * params.disk_bytes * 8)  # literal double power
        # (1 - ber) rounds to 1 for ber < 1.1e-16 (ssd, nvme): no read error, as the calculator's own
        # arithmetic has it, so the term's MTTDL is unbounded and its rate 0
        lse_rate = 0.0 if read_error <= 0 else _exp_capped(
            math.log(groups) + sum(math.log(n - k) for k in range(p)) + (p - 1) * math.log(mttr)
            + math.log(read_error) - math.lgamma(p) - p * math.log(mtbf))
        inverse += df_rate + lse_rate
        df_total += df_rate
        lse_total += lse_rate
    mttdl = 1 / inverse if inverse > 0 else math.inf
    p_loss = tuple(-math.expm1(-y * HOURS_PER_YEAR / mttdl) for y in params.years)
    zeros = tuple(0.0 for _ in params.years)
    extra = {"wintelguy": {"afr": HOURS_PER_YEAR / mtbf, "mttr_hours": mttr,
                           "mttdl_df_hours": 1 / df_total if df_total else math.inf,
                           "mttdl_lse_hours": 1 / lse_total if lse_total else math.inf,
                           "p_read_error_in_rebuild": read_error}}
    return RiskResult("wintelguy", "closed form", params.years, mttdl, p_loss, zeros, zeros, zeros,
                      "as wintelguy computes it: double failures and read errors in rebuilds", (), extra)


def _exp_capped(log_value: float) -> float:
    """exp() of a rate's logarithm, held below a float's overflow (a rate of 1e304 per hour is
    already 'at once'); underflow to 0 is the honest answer for a rate too small to write."""
    return math.exp(min(log_value, 700.0))


def _binomial(k: int, n: int, p: float) -> float:
    return math.comb(n, k) * (p**k) * ((1 - p) ** (n - k))


def _periods_to_annual(period_loss: float, periods: int) -> float:
    """1 - (1 - p)^periods, as durability.py evaluates it (an alternating series for small p)."""
    if period_loss < 0.1 and periods * period_loss < 1:
        try:
            result, sign = 0.0, 1
            for i in range(1, periods + 1):
                result += sign * math.comb(periods, i) * (period_loss**i)
                sign = -sign
            return result
        except OverflowError:  # comb(periods, i) beyond a float: the series cannot be summed this way
            pass
    # the same quantity without cancellation (the series' terms grow once periods x p >= 1)
    return -math.expm1(periods * math.log1p(-period_loss)) if period_loss < 1 else 1.0


def backblaze_risk(layout: Layout, params: RiskParams) -> RiskResult:
    """Backblaze erasure-coding-durability (docs/reliability.md#backblaze): failures within one replacement period.

    --replace-hours is the whole period to replace and repopulate a disk (its shard_replacement_days x 24)."""
    days = params.replace_hours / 24.0
    if days <= 0 or days > 365:
        raise ParamError("replace_hours", f"{params.replace_hours:g}", "the backblaze model needs 1 hour to 1 year")
    periods = int(365.0 / days)
    per_period = params.afr / periods
    annual_by_group = []
    detail = []
    for g in layout.groups:
        n, p = _shape(g)
        survivors_for_loss = n - p - 1  # at most this many survivors: data lost
        period_loss = sum(_binomial(i, n, 1.0 - per_period) for i in range(0, survivors_for_loss + 1))
        annual = _periods_to_annual(period_loss, periods)
        annual_by_group.append((annual, g.count))
        detail.append({"vdev": g.token, "shards": n, "parity": p, "period_loss": period_loss, "annual_loss": annual})
    annual_pool = markov.pool_loss_probability(annual_by_group)
    p_loss = tuple(-math.expm1(y * math.log1p(-annual_pool)) if annual_pool < 1 else 1.0 for y in params.years)
    mttdl = -HOURS_PER_YEAR / math.log1p(-annual_pool) if 0 < annual_pool < 1 else math.inf
    zeros = tuple(0.0 for _ in params.years)
    extra = {"backblaze": {"periods_per_year": periods, "days_per_period": 365.0 / periods,
                           "period_failure_rate": per_period, "annual_loss": annual_pool, "vdevs": detail}}
    return RiskResult("backblaze", "closed form", params.years, mttdl, p_loss, zeros, zeros, zeros,
                      "as Backblaze computes it: more failures than parity within one replacement period", (), extra)


def compute_risk(layout: Layout, params: RiskParams, *, usable_bytes: int, model: str = "zfs") -> RiskResult:
    if model in ("zfs", "classic"):
        return markov_risk(layout, params, usable_bytes=usable_bytes, model=model)
    if model == "wintelguy":
        return wintelguy_risk(layout, params)
    if model == "backblaze":
        return backblaze_risk(layout, params)
    raise ParamError("model", model, f"use one of {', '.join(MODELS)}")
