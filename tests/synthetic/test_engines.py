"""The engine a token-model run is drawn by (benign.synthetic.engines): ``auto`` is the Gram
engine where the model has it and d is at least 2(nT + 2), explicit otherwise."""

from benign.synthetic.engines import gram_min_d, resolve


def test_auto_is_gram_from_two_nt_plus_four_on_where_the_model_has_it():
    assert gram_min_d(20, 8) == 324  # 2 (20 * 8 + 2), worked by hand
    assert resolve("auto", ("explicit", "gram"), 20, 8, 324) == "gram"
    assert resolve("auto", ("explicit", "gram"), 20, 8, 323) == "explicit"
    assert resolve("auto", ("explicit",), 20, 8, 10**6) == "explicit"  # a model without the Gram engine


def test_a_named_engine_is_kept_and_none_is_explicit():
    assert resolve("gram", ("explicit", "gram"), 20, 8, 10) == "gram"  # the spec refuses it where d is too small
    assert resolve("explicit", ("explicit", "gram"), 20, 8, 10**6) == "explicit"
    assert resolve(None, ("explicit", "gram"), 20, 8, 10**6) == "explicit"
