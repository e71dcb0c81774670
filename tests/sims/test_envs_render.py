"""Top-view frames (sims.envs.render): the car is drawn at the centre, heading along its yaw; braking
tire forces show as red arrows whose length follows the force; frames of an episode write a GIF."""

import jax
import jax.numpy as jnp
import numpy as np
from PIL import Image

import sims.envs as envs
from sims.envs.render import CAR, FORCE, episode_frames, render_frame, write_gif


def _mask(img, color):
    return np.all(img == np.asarray(color, np.uint8), axis=-1)


def test_frame_car_at_centre_and_force_arrows_follow_the_brake(tmp_path):
    env = envs.make("braking")
    params = env.params(surface_ids=np.zeros(8, np.int32))  # dry asphalt
    _, state = jax.jit(env.reset)(jax.random.key(0), params)
    state = jax.device_get(state)
    img = render_frame(env, state, params, width=200, height=160, view=20.0)
    assert img.shape == (160, 200, 3) and img.dtype == np.uint8
    car = _mask(img, CAR)
    rows, cols = np.nonzero(car)
    # the car (yaw 0, CG at the image centre, 10 px/m): the body runs from 0.5 m behind the rear axle
    # (b = 1.61 m) to 0.5 m ahead of the front one (a = 1.03 m), i.e. columns 100 - 21.1 .. 100 + 15.3,
    # and is the front track + 0.2 m = 1.75 m wide, rows 80 -+ 8.75
    assert abs(cols.min() - 78.9) <= 1.0 and abs(cols.max() - 115.3) <= 1.0, (cols.min(), cols.max())
    assert abs(rows.min() - 71.25) <= 1.0 and abs(rows.max() - 88.75) <= 1.0, (rows.min(), rows.max())
    # no brake (last action -1): rolling resistance only, arrows shorter than a pixel; full brake: the
    # front tires pull backwards with several kN (Fx ~ -mu Fz): arrows of 1-3 m, pointing to -x
    no_brake = _mask(img, FORCE).sum()
    braked = state._replace(last_action=np.ones(2, np.float32), kappa=state.kappa)
    braked = braked._replace(vehicle=braked.vehicle._replace(omega=braked.vehicle.omega * 0.8))  # slipping: kappa -0.2
    img_b = render_frame(env, braked, params, width=200, height=160, view=20.0)
    red = _mask(img_b, FORCE)
    assert red.sum() > no_brake + 40
    assert np.nonzero(red)[1].min() < cols.min() - 5  # some arrow reaches behind the car
    rotated = state._replace(vehicle=state.vehicle._replace(yaw=np.float32(np.pi / 2)))
    r_rows, r_cols = np.nonzero(_mask(render_frame(env, rotated, params, width=200, height=160, view=20.0), CAR))
    assert np.ptp(r_rows) > np.ptp(r_cols)  # heading north: longer along the image's vertical


def test_episode_frames_to_gif(tmp_path):
    env = envs.make("braking")
    params = env.params(max_steps=6)
    frames = episode_frames(env, params, policy=lambda obs: jnp.ones(2), width=64, height=48)
    assert len(frames) == 7 and all(f.shape == (48, 64, 3) for f in frames)  # reset + 6 steps (truncated)
    assert not np.array_equal(frames[-1], frames[-2])  # the last frame is the final state, not a repeat
    path = write_gif(frames, tmp_path / "ep.gif", fps=20)
    with Image.open(path) as gif:
        assert gif.n_frames == 7 and gif.size == (64, 48)
