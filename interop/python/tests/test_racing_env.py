"""The racing environment example: Gymnasium's checker, laps by a scripted controller, exactly
the finished envs regenerated."""

import numpy as np
from gymnasium.utils.env_checker import check_env

from racing_env import RacingEnv, RacingVectorEnv, scripted_action


def test_single_env_passes_the_gymnasium_checker():
    check_env(RacingEnv(seed=0), skip_render_check=True)


def test_scripted_controller_completes_laps_and_only_finished_envs_regenerate():
    env = RacingVectorEnv(num_envs=6, seed=0)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (6, env.obs_dim) and obs.dtype == np.float32
    assert env.observation_space.contains(obs)
    gen = np.asarray(env.course.generation)
    total = np.zeros(6)
    for _ in range(2000):
        before = gen.copy()
        obs, reward, terminated, truncated, info = env.step(scripted_action(obs))
        total += reward
        done = terminated | truncated
        assert np.array_equal(gen - before, done.astype(np.uint32))
        if env.laps >= 6:
            break
    assert env.laps >= 6, (env.laps, env.episodes)
    assert total.min() > 0
