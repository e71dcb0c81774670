"""Metrics a study file defines from recorded channels, reduced inside the fleet program (no trajectory stored).

A study file adds metrics with ``[[metric]]`` tables::

    [[metric]]
    name = "peak_deviation"        # the column and metric name
    channel = "lane.deviation"     # any channel (below)
    op = "peak_abs"                # peak, min, peak_abs, final, mean, integral, time_above
    where = "lane.inside"          # optional: only the steps where this channel is > 0.5
    window = [0.0, 10.0]           # optional: only the steps with window[0] <= t <= window[1] [s]
    threshold = 0.0                # time_above: the seconds the channel spends above it
    unit = "m"

Channels (the names of :mod:`sims.studies.replay`'s recordings, so a replayed row shows what a metric
saw): ``t`` [s]; ``state.<field>`` (:class:`sims.vehicles.params.VehicleState`: ``x``, ``y``, ``yaw``,
``vx``, ``vy``, ``yaw_rate``, per wheel ``omega[i]`` ...), ``state.body.<field>`` (the full vehicle's
:class:`sims.vehicles.full.BodyState`: ``z``, ``roll``, ``pitch``, per corner ``zu[i]`` ...; ``model = "full"``),
``controls.<field>`` (``steer``, ``throttle``,
``brake[i]``), ``telemetry.<field>`` (:class:`sims.vehicles.core.Telemetry`: ``fz[i]``, ``fx[i]``, ``fy[i]``,
``kappa[i]``, ``alpha[i]``, ``ax``, ``ay`` ...), each at the start of the step; and the scenario's own
channels (``Scenario.channels(setup)``), e.g. the ISO 3888 tracks' ``lane.deviation`` [m] (the CG's lateral
offset from the centre line of the lane it is in, 0 outside the lanes) and ``lane.inside`` (1 in a lane).

Reductions over the steps that count (``where`` and ``window``, up to the step on which the scenario is
done for that vehicle: the metrics do not depend on how long the rest of the fleet runs), with the step
length ``dt``::

    peak = max x    min = min x    peak_abs = max |x|    final = x at the last step that counts
    mean = sum x dt / sum dt       integral = sum x dt    time_above = sum dt [x > threshold]

``NaN`` where no step counted (``integral`` and ``time_above``: 0).  ``peak``, ``min``, ``peak_abs``,
``mean``, ``integral`` are smooth almost everywhere (pathwise gradients); ``final`` and ``time_above`` are
not.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxtire.validation import ValidationError, check_choice
from sims.scenarios.base import Metric
from sims.studies.variation import Wrapping
from sims.vehicles.core import Telemetry
from sims.vehicles.full import BodyState
from sims.vehicles.params import Controls, VehicleState

OPS = ("peak", "min", "peak_abs", "final", "mean", "integral", "time_above")
_SMOOTH = {"peak", "min", "peak_abs", "mean", "integral"}
#: The channel groups and their fields (the state's sub-states ``drive`` and ``body`` are not channels; the
#: body's fields are, as the group ``state.body``: the names replay's recordings give them).
_GROUPS: dict[str, tuple[str, ...]] = {
    "state": tuple(f for f in VehicleState._fields if f not in ("drive", "body")),
    "state.body": BodyState._fields,
    "controls": Controls._fields,
    "telemetry": Telemetry._fields,
}
_NAME = re.compile(r"^(state\.body|[A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?(?:\[(\d+)\])?$")
_KEYS = ("name", "channel", "op", "where", "window", "threshold", "unit")


class ChannelMetric(NamedTuple):
    """A study-file metric (module docstring): ``name``, ``channel``, ``op``, ``where`` (a channel or
    ``None``), ``window`` ``(t0, t1)`` [s], ``threshold``, ``unit``."""

    name: str
    channel: str
    op: str
    where: str | None = None
    window: tuple[float, float] = (-math.inf, math.inf)
    threshold: float = 0.0
    unit: str = "-"

    @property
    def metric(self) -> Metric:
        """Its :class:`sims.scenarios.base.Metric` (a value; smooth for the smooth reductions)."""
        doc = f"{self.op} of {self.channel}" + (f" where {self.where}" if self.where else "")
        if self.window != (-math.inf, math.inf):
            doc += f" over t in [{self.window[0]:g}, {self.window[1]:g}] s"
        return Metric(self.name, self.unit, "value", self.op in _SMOOTH, doc + " (study file)")


def check_metric(d: Mapping[str, Any], scenario_metrics, scenario_channels=(), source: str = "Study") -> ChannelMetric:
    """A ``[[metric]]`` table as a :class:`ChannelMetric` (one-line errors naming the key): a new name, a known
    channel (module docstring; ``scenario_channels`` the scenario's own), an op of :data:`OPS`."""
    if isinstance(d, ChannelMetric):
        d = d._asdict()
    if not isinstance(d, Mapping):
        raise ValidationError(f"{source}: each [[metric]] must be a table (name, channel, op, ...), got {d!r}")
    src = f"{source}: [[metric]] {d.get('name', '?')!r}"
    unknown = set(d) - set(_KEYS)
    if unknown:
        raise ValidationError(f"{src}: unknown key(s) {sorted(unknown)}; allowed {list(_KEYS)}")
    for key in ("name", "channel", "op"):
        if not isinstance(d.get(key), str):
            raise ValidationError(f"{src}: {key} = {d.get(key)!r} must be a string")
    name = d["name"]
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
        raise ValidationError(f"{src}: name = {name!r} must be an identifier (letters, digits, _)")
    if name in {m.name for m in scenario_metrics}:
        raise ValidationError(f"{src}: name = {name!r} is already a metric of the scenario")
    check_choice("op", d["op"], OPS, source=src)
    for key in ("channel", "where"):
        if d.get(key) is not None:
            check_channel(d[key], scenario_channels, f"{src}: {key}")
    window = d.get("window", (-math.inf, math.inf))
    if (
        not isinstance(window, (list, tuple))
        or len(window) != 2
        or not all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in window)
        or not float(window[0]) < float(window[1])
    ):
        raise ValidationError(f"{src}: window = {window!r} must be [t0, t1] in seconds with t0 < t1")
    thr = d.get("threshold", 0.0)
    if isinstance(thr, bool) or not isinstance(thr, (int, float)) or not math.isfinite(float(thr)):
        raise ValidationError(f"{src}: threshold = {thr!r} must be a finite number")
    unit = d.get("unit", "-")
    if not isinstance(unit, str):
        raise ValidationError(f"{src}: unit = {unit!r} must be a string")
    return ChannelMetric(
        name, d["channel"], d["op"], d.get("where"), (float(window[0]), float(window[1])), float(thr), unit
    )


def check_channel(name: str, scenario_channels=(), source: str = "channel") -> None:
    """A channel name (module docstring), or a ``ValidationError`` listing the groups and fields."""
    if name in scenario_channels or name == "t":
        return
    hit = _NAME.match(name)
    group = hit.group(1) if hit else None
    if hit is None or group not in _GROUPS or hit.group(2) not in _GROUPS[group]:
        fields = "; ".join(f"{g}.({', '.join(c)})" for g, c in _GROUPS.items())
        own = f"; the scenario's: {', '.join(scenario_channels)}" if scenario_channels else ""
        raise ValidationError(f"{source} = {name!r} is not a channel: t; {fields} (per wheel: [i]){own}")


def _value(name: str, t, state, controls, tel, own: Mapping[str, Any]):
    """The channel ``name`` of one vehicle at one step (a scalar)."""
    if name == "t":
        return t
    if name in own:
        return own[name]
    hit = _NAME.match(name)
    assert hit is not None  # (checked by check_channel)
    group, field, index = hit.groups()
    if group == "state.body" and state.body is None:
        raise ValidationError(
            f"channel {name!r} is the full vehicle's body state: the study's model has none (model = 'full')"
        )
    x = getattr({"state": state, "state.body": state.body, "controls": controls, "telemetry": tel}[group], field)
    x = jnp.asarray(x)
    if index is None:
        if x.ndim:
            raise ValidationError(f"channel {name!r} has {x.shape[-1]} entries (per wheel): give {name}[0] ...")
        return x
    i = int(index)
    if x.ndim == 0 or i >= x.shape[-1]:
        raise ValidationError(f"channel {name!r}: index {i} out of range ({x.shape[-1] if x.ndim else 0} entries)")
    return x[..., i]


@jax.tree_util.register_pytree_node_class
class ChannelReducer:
    """The in-scan reduction of :class:`ChannelMetric` s beside a scenario's own reducer: ``inner`` (the
    scenario's reducer), ``data`` (per vehicle: the scenario's channel data) and the static ``specs`` and
    channel functions ``fns`` (name -> ``fn(data, t, state, controls, telemetry)``).  Its accumulator is
    ``(inner acc, ((agg, weight) per metric))``.  ``done`` (static: the scenario's ``done(inner acc)``, or
    ``None``): a vehicle's metrics stop counting after the step on which its scenario is done, so they do not
    depend on how long the rest of the fleet runs (nor on a replay's full horizon)."""

    def __init__(self, inner, data, specs: tuple[ChannelMetric, ...], fns: tuple = (), done=None):
        self.inner, self.data, self.specs, self.fns, self.done = inner, data, specs, fns, done

    def tree_flatten(self):
        return (self.inner, self.data), (self.specs, self.fns, self.done)

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, *aux)

    def init(self, params, state):
        z = jnp.zeros_like(state.vx)
        start = {"peak": -jnp.inf, "min": jnp.inf, "peak_abs": -jnp.inf, "final": jnp.nan}
        accs = tuple((z + start.get(m.op, 0.0), z) for m in self.specs)
        inner = None if self.inner is None else self.inner.init(params, state)
        return inner, accs

    def update(self, acc, t, state, controls, tel, new, params, dt):
        inner, accs = acc
        finished = None if self.done is None or inner is None else self.done(inner)
        if self.inner is not None:
            inner = self.inner.update(inner, t, state, controls, tel, new, params, dt)
        own = {k: fn(self.data, t, state, controls, tel) for k, fn in self.fns}
        out = []
        for m, (agg, w) in zip(self.specs, accs, strict=True):
            x = jnp.asarray(_value(m.channel, t, state, controls, tel, own), agg.dtype)
            on = (t >= m.window[0]) & (t <= m.window[1])
            if finished is not None:
                on = on & ~finished
            if m.where is not None:
                on = on & (_value(m.where, t, state, controls, tel, own) > 0.5)
            step = jnp.where(on, dt, 0.0).astype(agg.dtype)
            if m.op == "peak":
                agg = jnp.where(on, jnp.maximum(agg, x), agg)
            elif m.op == "min":
                agg = jnp.where(on, jnp.minimum(agg, x), agg)
            elif m.op == "peak_abs":
                agg = jnp.where(on, jnp.maximum(agg, jnp.abs(x)), agg)
            elif m.op == "final":
                agg = jnp.where(on, x, agg)
            elif m.op == "time_above":
                agg = agg + jnp.where(x > m.threshold, step, 0.0)
            else:  # mean, integral
                agg = agg + jnp.where(on, x, 0.0) * step
            out.append((agg, w + step))
        return inner, tuple(out)

    def values(self, acc) -> dict[str, Any]:
        """The metrics ``{name: (n,)}`` of the accumulator (module docstring)."""
        res = {}
        for m, (agg, w) in zip(self.specs, acc[1], strict=True):
            if m.op == "mean":
                v = jnp.where(w > 0, agg / jnp.where(w > 0, w, 1.0), jnp.nan)
            elif m.op in ("integral", "time_above"):
                v = agg
            else:
                v = jnp.where(w > 0, agg, jnp.nan)
            res[m.name] = v
        return res


@dataclasses.dataclass(frozen=True)
class WithChannels(Wrapping):
    """A scenario with study-file metrics (:class:`ChannelMetric`) reduced beside its own: the same settings,
    setup (its reducer wrapped in a :class:`ChannelReducer`), ``done`` and metrics, plus the new ones."""

    scenario: Any
    specs: tuple = ()

    @property
    def metrics(self):
        return tuple(self.scenario.metrics) + tuple(m.metric for m in self.specs)

    def setup(self, params, settings):
        s = self.scenario.setup(params, settings)
        data, fns = scenario_channels(self.scenario, s)
        done = getattr(self.scenario, "done", None)
        red = ChannelReducer(s.reducer, data, self.specs, tuple(sorted(fns.items())), done)
        return s._replace(reducer=red)

    def evaluate(self, acc, setup, settings):
        inner_setup = setup._replace(reducer=setup.reducer.inner)
        out = dict(self.scenario.evaluate(acc[0], inner_setup, settings))
        out.update(setup.reducer.values(acc))
        return out

    def done(self, acc):
        return super().done(acc[0])


def scenario_channels(scenario, setup) -> tuple[Any, dict]:
    """``(data, {name: fn(data, t, state, controls, telemetry)})``: a scenario's own channels
    (``scenario.channels(setup)``, looked up through wrappers' ``.scenario``), ``(None, {})`` without."""
    sc = scenario
    while not hasattr(sc, "channels") and hasattr(sc, "scenario"):
        sc = sc.scenario
    fn = getattr(sc, "channels", None)
    return fn(setup) if fn is not None else (None, {})


def channel_names(scenario) -> tuple[str, ...]:
    """The names of a scenario's own channels (``scenario.CHANNELS``, through wrappers)."""
    sc = scenario
    while not hasattr(sc, "CHANNELS") and hasattr(sc, "scenario"):
        sc = sc.scenario
    return tuple(getattr(sc, "CHANNELS", ()))


__all__ = [
    "OPS",
    "ChannelMetric",
    "ChannelReducer",
    "WithChannels",
    "channel_names",
    "check_channel",
    "check_metric",
    "scenario_channels",
]
