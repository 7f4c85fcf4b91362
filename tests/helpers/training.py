"""Arguments of ``scripts/train.py`` for runs that take seconds: 2 envs, tiny networks, short horizons."""

TINY_SHAC = [
    "--num_envs",
    "2",
    "agent.horizon=4",
    "agent.policy.actor_hidden_dims=[16]",
    "agent.policy.critic_hidden_dims=[16]",
    "agent.algorithm.critic_iterations=1",
    "env.episode_length_s=0.2",
]
