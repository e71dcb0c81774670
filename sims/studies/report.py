"""The run folder of a study and its self-contained ``report.html``.

:func:`write_folder` writes, in a folder of its own (``<out>/<name>-<seed>-<YYYYmmdd-HHMMSS>`` by default,
as Hydra does):

* ``study.toml``: the resolved study file (every default filled in): ``python -m sims study study.toml``
  reproduces the run bitwise on the same machine and package version;
* ``results.parquet`` (``results.csv`` and ``results.units.json`` without pyarrow): the results table, one
  row per vehicle, with the units of its columns (:mod:`sims.studies.table`);
* ``summary.json``: the package version, run date (UTC) and host, seed, the time of every phase (prepare,
  set-up, compile, run, journal, estimator, statistics, gradients, write: ``timing``, whose
  ``wall_s`` runs to this file's writing, :mod:`sims.studies._progress`), the column units, every statistic
  with its interval and flags (:mod:`sims.studies.statistics`; ``population``: the rows they are taken
  over) and the sensitivities (:mod:`sims.studies.sensitivity`); written after the plots and the report;
* ``plots/*.png``: a histogram per value metric (with its percentiles and their intervals), the rates with
  their Clopper-Pearson intervals, the convergence of every metric's estimate and interval against the
  number of runs, the Sobol' indices and the pathwise gradients when computed;
* ``report.html``: one page with the tables and every plot embedded (base64 PNG), to open in a browser;
* ``event.png`` with a failure event: its probability and interval against the vehicle runs;
* ``COMPLETE``: written last, when every file above is in place (each written atomically: a temporary
  file, fsync, rename).  A folder without it is not a finished study (killed, out of disk):
  :func:`is_complete`.  While the study runs, ``chunks/`` holds every finished batch
  (:mod:`sims.studies.journal`): a rerun on the unfinished folder resumes from there (:func:`start_folder`);
  it is removed once the folder is complete.
"""

from __future__ import annotations

import base64
import html
import json
import math
import shutil
import time
from pathlib import Path

import numpy as np

from jaxtire.validation import ValidationError
from sims.run.longrun import atomic_write
from sims.studies import events, sensitivity, table
from sims.studies import statistics as stats
from sims.studies._progress import PHASES
from sims.studies.study import Study, StudyResult, dumps


def _plain(x):
    """JSON-ready: numpy scalars and arrays as Python numbers and lists; non-finite floats as strings."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, np.ndarray)):
        return [_plain(v) for v in (x.tolist() if isinstance(x, np.ndarray) else x)]
    if isinstance(x, (np.floating, float)):
        f = float(x)
        return f if math.isfinite(f) else ("inf" if f > 0 else "-inf" if f < 0 else "nan")
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # optional dependency: only the plots need it

    return plt


def plots(result: StudyResult, folder: Path) -> list[Path]:
    """Write the PNG plots of ``result`` under ``folder``; returns their paths."""
    plt = _pyplot()
    folder.mkdir(parents=True, exist_ok=True)
    s = result.summary
    paths: list[Path] = []
    st = s["statistics"]
    values = [m for m, k in result.kinds.items() if k == "value"]
    flags = [m for m, k in result.kinds.items() if k == "flag"]
    keep = result.population()
    for m in values:
        x = np.asarray(result.columns[m], float)[keep]
        fin = x[np.isfinite(x)]
        fig, ax = plt.subplots(figsize=(6, 3.6))
        if fin.size:
            ax.hist(fin, bins=min(60, max(5, int(math.sqrt(fin.size)))), color="#4c72b0", alpha=0.8)
        for name, d in st[m]["percentiles"].items():
            if math.isfinite(d["value"]):
                ax.axvline(d["value"], color="k", lw=1)
                lo, hi = (v if math.isfinite(v) else d["value"] for v in (d["low"], d["high"]))
                ax.axvspan(lo, hi, color="orange", alpha=0.25)
                ax.text(d["value"], ax.get_ylim()[1] * 0.95, name, ha="center", va="top", fontsize=8)
        unit = s["metrics"][m]["unit"]
        ax.set_xlabel(f"{m} [{unit}]")
        ax.set_ylabel("vehicles")
        ax.set_title(f"{m}: n = {x.size}, percentiles with 95 % intervals (orange)")
        paths.append(_save(fig, folder / f"hist_{m}.png", plt))
    if flags:
        fig, ax = plt.subplots(figsize=(6, 0.6 + 0.5 * len(flags)))
        for i, m in enumerate(flags):
            r = st[m]
            ax.errorbar(r["rate"], i, xerr=[[r["rate"] - r["low"]], [r["high"] - r["rate"]]], fmt="o", capsize=4)
            text = f"{r['rate']:.3g} [{r['low']:.3g}, {r['high']:.3g}]"
            ax.annotate(
                text,
                (r["rate"], i),
                xytext=(0, 7),
                textcoords="offset points",
                fontsize=8,
                ha="left" if r["rate"] < 0.5 else "right",
            )
        ax.set_yticks(range(len(flags)), flags)
        ax.set_ylim(-0.6, len(flags) - 0.3)
        ax.set_xlim(-0.06, 1.06)
        ax.set_xlabel("rate (Clopper-Pearson 95 % interval)")
        paths.append(_save(fig, folder / "rates.png", plt))
    ev = s.get("event")
    if ev and ev["history"]:
        h = np.asarray(ev["history"], float)
        fig, ax = plt.subplots(figsize=(6, 3.2))
        lo = np.maximum(h[:, 2], 1e-300)
        ax.errorbar(
            h[:, 0],
            h[:, 1],
            yerr=[h[:, 1] - np.minimum(lo, h[:, 1]), h[:, 3] - h[:, 1]],
            fmt="o-",
            capsize=4,
            label=f"p and its 95 % interval ({ev['method']})",
        )
        if len(h) > 1:
            ax.fill_between(h[:, 0], lo, h[:, 3], alpha=0.2)
        else:  # one point (plain Monte Carlo): a factor 3 either side, not a log axis around nothing
            ax.set_xlim(h[0, 0] / 3.0, h[0, 0] * 3.0)
        if (h[:, 1] > 0).any():
            ax.set_yscale("log")
            pos = h[:, 2:4][h[:, 2:4] > 0]
            ax.set_ylim(pos.min() / 1.5, pos.max() * 1.5)  # every interval whole
        ax.set_xscale("log")
        ax.set_xlabel("vehicle runs")
        ax.set_ylabel(f"P[{ev['when']}]")
        ax.set_title(f"P[{ev['when']}] = {ev['p']:.3g} [{ev['low']:.3g}, {ev['high']:.3g}]")
        ax.legend(fontsize=8, loc="best")
        paths.append(_save(fig, folder / "event.png", plt))
    if not result.kinds:  # a rare-event estimator's rows are not a population sample: no histograms
        return paths
    fig, axes = plt.subplots(len(result.kinds), 1, figsize=(6, 2.4 * len(result.kinds)), squeeze=False)
    for ax, (m, kind) in zip(axes[:, 0], result.kinds.items(), strict=True):
        c = stats.convergence(np.asarray(result.columns[m])[keep], kind)
        ax.plot(c["n"], c["estimate"], "o-", label="rate" if kind == "flag" else "mean")
        ax.fill_between(c["n"], c["low"], c["high"], alpha=0.3)
        if kind == "value":
            ax.plot(c["n"], c["quantile"], "s--", label="median")
            ql = [v if math.isfinite(v) else np.nan for v in c["q_low"]]
            qh = [v if math.isfinite(v) else np.nan for v in c["q_high"]]
            ax.fill_between(c["n"], ql, qh, alpha=0.2)
        ax.set_xscale("log")
        ax.set_ylabel(m)
        ax.legend(fontsize=8)
    axes[-1, 0].set_xlabel("runs n (estimate and 95 % interval of the first n runs)")
    paths.append(_save(fig, folder / "convergence.png", plt))
    sob = s["sensitivity"].get("sobol", {})
    for m, res in sob.items():
        names = sensitivity.sobol_factors(res)
        if not names:
            continue
        fig, ax = plt.subplots(figsize=(6, 0.8 + 0.5 * len(names)))
        y = np.arange(len(names))
        for off, key, lab in ((-0.18, "first", "first order S_i"), (0.18, "total", "total S_Ti")):
            v = np.array([res[k][key] for k in names])
            err = np.array([[res[k][key] - res[k][f"{key}_low"], res[k][f"{key}_high"] - res[k][key]] for k in names]).T
            ax.barh(y + off, v, height=0.34, xerr=np.clip(err, 0, None), label=lab, capsize=3)
        ax.set_yticks(y, names)
        ax.set_xlabel(f"Sobol' index of {m} (95 % bootstrap interval)")
        ax.legend(fontsize=8)
        paths.append(_save(fig, folder / f"sobol_{m}.png", plt))
    for m, res in s["sensitivity"].get("morris", {}).items():
        names = res.get("ranking", [])
        if not names:
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        mu, sd = (np.array([res[k][key] for k in names]) for key in ("mu_star", "sigma"))
        ax.scatter(mu, sd)
        for k, x, y in zip(names, mu, sd, strict=True):
            ax.annotate(k, (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
        ax.set_xlabel(f"mu* of {m} [{s['metrics'][m]['unit']} per unit of the factor's probability scale]")
        ax.set_ylabel("sigma (non-linear / interacting)")
        ax.set_title(f"Morris screening of {m}")
        paths.append(_save(fig, folder / f"morris_{m}.png", plt))
    for m, per in result.gradients.items():
        fig, ax = plt.subplots(figsize=(7, 1.0 + 0.6 * len(per)))
        ax.boxplot([elasticity(result, m, p, g) for p, g in per.items()], orientation="horizontal")
        ax.set_yticks(range(1, len(per) + 1), list(per))
        ax.axvline(0.0, color="k", lw=0.5)
        ax.set_xlabel(f"elasticity of {m}: % change per % change of the parameter, per vehicle (pathwise)")
        paths.append(_save(fig, folder / f"gradients_{m}.png", plt))
    return paths


def elasticity(result: StudyResult, metric: str, path: str, grad) -> np.ndarray:
    """``(d m / d x) x / m`` of the first vehicles (the ones with gradients): unitless, so the factors of
    one metric share an axis (``d m / d x`` itself has the unit of ``m`` over each factor's)."""
    g = np.asarray(grad, np.float64)
    k = g.shape[0]
    x = np.asarray(result.columns[path], np.float64)[:k]
    m = np.asarray(result.columns[metric], np.float64)[:k]
    with np.errstate(divide="ignore", invalid="ignore"):
        e = g * x / m
    return e[np.isfinite(e)]


#: Captions of the report's plots, by the start of their file name.
CAPTIONS = {
    "hist": "Distribution of {m} over the runs, with its percentiles (lines) and their 95 % intervals (orange)",
    "rates": "Rates of the flags with their Clopper-Pearson 95 % intervals",
    "convergence": "Each metric's estimate and 95 % interval against the number of runs",
    "event": "The event's probability and 95 % interval against the vehicle runs",
    "sobol": "Sobol' indices of {m}: first order and total, with 95 % bootstrap intervals",
    "morris": "Morris screening of {m}: mu* (influence) against sigma (non-linearity, interactions)",
    "gradients": "Pathwise sensitivities of {m} as elasticities (% per %), per vehicle",
}


def caption(path: Path) -> str:
    """A plot's caption (:data:`CAPTIONS`) from its file name ``<kind>[_<metric>].png``."""
    kind, _, m = path.stem.partition("_")
    return CAPTIONS.get(kind, path.stem).format(m=m or "")


def _save(fig, path: Path, plt) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=150)  # shown up to 900 px wide (the page style): sharp text
    plt.close(fig)
    return path


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else ("&infin;" if v > 0 else "-&infin;" if v < 0 else "nan")
    return html.escape(str(v))


#: Rows per metric (worst first) and failed rows the report lists with their replay commands.
REPLAY_ROWS = 5


def _replay_rows(result: StudyResult) -> list[tuple[str, int, str]]:
    """``[(why, row, value)]``: the failed rows (the event's, the furthest past its threshold first, else
    ``passed`` = 0; up to :data:`REPLAY_ROWS`, ``why`` saying how many failed) and each value metric's most
    extreme rows (largest, smallest), for the report's replay list."""
    cols = result.columns
    out: list[tuple[str, int, str]] = []
    if "run" not in cols or result.study.limit:
        return out
    run = np.asarray(cols["run"])
    ev = result.summary.get("event")
    shown = lambda why, rows: why + (f" ({REPLAY_ROWS} of {rows.size})" if rows.size > REPLAY_ROWS else "")  # noqa: E731
    if "failed" in cols and ev:  # the event's rows, the furthest past the threshold first
        rows = np.flatnonzero(np.asarray(cols["failed"], bool))
        m = ev.get("metric")
        fmt = lambda i: "" if m not in cols else f"{float(cols[m][i]):.4g}"  # noqa: E731
        if m in cols:  # most negative limit state first (a flag's failures all alike: their order stays)
            event = events.Event(ev["when"], m, ev["op"], ev["threshold"])
            g = np.asarray(event.limit_state(np.asarray(cols[m], np.float64)[rows]))
            rows = rows[np.argsort(g, kind="stable")]
        out += [(shown(f"event: {ev['when']}", rows), int(run[i]), fmt(i)) for i in rows[:REPLAY_ROWS]]
    elif "passed" in cols:
        rows = np.flatnonzero(np.asarray(cols["passed"], np.float64) < 0.5)
        out += [(shown("not passed", rows), int(run[i]), "") for i in rows[:REPLAY_ROWS]]
    for m, kind in result.kinds.items():
        if kind != "value" or m not in cols:
            continue
        x = np.asarray(cols[m], np.float64)
        ok = np.flatnonzero(np.isfinite(x))
        if ok.size == 0:
            continue
        order = ok[np.argsort(x[ok], kind="stable")]
        out += [(f"largest {m}", int(run[i]), f"{x[i]:.4g}") for i in order[::-1][:2]]
        out += [(f"smallest {m}", int(run[i]), f"{x[i]:.4g}") for i in order[:1]]
    return out


def _opening(result: StudyResult) -> str:
    """The report's first lines: what ran (a plain description), the criteria and their verdicts, and the
    rows worth a look with the command that replays each (:mod:`sims.studies.replay`)."""
    esc = html.escape
    s = result.summary
    parts = [f"<p>{esc(s.get('description', ''))}</p>"]
    crit = s.get("criteria") or {}
    if crit.get("criteria"):
        colour = {"pass": "#2a7d2a", "fail": "#b22222", "undecided": "#b8860b"}
        rows = "".join(
            f"<tr><td>{esc(c['text'])}</td><td>{_fmt(c['estimate'])} [{_fmt(c['low'])}, {_fmt(c['high'])}]</td>"
            f"<td style='color:{colour[c['verdict']]}'><b>{c['verdict']}</b></td><td>{esc(c['note'])}</td></tr>"
            for c in crit["criteria"]
        )
        parts.append(
            f"<h2>Verdict: <span style='color:{colour[crit['verdict']]}'>{crit['verdict']}</span></h2>"
            "<table><tr><th>criterion</th><th>estimate [95 %]</th><th>verdict</th><th>why</th></tr>"
            f"{rows}</table>"
        )
    replays = _replay_rows(result)
    if replays:
        where = esc(str(result.folder or "<folder>"))
        items = "".join(
            f"<tr><td>{esc(why)}</td><td>{r}</td><td>{esc(v)}</td>"
            f"<td><code>python -m sims study replay {where} --row {r}</code> "
            f"(<a href='replays/row-{r}/sheet.png'>sheet</a>)</td></tr>"
            for why, r, v in replays
        )
        parts.append(
            "<h2>Rows to look at</h2><p>Each replays bitwise with every channel recorded; the sheet link works "
            "once the replay has run.</p><table><tr><th>why</th><th>row</th><th>value</th><th>replay</th></tr>"
            f"{items}</table>"
        )
    return "\n".join(parts)


def html_page(result: StudyResult, images: list[Path]) -> str:
    """The self-contained HTML report (plots as base64 ``data:`` URIs)."""
    s = result.summary
    esc = html.escape
    rows = []
    for m, d in s["statistics"].items():
        unit = esc(s["metrics"][m]["unit"])
        if d["kind"] == "flag":
            extra = (
                f" (one-sided 95 % upper bound {_fmt(d['upper_one_sided'])})"
                if d["upper_one_sided"] is not None
                else ""
            )
            rows.append(
                f"<tr><td>{esc(m)}</td><td>rate</td><td>{d['n']}</td><td>{_rate_text(d)}{extra}</td><td></td></tr>"
            )
            continue
        pct = _percentiles_text(d)
        rows.append(
            f"<tr><td>{esc(m)} [{unit}]</td><td>value</td><td>{d['n']}</td><td>mean {_fmt(d['mean'])} "
            f"&plusmn; {_fmt(d['sem'])} (s.e.)</td><td>{pct}</td></tr>"
        )
    flags = [f"<li>{esc(m)}: {esc(f)}</li>" for m, d in s["statistics"].items() for f in d.get("flags") or []]
    imgs = []
    for p in images:
        data = base64.b64encode(p.read_bytes()).decode("ascii")
        imgs.append(
            f'<figure><img alt="{esc(caption(p))}" src="data:image/png;base64,{data}"><figcaption>{esc(caption(p))}'
            "</figcaption></figure>"
        )
    t = s["timing"]
    phases = ", ".join(f"{k} {t[f'{k}_s']:.2f} s" for k in (*PHASES, "other") if t.get(f"{k}_s", 0.0) > 0.0)
    head = (
        f"<p>scenario <b>{esc(s['scenario'])}</b>, {s['runs']} runs ({s['grid_cells']} grid cells), design "
        f"{esc(s['design'])}, seed {s['seed']}, jaxtire {esc(s['version'])}, {esc(s['dtype'])} on "
        f"{esc(str(s['backend']))} ({esc(str(s['devices']))} devices), run {esc(str(s.get('date', '')))} on "
        f"{esc(str(s.get('host', '')))}; {t['wall_s']:.1f} s until the report ({esc(phases)}).</p>"
        + _population_html(s)
        + _factors_html(result)
    )
    sob_html = _sobol_html(s) + _morris_html(s)
    units = s.get("units", {})
    grad_rows = [
        f"<tr><td>{esc(m)}</td><td>{esc(p)}</td><td>{esc(_gradient_unit(units, m, p))}</td><td>{v['n']}</td>"
        f"<td>{_fmt(v['mean'])}</td><td>{_fmt(v['std'])}</td>"
        f"<td>{_fmt(v['p5'])} / {_fmt(v['p50'])} / {_fmt(v['p95'])}</td></tr>"
        for m, per in s["sensitivity"].get("gradients", {}).items()
        for p, v in per.items()
    ]
    if grad_rows:
        sob_html += (
            "<h2>Pathwise gradients (d metric / d parameter per vehicle, jax.vjp)</h2><table><tr><th>metric</th>"
            "<th>parameter</th><th>unit</th><th>vehicles</th><th>mean</th><th>std</th><th>p5 / p50 / p95</th></tr>"
            + "".join(grad_rows)
            + "</table>"
        )
    ev = s.get("event")
    if ev:
        cells = "".join(
            f"<tr><td>{esc(', '.join(f'{k} = {v:g}' for k, v in c['values'].items()))}</td><td>{c['runs']}</td>"
            f"<td>{_fmt(c['p'])} [{_fmt(c['low'])}, {_fmt(c['high'])}]</td></tr>"
            for c in ev.get("cells") or []
        )
        ess = f", effective sample size {_fmt(ev['ess'])}" if ev.get("ess") is not None else ""
        sob_html = (
            f"<h2>Event: P[{esc(ev['when'])}]</h2><p><b>{_fmt(ev['p'])}</b> [{_fmt(ev['low'])}, {_fmt(ev['high'])}] "
            f"(95 %; standard error {_fmt(ev['se'])}, relative half-width {_fmt(ev['half_width'])}"
            f"{', target ' + _fmt(ev['target']) if ev.get('target') else ', no target: the whole budget'}) from {ev['runs']} vehicle runs of a budget of {ev['budget']}, by "
            f"{esc(ev['method'])}{ess}.</p>"
            + (f"<table><tr><th>grid cell</th><th>runs</th><th>p [95 %]</th></tr>{cells}</table>" if cells else "")
            + sob_html
        )
    study_file = esc(dumps(result.study))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(result.study.name)}: Monte Carlo study</title>
<style>body{{font-family:sans-serif;max-width:70em;margin:1em auto;padding:0 1em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:3px 6px;font-size:90%}}figure{{margin:1.5em 0}}figure img{{display:block;width:100%;max-width:900px;height:auto}}figcaption{{font-style:italic}}pre{{background:#f4f4f4;padding:6px}}</style>
</head><body>
<h1>{esc(result.study.name)}</h1>
{_opening(result)}
{head}
{_limit_html(result)}{_lap_html(result)}
<h2>Statistics (95 % intervals; percentile intervals from order statistics, distribution-free)</h2>
<table><tr><th>metric</th><th>kind</th><th>n</th><th>estimate</th><th>percentiles [interval]</th></tr>
{"".join(rows)}</table>
<h2>Flags</h2><ul>{"".join(flags) or "<li>none</li>"}</ul>
{sob_html}
<h2>Plots</h2>
{"".join(imgs)}
<h2>Study file</h2><pre>{study_file}</pre>
</body></html>
"""


def _rate_text(d: dict) -> str:
    """``rate [low, high]`` of a flag's statistics."""
    return f"{_fmt(d['rate'])} [{_fmt(d['low'])}, {_fmt(d['high'])}]"


def _percentiles_text(stat: dict, unit: str = "", kmh: bool = False) -> str:
    """``p5 a [lo, hi]; p50 ...`` of a metric's statistics (``unit`` after each value, km/h beside m/s when
    ``kmh``; a percentile with too few runs for its interval marked)."""
    out = []
    for k, v in (stat.get("percentiles") or {}).items():
        label = f" {unit}" if unit else ""
        if kmh and v["value"] is not None and math.isfinite(v["value"]):
            label += f" ({v['value'] * 3.6:.1f} km/h)"
        out.append(
            f"{html.escape(k)} {_fmt(v['value'])}{label} [{_fmt(v['low'])}, {_fmt(v['high'])}]"
            + (" <b>too few runs</b>" if v.get("flag") else "")
        )
    return "; ".join(out)


def _limit_html(result: StudyResult) -> str:
    """The limit search's section (issue 37 item 2): what was searched, the limit's percentiles with their
    intervals, and the vehicles whose limit lies outside the searched range."""
    lim = result.summary.get("limit")  # the [limit] table with its defaults
    if not lim or "limit" not in result.columns:
        return ""
    s, st = result.summary, result.summary["statistics"]
    unit = s.get("units", {}).get("limit", "")
    kmh = unit == "m/s"
    x = np.asarray(result.columns["limit"], np.float64)
    xf = np.asarray(result.columns.get("limit_fail", np.full_like(x, np.nan)), np.float64)
    none = int(np.sum(np.isnan(x)))  # failed already at the lowest value
    all_ = int(np.sum(np.isinf(xf)))  # passed up to the highest value
    rng = f"{_fmt(lim['low'])} to {_fmt(lim['high'])} {unit}"
    if kmh:
        rng += f" ({lim['low'] * 3.6:.0f} to {lim['high'] * 3.6:.0f} km/h)"
    return (
        f"<h2>Limit search: the highest {html.escape(lim['setting'])} each vehicle passed</h2>"
        f"<p>Searched {rng} by bisection to {_fmt(lim['tol'])} {unit} (at most {lim['max_iter']} steps) for each of "
        f"{x.size} vehicles. Limit: {_percentiles_text(st.get('limit', {}), unit, kmh) or 'no percentiles'}. "
        f"{none} vehicle(s) failed already at {_fmt(lim['low'])} {unit} (limit nan), {all_} passed up to "
        f"{_fmt(lim['high'])} {unit} (limit_fail inf): widen the range if either matters.</p>"
    )


def _lap_html(result: StudyResult) -> str:
    """The transient lap's section (issue 37 item 2): laps completed, spins, time off track, lap time."""
    if result.summary.get("scenario") != "lap" or "lap_time" not in result.columns:
        return ""
    st = result.summary["statistics"]
    rate = lambda m: _rate_text(st[m]) if m in st and "rate" in st[m] else "-"  # noqa: E731
    off = np.asarray(result.columns.get("time_off", []), np.float64)
    circuit = (result.study.options or {}).get("circuit", "the built-in oval")
    return (
        f"<h2>Lap: {html.escape(str(circuit))}</h2><p>Laps completed {rate('finished')}, spins {rate('spun')}, "
        f"passed (completed, no wheel off, no spin) {rate('passed')}; {int(np.sum(off > 0))} of {off.size} "
        f"vehicles had a wheel beyond an edge (longest {_fmt(float(np.max(off)) if off.size else None)} s). Lap "
        f"time: {_percentiles_text(st.get('lap_time', {}), 's') or 'no percentiles'}. Each vehicle drives its own "
        "QSS profile at the scenario's grip (sims.scenarios.lap).</p>"
    )


def _gradient_unit(units: dict, metric: str, param: str) -> str:
    """The unit of ``d metric / d param`` from the table's column units (a factor column is unitless)."""
    mu, pu = units.get(metric, "-"), units.get(param, "-")
    if pu == "-":
        return mu if mu != "-" else "-"
    num = "1" if mu == "-" else mu
    return f"{num} / ({pu})" if (" " in pu or "/" in pu) else f"{num} / {pu}"


def _population_html(s: dict) -> str:
    """The rows the statistics are taken over, when not every row (``summary["population"]``)."""
    pop = s.get("population") or {}
    if not pop or pop.get("rows") == pop.get("of"):
        return ""
    return f"<p>Statistics over {pop['rows']} of {pop['of']} rows: {html.escape(pop['method'])}.</p>"


def _factors_html(result: StudyResult) -> str:
    """The varied factors: path, distribution, by value or factor, unit, and the range of the values drawn
    (absolute, in the unit, beside a factor's range)."""
    units = result.summary.get("units", {})
    rows = []
    for v in result.study.vary:
        x = np.asarray(result.columns[v.path], float)
        absolute = [k for k in result.columns if k.startswith(f"{v.path} [") or k in _also_columns(v, result)]
        abs_text = "; ".join(
            f"{html.escape(k)}: {_fmt(float(np.min(result.columns[k])))} .. {_fmt(float(np.max(result.columns[k])))}"
            for k in absolute
        )
        rows.append(
            f"<tr><td>{html.escape(v.path)}</td><td>{html.escape(v.dist)}</td><td>{html.escape(v.by)}</td>"
            f"<td>{html.escape(units.get(v.path, ''))}</td><td>{_fmt(float(x.min()))} .. {_fmt(float(x.max()))}</td>"
            f"<td>{abs_text}</td></tr>"
        )
    if not rows:
        return ""
    return (
        "<h2>Varied factors</h2><table><tr><th>path</th><th>distribution</th><th>by</th><th>unit</th>"
        "<th>drawn</th><th>absolute values [unit]</th></tr>" + "".join(rows) + "</table>"
    )


def _also_columns(v, result: StudyResult) -> list[str]:
    """The absolute-value columns of a factor's ``also`` paths."""
    return [k for q in v.also for k in result.columns if k.startswith(f"{q} [")]


def _interval(v: dict, key: str) -> str:
    return f"{_fmt(v[key])} [{_fmt(v[f'{key}_low'])}, {_fmt(v[f'{key}_high'])}]"


def _sobol_html(s: dict) -> str:
    """The Sobol' indices' table (and the second-order one), with the clipped bounds named."""
    esc = html.escape
    sob = s["sensitivity"].get("sobol", {})
    rows, pairs, notes = [], [], []
    for m, res in sob.items():
        for k in sensitivity.sobol_factors(res):
            rows.append(
                f"<tr><td>{esc(m)}</td><td>{esc(k)}</td><td>{_interval(res[k], 'first')}</td>"
                f"<td>{_interval(res[k], 'total')}</td></tr>"
            )
        for p in res.get("second_order", []):
            pairs.append(
                f"<tr><td>{esc(m)}</td><td>{esc(' x '.join(p['factors']))}</td><td>{_interval(p, 'second')}</td></tr>"
            )
        notes += [
            f"{esc(m)}: {esc(c['factor'])} {esc(c['bound'])} {_fmt(c['raw'])} clipped" for c in res.get("clipped", [])
        ]
    if not rows:
        return ""
    out = (
        "<h2>Sobol' indices (95 % BCa bootstrap intervals, clipped to [0, 1])</h2><table><tr><th>metric</th>"
        "<th>factor</th><th>first order</th><th>total</th></tr>" + "".join(rows) + "</table>"
    )
    if pairs:
        out += (
            "<h3>Second-order indices</h3><table><tr><th>metric</th><th>factors</th><th>S_jk</th></tr>"
            + "".join(pairs)
            + "</table>"
        )
    if notes:
        out += "<p>Clipped interval bounds: " + "; ".join(notes) + ".</p>"
    return out


def _morris_html(s: dict) -> str:
    """The Morris screening table: per metric the factors by ``mu*`` with ``mu``, ``mu*`` (95 % t intervals)
    and ``sigma``."""
    esc = html.escape
    rows = [
        f"<tr><td>{esc(m)} [{esc(s['metrics'][m]['unit'])}]</td><td>{esc(k)}</td><td>{_interval(res[k], 'mu_star')}</td>"
        f"<td>{_interval(res[k], 'mu')}</td><td>{_fmt(res[k]['sigma'])}</td></tr>"
        for m, res in s["sensitivity"].get("morris", {}).items()
        for k in res.get("ranking", [])
    ]
    if not rows:
        return ""
    return (
        "<h2>Morris screening (elementary effects per unit of each factor's probability scale; 95 % t intervals)"
        "</h2><table><tr><th>metric</th><th>factor</th><th>mu*</th><th>mu</th><th>sigma</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _new_folder(study: Study, out) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = Path(out) / f"{study.name}-{study.seed}-{stamp}"
    k = 1
    while folder.exists():
        folder = Path(out) / f"{study.name}-{study.seed}-{stamp}-{k}"
        k += 1
    return folder


def start_folder(study: Study, out="studies", folder=None) -> Path:
    """The run folder of ``study`` before it runs: a new ``<out>/<name>-<seed>-<time>``, or exactly ``folder``
    with ``study.toml`` written first.  An unfinished ``folder`` of the same study is resumed (its
    :data:`CHUNKS` kept); one of another study is an error; a finished one is rerun from scratch."""
    path = _new_folder(study, out) if folder is None else Path(folder)
    text = dumps(study)
    old = path / "study.toml"
    if old.is_file() and not is_complete(path) and old.read_text() != text:
        raise ValidationError(
            f"{path}: an unfinished run of another study (its study.toml differs): resume it with "
            f"'python -m sims study {path}', or give another folder"
        )
    if is_complete(path):
        shutil.rmtree(path / CHUNKS, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    (path / COMPLETE).unlink(missing_ok=True)  # (re)running a folder: not complete until the end
    atomic_write(str(old), text.encode())
    return path


def write_folder(result: StudyResult, out="studies", folder=None, fmt: str = "auto") -> Path:
    """Write the run folder of ``result`` (module docstring) under ``out`` (or exactly ``folder``); returns it
    and sets ``result.folder``.  The journal's :data:`CHUNKS` are removed once the folder is complete."""
    folder = _new_folder(result.study, out) if folder is None else Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / COMPLETE).unlink(missing_ok=True)  # rewriting a folder: not complete until the end
    with result.phases.phase("write", desc="write the run folder"):
        atomic_write(str(folder / "study.toml"), dumps(result.study).encode())
        path = table.write(result.columns, folder / "results", fmt, result.summary.get("units"))
        result.summary["results"] = path.name
        images = plots(result, folder / "plots")
        result.folder = folder  # (the report's replay commands name it)
        atomic_write(str(folder / "report.html"), html_page(result, images).encode())
    result.summary["timing"] = dict(result.summary.get("timing", {}), **result.phases.timing(PHASES))
    atomic_write(str(folder / "summary.json"), json.dumps(_plain(result.summary), indent=1).encode())
    rows = len(next(iter(result.columns.values()), ()))
    atomic_write(str(folder / COMPLETE), json.dumps({"results": path.name, "rows": rows}).encode())
    shutil.rmtree(folder / CHUNKS, ignore_errors=True)
    result.folder = folder
    return folder


#: The marker file of a finished run folder (written last).
COMPLETE = "COMPLETE"
#: The journal's folder inside a run folder (every batch of an unfinished run; :mod:`sims.studies.journal`).
CHUNKS = "chunks"


def is_complete(folder) -> bool:
    """Whether ``folder`` holds a finished study (its :data:`COMPLETE` marker, written after every file)."""
    return (Path(folder) / COMPLETE).is_file()


__all__ = [
    "CAPTIONS",
    "CHUNKS",
    "COMPLETE",
    "caption",
    "elasticity",
    "html_page",
    "is_complete",
    "plots",
    "start_folder",
    "write_folder",
]
