"""A Gymnasium vector environment of E kinematic-bicycle cars racing trackgen courses.

    import numpy as np
    from racing_env import RacingVectorEnv
    env = RacingVectorEnv(num_envs=1024, preset="track", seed=0)
    obs, info = env.reset(seed=0)
    for _ in range(1000):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

Each car is a kinematic bicycle (wheelbase `wheelbase_m`) driven by `[steer, throttle]` in
[-1, 1]²: steering angle `steer * max_steer_rad`, acceleration `throttle * max_accel`, speed
clamped to `[0, max_speed]`. Its position and heading are written in place into the course's bound
buffers (zero-copy views), then one `Course.step()` scores every env.

Observation (float32, per env): the `lookahead_points` path points ahead of the car, `spacing_m`
apart, in its body frame (x forward, y left; `Course.lookahead`), the path's curvature at them,
the speed and the lateral offset from the path over the half width. Reward: progress along the
course (checkpoints passed, fractional), minus `off_track_penalty` when the car leaves the road.
An episode terminates on a completed lap or when the car leaves the road, and is truncated
after `max_steps` steps. The finished envs — exactly those — get a new course
(`Course.regenerate(mask, advance=True)`: generation + 1, every other env untouched) and restart
at its spawn in the same `step()` call (Gymnasium's same-step autoreset); the last observation of
the finished episode is in `info["final_obs"]`, with `info["_final_obs"]` marking those envs.

`RacingEnv` is the single-car environment (a `gymnasium.Env`, for `check_env` and
single-env tooling); `scripted_action` is a pure-pursuit controller on the observation.
"""

import math

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

import trackgen


class RacingVectorEnv(VectorEnv):
    """E cars on E trackgen courses; see the module doc."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs=16,
        preset="track",
        seed=0,
        dt=0.1,
        wheelbase_m=2.5,
        max_steer_rad=0.45,
        max_accel=6.0,
        max_speed=25.0,
        lookahead_points=10,
        spacing_m=4.0,
        max_steps=3000,
        off_track_penalty=1.0,
        threads=None,
    ):
        self.num_envs = int(num_envs)
        self._preset = trackgen.Preset(preset) if isinstance(preset, str) else preset
        self._threads = threads
        self.dt = float(dt)
        self.wheelbase_m = float(wheelbase_m)
        self.max_steer_rad = float(max_steer_rad)
        self.max_accel = float(max_accel)
        self.max_speed = float(max_speed)
        self.k = int(lookahead_points)
        self.spacing_m = float(spacing_m)
        self.max_steps = int(max_steps)
        self.off_track_penalty = float(off_track_penalty)
        self.obs_dim = 3 * self.k + 2
        self.single_observation_space = gym.spaces.Box(
            -np.inf, np.inf, shape=(self.obs_dim,), dtype=np.float32
        )
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.observation_space = gym.vector.utils.batch_space(
            self.single_observation_space, self.num_envs
        )
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self._build(seed)

    def _build(self, seed):
        self.course = trackgen.Course(
            self._preset, self.num_envs, seed=int(seed), threads=self._threads
        )
        self.course.bind(orientation=True)
        # Zero-copy views the course reads on each step() and writes on regenerate().
        self._pos = np.asarray(self.course.position)
        self._quat = np.asarray(self.course.orientation)
        out = self.course.outputs
        self._progress = np.asarray(out["progress"])
        self._lap = np.asarray(out["lap_completed"])
        self._off = np.asarray(out["off_track"])
        self._n = np.asarray(out["n"])
        self._spawn_yaw = np.asarray(self.course.geometry["spawn_yaw"])
        self.half_width_m = float(self.course.geometry["half_width_m"])
        self.yaw = self._spawn_yaw.copy()
        self.speed = np.zeros(self.num_envs, np.float32)
        self.steps = np.zeros(self.num_envs, np.int64)
        self.episodes = np.zeros(self.num_envs, np.int64)
        self.laps = 0

    def _observe(self):
        points, curvature = self.course.lookahead(self.k, self.spacing_m)
        points, curvature = np.asarray(points), np.asarray(curvature)
        obs = np.empty((self.num_envs, self.obs_dim), np.float32)
        obs[:, : 2 * self.k] = points[:, :, :2].reshape(self.num_envs, -1)
        obs[:, 2 * self.k : 3 * self.k] = curvature
        obs[:, -2] = self.speed
        obs[:, -1] = self._n / self.half_width_m
        # Off the road the localization can be far away; keep observations finite.
        np.nan_to_num(obs, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
        return obs

    def _set_yaw(self, idx=slice(None)):
        half = 0.5 * self.yaw[idx]
        self._quat[idx] = 0.0
        self._quat[idx, 2] = np.sin(half)
        self._quat[idx, 3] = np.cos(half)

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self._build(seed)
        else:
            everyone = np.ones(self.num_envs, np.uint8)
            self.course.regenerate(everyone, advance=True)
            self.yaw[:] = self._spawn_yaw
            self.speed[:] = 0.0
            self.steps[:] = 0
        self.course.step()
        return self._observe(), {}

    def _drive(self, actions):
        """Moves every car one bicycle step, steps the course; returns (reward, lap, off)."""
        actions = np.clip(np.asarray(actions, np.float32).reshape(self.num_envs, 2), -1.0, 1.0)
        steer = actions[:, 0] * self.max_steer_rad
        self.speed = np.clip(self.speed + actions[:, 1] * self.max_accel * self.dt, 0.0, self.max_speed)
        self.yaw = self.yaw + self.speed / self.wheelbase_m * np.tan(steer) * self.dt
        self._pos[:, 0] += self.speed * np.cos(self.yaw) * self.dt
        self._pos[:, 1] += self.speed * np.sin(self.yaw) * self.dt
        self._set_yaw()
        before = self._progress.copy()
        self.course.step()
        self.steps += 1
        off = self._off.astype(bool)
        lap = self._lap.astype(bool)
        reward = (self._progress - before).astype(np.float32)
        reward[off] -= self.off_track_penalty
        np.nan_to_num(reward, copy=False)
        return reward, lap, off

    def step(self, actions):
        reward, lap, off = self._drive(actions)
        terminated = lap | off
        truncated = (self.steps >= self.max_steps) & ~terminated
        self.laps += int(lap.sum())
        obs = self._observe()
        info = {}
        done = terminated | truncated
        if done.any():
            info["final_obs"] = obs.copy()
            info["_final_obs"] = done.copy()
            info["episode_laps"] = lap.copy()
            # Exactly the finished envs get a new course and restart at its spawn.
            self.course.regenerate(done.astype(np.uint8), advance=True)
            self.yaw[done] = self._spawn_yaw[done]
            self.speed[done] = 0.0
            self.steps[done] = 0
            self.episodes[done] += 1
            self._set_yaw(done)
            # regenerate() already wrote their outputs at the spawn pose.
            obs = self._observe()
        return obs, reward, terminated, truncated, info

    def close(self, **kwargs):
        pass


class RacingEnv(gym.Env):
    """One car on one course (a `gymnasium.Env`); episodes end as in `RacingVectorEnv`, and
    `reset()` gives the next course (generation + 1), or a fresh course stream with `seed`."""

    metadata = {"render_modes": []}

    def __init__(self, **kwargs):
        kwargs["num_envs"] = 1
        self._vec = RacingVectorEnv(**kwargs)
        self.observation_space = self._vec.single_observation_space
        self.action_space = self._vec.single_action_space

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        obs, info = self._vec.reset(seed=seed, options=options)
        return obs[0], info

    def step(self, action):
        v = self._vec
        reward, lap, off = v._drive(action)
        terminated = bool(lap[0] or off[0])
        truncated = bool(v.steps[0] >= v.max_steps) and not terminated
        return v._observe()[0], float(reward[0]), terminated, truncated, {}


def scripted_action(obs, k=10, target_index=2, wheelbase_m=2.5, max_steer_rad=0.45, target_speed=12.0):
    """Pure pursuit on the observation: steer toward lookahead point `target_index` (body
    frame), throttle toward `target_speed`. Works on one observation `[D]` or a batch `[E, D]`."""
    obs = np.atleast_2d(obs)
    x = obs[:, 2 * target_index]
    y = obs[:, 2 * target_index + 1]
    d2 = np.maximum(x * x + y * y, 1e-6)
    steer = np.arctan(2.0 * wheelbase_m * y / d2) / max_steer_rad
    speed = obs[:, 3 * k]
    throttle = np.clip(0.5 * (target_speed - speed), -1.0, 1.0)
    return np.clip(np.stack([steer, throttle], axis=1), -1.0, 1.0).astype(np.float32)


if __name__ == "__main__":
    env = RacingVectorEnv(num_envs=64, seed=0)
    obs, _ = env.reset(seed=0)
    total = np.zeros(env.num_envs)
    for _ in range(1500):
        obs, reward, terminated, truncated, info = env.step(scripted_action(obs))
        total += reward
    print(f"laps completed: {env.laps}, episodes: {int(env.episodes.sum())}, "
          f"mean return: {total.mean():.1f}")
