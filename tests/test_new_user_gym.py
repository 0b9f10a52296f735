"""What a Gymnasium user expects of ``gym.make`` (issue 18): the README's dict actions are in the
action space, ``spec.max_episode_steps`` is the episode's length, a misspelt keyword is named."""

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import agentenv  # noqa: F401  (registers the environments)

AGENTIC = "agentenv/examples.bank_transfer-v0"
SINGLE_SHOT = "agentenv/examples.fizzbuzz-v0"
README_ACTIONS = [{"action": "run_command", "command": "python -m pytest -q"}, {"action": "submit"}]


def test_the_readme_dict_actions_are_in_the_agentic_action_space():
    env = gym.make(AGENTIC)
    try:
        for action in README_ACTIONS:
            assert env.action_space.contains(action), action
        assert env.action_space.contains('{"action": "submit"}')  # the JSON text too
        assert not env.action_space.contains({"command": "ls"}) and not env.action_space.contains(42)
        check_env(env.unwrapped, skip_render_check=True)  # sample() still draws text the env answers
    finally:
        env.close()


def test_single_shot_actions_are_program_text_only():
    env = gym.make(SINGLE_SHOT)
    try:
        assert env.action_space.contains("def fizzbuzz(n):\n    return []\n")
        assert not env.action_space.contains({"action": "submit"})
    finally:
        env.close()


def test_spec_max_episode_steps_is_the_episode_length_and_the_episode_ends_there():
    single = gym.make(SINGLE_SHOT)
    assert single.spec.max_episode_steps == 1
    single.close()
    env = gym.make(AGENTIC)
    assert env.spec.max_episode_steps == env.unwrapped.task.max_rounds == 30
    env.close()
    env = gym.make(AGENTIC, max_rounds=3)
    try:
        assert env.spec.max_episode_steps == 3
        env.reset(seed=0)
        for round_ in range(1, 4):
            _, _, terminated, truncated, info = env.step(README_ACTIONS[0])
            assert terminated is False and truncated is (round_ == 3)
        assert "score" in info and info["runs"] >= 1  # truncated by the env itself, after the evaluation
        again = gym.make(env.spec)  # a spec recreates the same environment
        assert again.spec.max_episode_steps == 3 and again.unwrapped.max_rounds == 3
        again.close()
    finally:
        env.close()


def test_a_misspelt_keyword_gets_a_did_you_mean():
    with pytest.raises(TypeError, match=r"'mdoe' \(did you mean 'mode'\?\)"):
        gym.make(SINGLE_SHOT, mdoe="agentic")
    with pytest.raises(TypeError, match=r"'rewad_mode' \(did you mean 'reward_mode'"):
        gym.make("agentenv/Task-v0", task="x.json", rewad_mode="dense")
