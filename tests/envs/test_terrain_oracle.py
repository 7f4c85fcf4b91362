"""``env.terrain_oracle``: the one-hot sub-terrain type of the tile below each base, after the height scan; the tile
lookup on the generator's grid; the refusals (no terrain, export)."""

import gymnasium as gym
import pytest
import torch

import isaaclab_diffsim.tasks  # noqa: F401  (registers the tasks)
from isaaclab_diffsim.deploy import export_bundle
from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnvCfg
from isaaclab_diffsim.tasks.direct.locomotion.velocity.config.anymal_c.rough_env_cfg import AnymalCRoughDiffEnvCfg
from isaaclab_diffsim.terrains import TileTypes, rough_terrains_cfg
from isaaclab_diffsim.terrains.grid_groups import column_sub_terrains

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TASK = "DiffSim-Velocity-Rough-AnymalC-Direct"


def test_tile_types_on_a_synthetic_grid():
    gen = rough_terrains_cfg(num_rows=2, num_cols=10)  # 6 types over 10 columns: 2 2 2 2 1 1
    size = (8.0, 8.0)
    rows, cols = torch.meshgrid(torch.arange(2.0), torch.arange(10.0), indexing="ij")
    origins = torch.stack([rows * 8.0 - 4.0, cols * 8.0 - 36.0, torch.zeros_like(rows)], -1)  # tile centres
    tiles = TileTypes(gen, origins, size)
    assert tiles.num_entries == 7
    columns = column_sub_terrains(gen)
    assert columns.tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 5]
    # a tile's centre, points just inside two of its edges, and points off the grid on every side
    xy = torch.tensor(
        [[-4.0, -36.0], [3.9, 35.9], [0.1, -0.1], [-8.1, 0.0], [8.1, 0.0], [0.0, -40.1], [0.0, 40.1], [-4.0, 4.1]]
    )
    assert tiles.types(xy).tolist() == [0, 5, int(columns[4]), 6, 6, 6, 6, int(columns[5])]
    onehot = tiles.one_hot(xy)
    assert onehot.shape == (8, 7) and torch.equal(onehot.sum(1), torch.ones(8))
    assert torch.equal(onehot.argmax(1), tiles.types(xy))


def oracle_env(seed: int = 3):
    cfg = AnymalCRoughDiffEnvCfg(num_envs=6, asset_source="urdf", seed=seed, terrain_oracle=True)
    cfg.terrain.curriculum = True
    gen = cfg.terrain.generator
    gen.num_rows, gen.num_cols, gen.border_width = 3, 6, 2.0
    cfg.events.push_velocity = 0.0
    cfg.observations.enable_corruption = False
    return gym.make(TASK, cfg=cfg).unwrapped


def test_the_env_observes_the_type_of_the_tile_below_each_base():
    env = oracle_env()
    try:
        cols = env.terrain_type_columns
        assert cols == slice(48 + 187, 48 + 187 + 7) and env.num_obs == cols.stop
        env.reset(seed=3)
        with torch.no_grad():
            obs = env.step(torch.zeros(6, 12))[0]
        # every base starts on its own column's tile (types 0..5 of the 6 columns, Isaac Lab's blocks)
        want = torch.as_tensor(column_sub_terrains(env.cfg.terrain.generator))[env.terrain_levels.types]
        assert torch.equal(obs[:, cols].argmax(1), want)
        assert torch.equal(obs[:, cols].sum(1), torch.ones(6))
        # moved past the terrain's last row, a base is over the border
        q = env.q.detach().clone()
        q[:, 0] = float(env.tile_types.corner[0]) + 3 * env.terrain.sub_terrain_size[0] + 0.5
        assert torch.equal(env._observations(q, env.qd, env.last_actions)[:, cols].argmax(1), torch.full((6,), 6))
        with pytest.raises(ValueError, match="env.terrain_oracle"):
            export_bundle(env, torch.nn.Identity(), "unused", env.cfg.to_dict(), "shac")
    finally:
        env.close()


def test_the_oracle_without_a_terrain_is_refused():
    cfg = DiffVelocityEnvCfg(num_envs=2, terrain_oracle=True)
    with pytest.raises(ValueError, match="terrain_oracle: True needs a terrain"):
        cfg.validate_values()
