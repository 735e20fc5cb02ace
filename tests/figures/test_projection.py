"""Figure 1 (benign.figures.projection): each panel draws the tokens its setting selects, and names its split's accuracy."""

from benign.figures import projection
from benign.synthetic.data_model import DataSpec
from benign.synthetic.token_projection import token_projection
from tests.helpers.figures import assert_rendered


def test_token_projection(tmp_path, drawn):
    """Two rows (train, test) of one panel per setting; each panel draws exactly the tokens its
    setting's inputs of that split select, and names the split's accuracy."""
    from benign.synthetic.token_projection import projection_accuracy

    cfg = DataSpec(n=20, T=6, d=300, rho=0.2, signal_norm=20.0, eta=0.2, n_test=20, seed=1)
    points = token_projection(cfg, {"harmful": 1.0, "benign": 0.06, "not_overfitting": 0.001})
    projection.token_projection(points, cfg, tmp_path / "fig1")
    assert_rendered(tmp_path / "fig1")
    panels, accuracy = drawn["fig1"], projection_accuracy(points).set_index("setting")
    settings = list(accuracy.index)
    assert len(panels) == 2 * len(settings) == 6
    for k, panel in enumerate(panels):
        split, setting = ("train", "test")[k // 3], settings[k % 3]
        sub = points[(points["setting"] == setting) & (points["split"] == split)]
        assert sorted(map(tuple, panel["points"])) == sorted(zip(sub["proj_neg"], sub["proj_pos"]))
        assert panel["title"].endswith(f"{split}: accuracy {accuracy.loc[setting, f'{split}_acc']:.2f}")
