"""jaxtire: every tire equation of motorsport vehicle dynamics in pure, functional JAX.

Public API::

    params = jaxtire.load_tir(path)            # .tir file -> MFParams pytree
    jaxtire.save_tir(params, path)
    out = jaxtire.mf_forces(params, kappa, alpha, gamma, fz, vx=..., surface=...)
    out.fx, out.fy, out.mz                      # SI units, TYDEX / ISO-W axes
    jaxtire.tire_forces(any_tire, kappa, alpha, ...)   # the one interface (jaxtire.tire): MF or simple
    jaxtire.magic_formula(x, B, C, D, E, Sh, Sv); jaxtire.magic_formula_direct(x, B, C, D, E)
    jaxtire.surfaces.preset_table()
"""

from jaxtire import surfaces, tire
from jaxtire.forces import TireForces
from jaxtire.load_table import LoadTable, load_table_force, make_load_table
from jaxtire.magic_formula import magic_formula, magic_formula_direct
from jaxtire.mf61 import mf_forces
from jaxtire.params import MFParams, make_params
from jaxtire.simple import SimpleParams, default_simple_params, make_simple_params, simple_forces
from jaxtire.slip import slip_angle, slip_ratio
from jaxtire.spline import SplineParams, make_spline, spline_curve
from jaxtire.tir import TirError, data_path, default_tire, load_tir, save_tir
from jaxtire.tire import tire_forces

__all__ = [
    "MFParams",
    "TireForces",
    "TirError",
    "data_path",
    "default_tire",
    "load_tir",
    "magic_formula",
    "magic_formula_direct",
    "make_params",
    "mf_forces",
    "save_tir",
    "slip_angle",
    "slip_ratio",
    "surfaces",
    "tire",
    "SimpleParams",
    "default_simple_params",
    "make_simple_params",
    "simple_forces",
    "SplineParams",
    "make_spline",
    "spline_curve",
    "LoadTable",
    "load_table_force",
    "make_load_table",
    "tire_forces",
]
__version__ = "0.1.0"
from jaxtire import transient, vertical  # noqa: E402
from jaxtire.evaluate import TireEvaluation, evaluate  # noqa: E402

__all__ += ["evaluate", "TireEvaluation", "transient", "vertical"]
