"""scripts/play.py labels each joint row with the joint the trace column holds, in the model's leg order."""

import importlib.util
from pathlib import Path

import pytest

from isaaclab_diffsim.tasks.direct.locomotion.velocity import DiffVelocityEnv, DiffVelocityEnvCfg

ROOT = Path(__file__).resolve().parents[2]


def load_play():
    spec = importlib.util.spec_from_file_location("play_script", ROOT / "scripts" / "play.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("source", ["urdf", "usd"])  # legs LF, RF, LH, RH vs Isaac Lab's LF, LH, RF, RH
def test_joint_rows_match_model_joints(source):
    play = load_play()
    env = DiffVelocityEnv(DiffVelocityEnvCfg(num_envs=1, asset_source=source))
    legs = play.joint_rows_by_leg(env.layout.joint_names)
    assert sorted(legs) == ["LF", "LH", "RF", "RH"] and all(len(j) == 3 for j in legs.values())
    # the trace column c is q[7 + c]: the model's joint whose first coordinate is 7 + c
    q_start = env.model.joint_q_start.numpy()
    label_of_coord = {int(q_start[j]): env.model.joint_label[j].rsplit("/", 1)[-1] for j in range(len(q_start) - 1)}
    for leg, joints in legs.items():
        for col, joint in joints:
            assert label_of_coord[7 + col] == f"{leg}_{joint}", (source, col)
