"""agentenv-sb3: train stable-baselines3 and torch policies on agentenv coding tasks.

``EditChoiceEnv`` (Discrete(K) candidate edits, Box features of the last execution) and
``TokenSynthesisEnv`` (Discrete(V) tokens, MultiDiscrete program so far) make agentenv tasks
trainable by SB3; ``train`` runs PPO/A2C/DQN on a suite; ``train_text_policy`` is the REINFORCE
loop over single-shot environments that an LLM post-training framework would run.
"""

from ._common import CACHE, ExecutionCache, TrainingError
from .edit_choice import EditChoiceEnv, generate_candidates, task_candidates
from .tokens import VOCAB, TokenSynthesisEnv
from .train import TrainResult, random_baseline, resolve_device, train
from .text_policy import train_text_policy

__all__ = [
    "CACHE",
    "EditChoiceEnv",
    "ExecutionCache",
    "TokenSynthesisEnv",
    "TrainResult",
    "TrainingError",
    "VOCAB",
    "generate_candidates",
    "random_baseline",
    "resolve_device",
    "task_candidates",
    "train",
    "train_text_policy",
]

# Imported before agentenv, this package's plugin was left pending while we were being imported:
# register its suites' Gymnasium ids now (a no-op when agentenv was imported first).
import agentenv as _agentenv  # noqa: E402

_agentenv.register_envs()
