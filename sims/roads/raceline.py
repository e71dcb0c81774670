"""Minimum-curvature racing line inside a circuit's widths.

The line is the centreline moved sideways, ``p_i = r_i + alpha_i n_i`` (``r_i`` the centreline points of a
:class:`~sims.roads.circuits.Track` at spacing ``h``, ``n_i`` the left normals), and minimises the summed squared
curvature (Braghin et al. 2008; Heilmeier et al. 2019, *Minimum curvature trajectory planning and control for an
autonomous race car*, TUM's ``global_racetrajectory_optimization``)::

    min_alpha  sum_i kappa_i(alpha)^2       s.t.  -(w_right,i - margin) <= alpha_i <= w_left,i - margin

with the curvature of the sampled line by central differences on the centreline's parameter,
``kappa_i = (x'_i y''_i - y'_i x''_i) / (x'_i^2 + y'_i^2)^(3/2)``, ``x'_i = (x_{i+1} - x_{i-1}) / 2h``, ``x''_i =
(x_{i+1} - 2 x_i + x_{i-1}) / h^2``.  As in the TUM formulation the curvature is linearised about the
current line, ``kappa ~ kappa_0 + J (alpha - alpha_0)`` (``J`` cyclic tridiagonal, from JAX's forward-mode
derivative with three colour vectors), which turns each step into a convex QP with bounds only,
``min 1/2 a' H a + f' a``, ``H = 2 J^T J`` (cyclic pentadiagonal), solved exactly by :func:`box_qp` (Bertsekas'
projected Newton method with sparse direct solves of :mod:`scipy.sparse.linalg`).  Up to ``n_iter``
re-linearisations (sequential QP) converge the nonlinear problem, each step inside a trust region of
``trust`` metres (quartered when the true objective did not fall, reset after a success): the
undamped iteration oscillates through the hairpins.  The offsets never reach the local radius of the
centreline on the inside of a bend (``1 - alpha kappa_ref >= FOLD``): beyond it the line folds back.

Which solver and why: the QP has bounds only and a banded Hessian, so an active-set / projected-Newton
iteration with a sparse direct solve is exact and takes milliseconds per step for thousands of points;
scipy (well kept, already a dependency of JAX) supplies the sparse factorisation, so no further package is
needed (TUM uses quadprog on the dense matrices; OSQP would also do, as an extra dependency; scipy's
``lsq_linear`` solves the same problem but took minutes here through its iterative LSMR inner solver).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxtire.validation import ValidationError
from sims.roads.circuits import Track, make_circuit

#: Distance [m] the line keeps from each edge by default (the database's race lines keep ~0.75 m).
MARGIN = 0.75
#: Trust region [m] of the sequential QPs: 0.5 m ended lower on all eight shipped circuits than 2 m (Spielberg
#: 1.07 against 1.15, Spa 1.07 against 1.18 of the database line's summed squared curvature; the problem is not
#: convex and a wide first step lands in a worse basin).
TRUST = 0.5
#: No fold: the line keeps ``1 - alpha kappa_ref >= FOLD`` on the inside of each bend (``kappa_ref`` the
#: centreline's curvature).  A curve at offset ``alpha`` from the centreline has ``|p'| = |1 - alpha kappa_ref|``
#: per metre of centreline, so beyond the local radius ``1 / kappa_ref`` it runs backwards (folds); where the
#: track is wider than that radius (Spa's La Source) the unguarded line folded (21.8 times the database line's
#: summed squared curvature with no margin).
FOLD = 0.2
#: The same bound for the first, convex QP (linearised about the centreline, whose curvature model
#: ``kappa_ref + (alpha kappa_ref^2 + alpha'')`` misses the true ``kappa_ref / (1 - alpha kappa_ref)`` by the
#: factor ``1 / (1 - alpha kappa_ref)``: held to <= 1.5 so the sequential QPs start in the right basin;
#: 0.2 here gave Spa 1.021, 0.35 gives 1.006 of the database line).
FOLD0 = 0.35


def _curvature(alpha, rx, ry, nx, ny, h):
    x = rx + alpha * nx
    y = ry + alpha * ny
    xp = (jnp.roll(x, -1) - jnp.roll(x, 1)) / (2 * h)
    yp = (jnp.roll(y, -1) - jnp.roll(y, 1)) / (2 * h)
    xpp = (jnp.roll(x, -1) - 2 * x + jnp.roll(x, 1)) / h**2
    ypp = (jnp.roll(y, -1) - 2 * y + jnp.roll(y, 1)) / h**2
    return (xp * ypp - yp * xpp) / (xp * xp + yp * yp) ** 1.5


def _speed(alpha, rx, ry, nx, ny, h):
    """``|p'|`` [-]: the line's arc length per unit centreline arc length at each point."""
    x = rx + alpha * nx
    y = ry + alpha * ny
    return jnp.hypot(jnp.roll(x, -1) - jnp.roll(x, 1), jnp.roll(y, -1) - jnp.roll(y, 1)) / (2 * h)


def _inside_reach(k_ref, wl, wr, keep):
    """The bounds ``wl, wr`` [m] cut to ``|alpha| <= (1 - keep) / |kappa_ref|`` on the inside of each bend (left
    for ``kappa_ref > 0``): ``1 - alpha kappa_ref >= keep``."""
    with np.errstate(divide="ignore"):
        reach = (1.0 - keep) / np.abs(k_ref)
    return np.where(k_ref > 0, np.minimum(wl, reach), wl), np.where(k_ref < 0, np.minimum(wr, reach), wr)


def cyclic_tridiagonal_jacobian(fn, x):
    """The Jacobian (n, n) (scipy CSR) of ``fn: (n,) -> (n,)`` at ``x`` when output ``i`` depends on inputs
    ``i - 1, i, i + 1`` (mod n) only: one forward-mode derivative per colour, the columns of one colour at least
    3 apart cyclically (``j % 3`` up to the last multiple of 3, the ``n % 3`` columns after it a colour each, so
    that columns ``n - 1`` and ``0`` never share one)."""
    from scipy.sparse import csr_matrix  # construction only (numpy-side)

    n = len(x)
    m3 = 3 * (n // 3)
    colour = np.where(np.arange(n) < m3, np.arange(n) % 3, 3 + np.arange(n) - m3)
    seeds = jnp.asarray((colour[None, :] == np.arange(colour.max() + 1)[:, None]).astype(np.asarray(x).dtype))
    xj = jnp.asarray(x)
    dirs = np.asarray(jax.vmap(lambda t: jax.jvp(fn, (xj,), (t,))[1])(seeds))
    rows = np.concatenate([np.arange(n)] * 3)
    cols = np.concatenate([np.mod(np.arange(n) + d, n) for d in (-1, 0, 1)])
    return csr_matrix((dirs[colour[cols], rows], (rows, cols)), shape=(n, n))


def box_qp(H, f, lo, hi, x0, tol: float = 1e-10, max_iter: int = 200) -> np.ndarray:
    """``argmin 1/2 x' H x + f' x`` subject to ``lo <= x <= hi`` (``H`` sparse symmetric positive definite):
    Bertsekas' projected Newton method (1982): the variables at a bound whose gradient pushes outwards are
    held, a Newton step (sparse direct solve) moves the others, then an Armijo search along the projected
    arc.  Stops when a step moves no variable by more than ``tol`` [m]."""
    from scipy.sparse.linalg import spsolve  # construction only (numpy-side)

    x = np.clip(x0, lo, hi)
    q = lambda z: 0.5 * z @ (H @ z) + f @ z  # noqa: E731
    for _ in range(max_iter):
        g = H @ x + f
        eps = 1e-9 + 1e-6 * (hi - lo)
        held = ((x <= lo + eps) & (g > 0)) | ((x >= hi - eps) & (g < 0))
        free = np.flatnonzero(~held)
        d = np.zeros_like(x)
        if free.size:
            d[free] = -spsolve(H[free][:, free].tocsc(), g[free])
        t, qx = 1.0, q(x)
        while True:
            xn = np.clip(x + t * d, lo, hi)
            if q(xn) <= qx + 1e-4 * (g @ (xn - x)) or t < 1e-8:
                break
            t *= 0.5
        moved = float(np.max(np.abs(xn - x)))
        x = xn
        if moved < tol:
            break
    return x


def min_curvature_offsets(
    track: Track, margin: float = MARGIN, n_iter: int = 40, tol: float = 1e-8, trust: float = TRUST
) -> np.ndarray:
    """The lateral offsets ``alpha`` (N,) [m] (positive left) of the minimum-curvature line (module docstring)
    from the points of ``track``.  Raises :class:`~jaxtire.validation.ValidationError` when ``margin`` leaves
    no room (``w_left + w_right <= 2 margin`` somewhere)."""
    # scipy is imported here: construction only (numpy-side, never traced)
    from scipy.sparse import csr_matrix

    with jax.enable_x64(True):  # the QP in float64 whatever the default
        xy = np.asarray(track.xy, np.float64)
        hd = np.asarray(track.heading, np.float64)
        wl = np.asarray(track.width_left, np.float64) - margin
        wr = np.asarray(track.width_right, np.float64) - margin
        if np.any(wl + wr <= 0):
            i = int(np.argmax(wl + wr <= 0))
            raise ValidationError(
                f"min_curvature_offsets: margin = {margin} m leaves no room at s = {float(track.s[i]):.1f} m "
                f"(widths {wl[i] + margin:.2f} + {wr[i] + margin:.2f} m; allowed margin < half the width)"
            )
        n = len(xy)
        h = float(track.ds)
        args = (xy[:, 0], xy[:, 1], -np.sin(hd), np.cos(hd), h)
        kappa_fn = jax.jit(lambda a: _curvature(a, *args))
        speed_fn = jax.jit(lambda a: _speed(a, *args))
        rows = np.concatenate([np.arange(n)] * 3)
        cols = np.concatenate([np.mod(np.arange(n) + d, n) for d in (-1, 0, 1)])
        # first the standard QP of TUM's formulation (convex: x', y' and |r'| of the centreline held, only
        # x'', y'' linear in alpha), then the sequential QPs below from its solution
        rx, ry, nx, ny = args[:4]
        xp = (np.roll(rx, -1) - np.roll(rx, 1)) / (2 * h)
        yp = (np.roll(ry, -1) - np.roll(ry, 1)) / (2 * h)
        den = (xp * xp + yp * yp) ** 1.5
        a_vals = []
        for d, c2 in zip((-1, 0, 1), (1.0, -2.0, 1.0), strict=True):
            j = np.mod(np.arange(n) + d, n)
            a_vals.append(c2 / h**2 * (xp * ny[j] - yp * nx[j]) / den)
        A = csr_matrix((np.concatenate(a_vals), (rows, cols)), shape=(n, n))
        k_ref = np.asarray(kappa_fn(np.zeros(n)))
        H0 = (A.T @ A).tocsc() * 2.0
        wl, wr = _inside_reach(k_ref, wl, wr, FOLD)  # no fold (FOLD)
        wl0, wr0 = _inside_reach(k_ref, wl, wr, FOLD0)
        alpha = box_qp(H0, 2.0 * (A.T @ k_ref), -wr0, wl0, np.zeros(n), tol=tol)

        def cost(a):  # the objective: sum kappa^2 |p'| (the integral of kappa^2 over the line's length / h)
            k = np.asarray(kappa_fn(a))
            return float(np.sum(k * k * np.asarray(speed_fn(a))))

        best, radius = cost(alpha), trust
        for _ in range(n_iter):
            k0 = np.asarray(kappa_fn(alpha))
            J = cyclic_tridiagonal_jacobian(kappa_fn, alpha)
            # weights: each point's share of the line's own length, so the sum is the integral of kappa^2 ds
            w = np.sqrt(np.asarray(speed_fn(alpha)))
            J = csr_matrix(J.multiply(w[:, None]))
            k0 = k0 * w
            # the QP: min |k0 + J (a - alpha)|^2 = 1/2 a' H a + f' a + const within the widths and the trust region
            H = (J.T @ J).tocsc() * 2.0
            f = 2.0 * (J.T @ (k0 - J @ alpha))
            lo, hi = np.maximum(-wr, alpha - radius), np.minimum(wl, alpha + radius)
            cand = box_qp(H, f, lo, hi, alpha, tol=tol)
            c = cost(cand)
            step = float(np.max(np.abs(cand - alpha)))
            if c < best:  # accept; widen the trust region again
                alpha, best, radius = cand, c, min(2.0 * radius, trust)
            else:  # the linearisation overshot: shrink
                radius *= 0.25
            if step < 1e-3 or radius < 1e-3:
                break
    return alpha


def min_curvature_line(track: Track, margin: float = MARGIN, n_iter: int = 40, ds: float | None = None, dtype=None):
    """The minimum-curvature racing line of ``track`` (module docstring) as a :class:`Track` (periodic-spline
    resampled every ``ds`` [m], default the track's spacing) whose widths are the distances to the track's
    edges; and the offsets ``alpha`` (N,) [m] from the centreline."""
    alpha = min_curvature_offsets(track, margin, n_iter)
    xy = np.asarray(track.xy, np.float64)
    hd = np.asarray(track.heading, np.float64)
    pts = xy + alpha[:, None] * np.stack([-np.sin(hd), np.cos(hd)], axis=1)
    wl = np.asarray(track.width_left, np.float64) - alpha
    wr = np.asarray(track.width_right, np.float64) + alpha
    line = make_circuit(
        pts,
        wr,
        wl,
        ds=float(track.ds) if ds is None else ds,
        elevation=np.asarray(track.elevation, np.float64),
        banking=np.asarray(track.banking, np.float64),
        dtype=dtype,
        source="min_curvature_line",
    )
    return line, alpha


def curvature_cost(line: Track) -> float:
    """``sum_i kappa_i^2 ds`` [1/m] of a line (its spline curvature at its own samples)."""
    k = np.asarray(line.curvature, np.float64)
    return float(np.sum(k * k) * float(line.ds))
