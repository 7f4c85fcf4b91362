"""scan_weights: the first layers' weights on the height scan's inputs, on synthetic checkpoints with known norms."""

import json

import pytest
import scan_weights
import torch

from isaaclab_diffsim.experiments.scan_weights import SCAN_WEIGHT_FIELDS, scan_columns, scan_weight_record

SCAN = {"size": (0.2, 0.1), "resolution": 0.1}  # 3 x 2 = 6 points


B1 = 0.7  # SHAC's Adam betas (0.7, 0.95)


def adam_state(shape: tuple, steps: int = 200) -> dict:
    """Adam's state after ``steps`` gradients that are 0.5 on the first 3 columns (a gradient that keeps its value)
    and +-0.5 alternating on the others (one that flips its sign every step), with a log-std parameter after it."""
    weight, log_std = torch.nn.Parameter(torch.zeros(shape)), torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.Adam([weight, log_std], lr=1e-3, betas=(B1, 0.95))
    for k in range(steps):
        weight.grad = torch.full(shape, 0.5)
        weight.grad[:, 3:] *= (-1) ** k
        log_std.grad = torch.ones(2)
        opt.step()
    return opt.state_dict()


def state(num_obs: int = 9, scan: dict | None = SCAN) -> dict:
    """3 flat-MDP inputs and a 6-point scan; the actor's column j is (j, 0, 0, 0) (norm j), the critic's all ones
    over 4 rows (norm 2), the scan's normaliser variance 4 (std 2), the actor optimizer of :func:`adam_state`."""
    actor = torch.zeros(4, num_obs)
    actor[0] = torch.arange(num_obs, dtype=torch.float32)
    var = torch.ones(num_obs)
    var[3:] = 4.0
    return {
        "model_state_dict": {"actor.0.weight": actor, "critic.0.weight": torch.ones(4, num_obs)},
        "obs_normalizer_state_dict": {"mean": torch.zeros(num_obs), "var": var, "count": torch.tensor(10.0)},
        "actor_optimizer_state_dict": adam_state((4, num_obs)),
        "env_cfg": {"observation_space": 3, "height_scan": scan},
    }


def test_scan_columns_follow_the_flat_terms():
    assert scan_columns({"observation_space": 48, "height_scan": {"size": (1.6, 1.0), "resolution": 0.1}}) == slice(
        48, 48 + 187
    )


def test_record_on_known_weights():
    r = scan_weight_record(state())
    expected = {
        "actor_flat_norm": 1.0,  # (0 + 1 + 2) / 3
        "actor_scan_norm": 5.5,  # (3 + ... + 8) / 6
        "critic_flat_norm": 2.0,
        "critic_scan_norm": 2.0,
        "scan_std": 2.0,
        "actor_scan_per_m": 2.75,
    }
    # Adam's moments are float32: a steady gradient has m = v^0.5; one alternating in sign |m| = (1 - b1) / (1 + b1)
    # v^0.5 (a geometric series)
    expected_snr = {"actor_flat_grad_snr": 1.0, "actor_scan_grad_snr": (1 - B1) / (1 + B1)}
    assert set(r) == set(SCAN_WEIGHT_FIELDS)
    assert {k: r[k] for k in expected} == pytest.approx(expected, abs=1e-12)
    assert {k: r[k] for k in expected_snr} == pytest.approx(expected_snr, abs=1e-6)


def test_grad_snr_of_an_early_step_is_bias_corrected():
    """After one step both moments are the first gradient once bias-corrected, so the ratio is exactly 1."""
    r = scan_weight_record({**state(), "actor_optimizer_state_dict": adam_state((4, 9), steps=1)})
    assert r["actor_flat_grad_snr"] == pytest.approx(1.0, abs=1e-6)
    assert r["actor_scan_grad_snr"] == pytest.approx(1.0, abs=1e-6)


def test_script_prints_and_writes_the_records(tmp_path, capsys):
    path = tmp_path / "model_5.pt"
    torch.save(state(), path)
    out = tmp_path / "sub" / "w.json"
    scan_weights.main([str(path), "--out", str(out)])
    assert json.loads(out.read_text())[str(path)]["actor_scan_norm"] == pytest.approx(5.5)
    assert "actor_scan_per_m 2.750" in capsys.readouterr().out


@pytest.mark.parametrize(
    "ck, message",
    [
        (state(scan=None), "has no height_scan"),
        (state(num_obs=6), "actor.0.weight has 6 inputs, the scan ends at input 9"),
        (
            {**state(), "actor_optimizer_state_dict": adam_state((4, 8))},
            "the actor optimizer's first parameter has moments of shape (4, 8), not (4, 9)",
        ),
        ({"model_state_dict": {}}, "missing"),
    ],
)
def test_script_errors_in_one_line(tmp_path, ck, message):
    path = tmp_path / "model_1.pt"
    torch.save(ck, path)
    with pytest.raises(SystemExit) as err:
        scan_weights.main([str(path)])
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)
