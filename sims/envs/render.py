"""Top-view frames of the sims.envs tasks drawn with numpy (no display, no matplotlib), and GIFs.

:func:`render_frame` draws one environment's state as an ``(H, W, 3)`` uint8 image, centred on the car,
``view`` metres wide (default 40 m; north up, x to the right): the ground, the task's geometry (race:
the track edges and centreline; drift: the target circle; braking: lane lines and a marker every 10 m),
the car body (blue rectangle, ``L + 1`` m long, the front track wide, a white nose mark) and each
tire's horizontal force ``(Fx, Fy)`` as a red arrow from its contact point, ``1 m per force_scale``
newtons (default 2 kN), rotated from the wheel frame by the steer angle and the yaw.  The forces come
from one evaluation of the env's vehicle model (:func:`sims.vehicles.double_track.rates` by default, the same tire
calls as the step) at the state and the last action, jitted once per env.  About 2-20 ms a frame
(320 x 320) on one CPU core.

A heads-up display (``hud=True``, the default) writes the speed [km/h] and, on a race, the lap count, the
current and last lap time [s] in the top-left corner; a compass arrow top-right shows the car's heading (the
frame stays north up); a race adds a minimap bottom-right (the whole circuit, the car a red dot).

:func:`episode_frames` rolls one environment with a policy and renders every step;
:func:`write_gif` writes frames with Pillow (a dependency of matplotlib).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from PIL import Image, ImageDraw  # Pillow: a dependency of matplotlib, itself a core dependency

from sims.envs.base import Environment, vehicle_for

GROUND = (206, 211, 199)
ROAD = (120, 120, 124)
LINE = (245, 245, 245)
CAR = (40, 90, 200)
FORCE = (220, 30, 30)


@functools.lru_cache(maxsize=32)
def _forces_fn(env: Environment):
    """Jitted ``(state, params) -> (wheel x, wheel y in the body frame, fx, fy, steer)`` per wheel."""

    def forces(state, params):
        vp = vehicle_for(params, state.phys)
        ch = vp.chassis
        controls = env.controls(state.last_action, params)
        _, tel = env.vehicle_model.rates(vp, state.vehicle, controls, params.dt / env.substeps)
        a, b, tf, tr = ch.cg_to_front, ch.cg_to_rear, ch.track_front, ch.track_rear
        wx = jnp.stack([a, a, -b, -b])
        wy = jnp.stack([0.5 * tf, -0.5 * tf, 0.5 * tr, -0.5 * tr])
        return wx, wy, tel.fx, tel.fy, tel.steer

    return jax.jit(forces)


class Canvas:
    """An RGB image with world-to-pixel drawing (``scale`` px/m, world point ``centre`` at the middle)."""

    def __init__(self, width, height, centre, scale, background=GROUND):
        self.img = np.empty((height, width, 3), np.uint8)
        self.img[:] = background
        self.w, self.h, self.c, self.s = width, height, np.asarray(centre, float), float(scale)

    def px(self, x, y):
        """Pixel column and row of world points (y up)."""
        u = (np.asarray(x) - self.c[0]) * self.s + 0.5 * self.w
        return u, 0.5 * self.h - (np.asarray(y) - self.c[1]) * self.s

    def world_grid(self):
        """World coordinates ``(x, y)`` of every pixel centre, each ``(H, W)``."""
        u = (np.arange(self.w) + 0.5 - 0.5 * self.w) / self.s + self.c[0]
        v = (0.5 * self.h - np.arange(self.h) - 0.5) / self.s + self.c[1]
        return np.meshgrid(u, v)

    def dots(self, x, y, color, radius: int = 0):
        u, v = self.px(x, y)
        u, v = np.round(u).astype(int).ravel(), np.round(v).astype(int).ravel()
        for du in range(-radius, radius + 1):
            for dv in range(-radius, radius + 1):
                uu, vv = u + du, v + dv
                ok = (uu >= 0) & (uu < self.w) & (vv >= 0) & (vv < self.h)
                self.img[vv[ok], uu[ok]] = color

    def line(self, x0, y0, x1, y1, color, width: int = 0):
        """Segments from (x0, y0) to (x1, y1) (arrays of equal shape), sampled at half a pixel."""
        x0, y0, x1, y1 = (np.atleast_1d(np.asarray(a, float)) for a in (x0, y0, x1, y1))
        n = int(np.clip(np.max(np.hypot(x1 - x0, y1 - y0)) * self.s * 2 + 2, 2, 4 * (self.w + self.h)))
        t = np.linspace(0.0, 1.0, n)[:, None]
        self.dots(x0 + t * (x1 - x0), y0 + t * (y1 - y0), color, width)

    def polyline(self, x, y, color, width: int = 0, closed: bool = False):
        x, y = np.asarray(x, float), np.asarray(y, float)
        if closed:
            x, y = np.append(x, x[:1]), np.append(y, y[:1])
        self.line(x[:-1], y[:-1], x[1:], y[1:], color, width)

    def rectangle(self, cx, cy, heading, length, width, color):
        """A filled rectangle centred at (cx, cy), its long side along ``heading``."""
        r = 0.5 * np.hypot(length, width)
        u0, v0 = self.px(cx - r, cy + r)
        u1, v1 = self.px(cx + r, cy - r)
        us = np.arange(max(int(u0), 0), min(int(u1) + 2, self.w))
        vs = np.arange(max(int(v0), 0), min(int(v1) + 2, self.h))
        if us.size == 0 or vs.size == 0:
            return
        U, V = np.meshgrid(us, vs)
        x = (U - 0.5 * self.w) / self.s + self.c[0] - cx
        y = (0.5 * self.h - V) / self.s + self.c[1] - cy
        c, s = np.cos(heading), np.sin(heading)
        along, across = x * c + y * s, -x * s + y * c
        inside = (np.abs(along) <= 0.5 * length) & (np.abs(across) <= 0.5 * width)
        self.img[V[inside], U[inside]] = color


def _scene(canvas: Canvas, env: Environment, state, params):
    """The task's fixed geometry around the car."""
    half_view = 0.5 * canvas.w / canvas.s
    if hasattr(params, "track"):  # road: pixels within half_width of the centreline points near the car
        tr = params.track
        xy = np.asarray(tr.xy, float)
        hw = float(tr.half_width)
        near = np.hypot(xy[:, 0] - canvas.c[0], xy[:, 1] - canvas.c[1]) < 1.5 * half_view + hw + 2.0
        if near.any():
            gx, gy = canvas.world_grid()
            d = np.full(gx.shape, np.inf)
            for px, py in xy[near]:
                d = np.minimum(d, (gx - px) ** 2 + (gy - py) ** 2)
            d = np.sqrt(d)
            canvas.img[d <= hw] = ROAD
            canvas.img[np.abs(d - hw) <= 1.0 / canvas.s] = LINE
            canvas.img[d <= 0.5 / canvas.s] = LINE
    elif hasattr(params, "radius"):
        th = np.linspace(0.0, 2 * np.pi, 720)
        r = float(params.radius)
        canvas.polyline(r * np.cos(th), r * np.sin(th), ROAD, 1)
    else:  # straight-line braking: lanes and distance markers
        x0 = canvas.c[0]
        xs = np.array([x0 - half_view, x0 + half_view])
        canvas.rectangle(x0, 0.0, 0.0, 2 * half_view + 2, 7.0, ROAD)
        for y in (-3.5, 3.5):
            canvas.line(xs[0], y, xs[1], y, LINE, 1)
        marks = np.arange(np.floor((x0 - half_view) / 10) * 10, x0 + half_view + 10, 10.0)
        canvas.line(marks, np.full_like(marks, -3.5), marks, np.full_like(marks, 3.5), LINE, 0)


HUD_TEXT = (255, 255, 255)
HUD_BACK = (30, 30, 34)


def _minimap(canvas: Canvas, track, x: float, y: float, size: int) -> None:
    """The whole closed track scaled into a ``size`` px square at the bottom-right corner, the car at (x, y)."""
    xy = np.asarray(track.xy, float)
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    scale = (size - 8) / max(float(np.max(hi - lo)), 1e-6)
    ox, oy = canvas.w - size - 4, canvas.h - size - 4
    canvas.img[oy : oy + size, ox : ox + size] = HUD_BACK

    def pix(p):
        u = ox + 4 + (p[..., 0] - lo[0]) * scale
        v = oy + size - 4 - (p[..., 1] - lo[1]) * scale
        return np.round(u).astype(int), np.round(v).astype(int)

    n = max(len(xy), 2)
    t = np.linspace(0.0, 1.0, 4)[:, None]
    seg = xy[:, None, :] + t[None] * (np.roll(xy, -1, axis=0) - xy)[:, None, :]
    u, v = pix(seg.reshape(-1, 2)[: 4 * n])
    ok = (u >= 0) & (u < canvas.w) & (v >= 0) & (v < canvas.h)
    canvas.img[v[ok], u[ok]] = LINE
    cu, cv = pix(np.array([x, y]))
    canvas.img[max(cv - 2, 0) : cv + 3, max(cu - 2, 0) : cu + 3] = FORCE


def _hud(img: np.ndarray, state, params, yaw: float) -> np.ndarray:
    """Speed, lap count and lap times (text, top left) and a heading arrow (top right) drawn on ``img``."""
    vs = state.vehicle
    lines = [f"{3.6 * float(vs.vx):5.0f} km/h"]
    timer = getattr(state, "timer", None)
    if timer is not None:
        current = float(timer.time) - float(timer.start)
        last = float(timer.last)
        lines.append(f"lap {int(timer.laps) + 1}  {current:6.1f} s")
        lines.append("last  " + (f"{last:6.1f} s" if int(timer.laps) > 0 else "   -"))
    pil = Image.fromarray(img)
    draw = ImageDraw.Draw(pil)
    draw.rectangle([2, 2, 96, 4 + 12 * len(lines)], fill=HUD_BACK)
    for i, text in enumerate(lines):
        draw.text((5, 3 + 12 * i), text, fill=HUD_TEXT)
    cx, cy, r = img.shape[1] - 20, 20, 14
    draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=HUD_BACK)
    tip = (cx + 0.8 * r * np.cos(yaw), cy - 0.8 * r * np.sin(yaw))
    tail = (cx - 0.5 * r * np.cos(yaw), cy + 0.5 * r * np.sin(yaw))
    draw.line([tail, tip], fill=HUD_TEXT, width=2)
    draw.ellipse([tip[0] - 2, tip[1] - 2, tip[0] + 2, tip[1] + 2], fill=FORCE)
    draw.text((cx - 3, cy - r - 1), "N", fill=HUD_TEXT)
    return np.asarray(pil)


def render_frame(
    env: Environment,
    state,
    params,
    width: int = 320,
    height: int = 320,
    view: float = 40.0,
    force_scale: float = 2000.0,
    hud: bool = True,
) -> np.ndarray:
    """``(height, width, 3)`` uint8 top view of one (unbatched) ``state`` of ``env`` (module docstring)."""
    vs = state.vehicle
    x, y, yaw = float(vs.x), float(vs.y), float(vs.yaw)
    canvas = Canvas(width, height, (x, y), width / view)
    _scene(canvas, env, state, params)
    wx, wy, fx, fy, steer = (np.asarray(a, float) for a in _forces_fn(env)(state, params))
    ch = params.vehicle.chassis
    length = float(ch.cg_to_front + ch.cg_to_rear) + 1.0
    width_car = float(ch.track_front) + 0.2
    centre_off = 0.5 * (float(ch.cg_to_front) - float(ch.cg_to_rear))
    c, s = np.cos(yaw), np.sin(yaw)
    canvas.rectangle(x + centre_off * c, y + centre_off * s, yaw, length, width_car, CAR)
    nose = 0.5 * length + centre_off - 0.4
    canvas.rectangle(x + nose * c, y + nose * s, yaw, 0.4, 0.6 * width_car, LINE)
    # wheels: contact points in the world, forces rotated by steer + yaw
    px, py = x + wx * c - wy * s, y + wx * s + wy * c
    ang = yaw + steer
    fwx = (fx * np.cos(ang) - fy * np.sin(ang)) / force_scale
    fwy = (fx * np.sin(ang) + fy * np.cos(ang)) / force_scale
    canvas.dots(px, py, (20, 20, 20), 2)
    canvas.line(px, py, px + fwx, py + fwy, FORCE, 1)
    if not hud:
        return canvas.img
    if hasattr(params, "track"):
        _minimap(canvas, params.track, x, y, max(min(width, height) // 4, 40))
    return _hud(canvas.img, state, params, yaw)


def episode_frames(
    env: Environment, params=None, policy=None, key=None, max_steps: int | None = None, **render_kwargs
) -> list:
    """Frames of one episode of ``env`` (``policy(obs) -> action``, default zeros) until it ends or
    ``max_steps``; the first frame is the reset state.  Steps one environment with the jitted env."""
    params = env.default_params if params is None else params
    key = jax.random.key(0) if key is None else key
    policy = policy or (lambda obs: jnp.zeros((env.num_actions,), obs.dtype))
    reset, step = jax.jit(env.reset), jax.jit(env.step_env)  # step_env: no auto-reset, the last state is drawn
    key, sub = jax.random.split(key)
    obs, state = reset(sub, params)
    frames = [render_frame(env, jax.device_get(state), params, **render_kwargs)]
    limit = int(params.max_steps) if max_steps is None else int(max_steps)
    for _ in range(limit):
        key, sub = jax.random.split(key)
        obs, state, reward, terminated, info = step(sub, state, policy(obs), params)
        frames.append(render_frame(env, jax.device_get(state), params, **render_kwargs))
        if bool(terminated) or bool(env.is_truncated(state, params)):
            break
    return frames


def write_gif(frames, path, fps: float = 20.0) -> str:
    """Write ``frames`` (``(H, W, 3)`` uint8 arrays) as a looping GIF at ``fps`` with Pillow; returns ``path``."""
    if not len(frames):
        raise ValueError("write_gif: no frames")
    images = [Image.fromarray(np.asarray(f, np.uint8)) for f in frames]
    images[0].save(str(path), save_all=True, append_images=images[1:], duration=int(round(1000.0 / fps)), loop=0)
    return str(path)
