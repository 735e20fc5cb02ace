"""The native skinny matrix products (benign/native) against float64 products, and the encoder
trained through them against the dense float64 encoder."""

import pytest
import torch
import torch.nn.functional as F
from reference_models import encoder_dense

from benign import native
from benign.encoder import EncoderBatch

pytestmark = pytest.mark.skipif(native.compiler() is None, reason="no C++ compiler on this machine")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("native")


@pytest.fixture
def everywhere(monkeypatch, cache):
    """The kernels built (once) into a temporary cache, used for every size, at one thread."""
    monkeypatch.setenv("BENIGN_NATIVE_CACHE", str(cache))
    monkeypatch.setenv("BENIGN_NATIVE", "1")
    monkeypatch.setattr(native, "MIN_NN", 0)
    monkeypatch.setattr(native, "MIN_NT", 0)
    native.reset()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
    native.reset()


def _operands(B, M, K, N, transposed, g):
    """Row-strided views (leading dimensions larger than the row, not whole cache lines), as the
    kernels must accept."""
    x = torch.randn(B, M, K + 3, generator=g)[..., :K]
    W = torch.randn(B, N, K + 5, generator=g)[..., :K] if transposed else torch.randn(B, K, N + 5, generator=g)[..., :N]
    return x, W


SHAPES = [  # (M, K, N): rows at and around the register tiles (10, 12), columns around the
    (1, 40, 33),  # vector width (16) and the 256-row passes over the matrix
    (3, 17, 16),
    (4, 300, 31),
    (7, 16, 47),
    (10, 33, 64),
    (11, 257, 50),
    (20, 520, 200),
    (23, 64, 7),
    (64, 100, 97),
]


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_products_match_float64(everywhere, shape, transposed):
    M, K, N = shape
    g = torch.Generator().manual_seed(M * 1000 + K)
    x, W = _operands(2, M, K, N, transposed, g)
    out = native.native_matmul(x, W, transposed)
    ref = torch.bmm(x.double(), (W.transpose(1, 2) if transposed else W).double())
    assert out.shape == ref.shape and out.dtype == torch.float32
    # float32 rounding of a K-term sum of O(1) products (observed: below 2e-7 K); a wrong or
    # missing term would be off by O(1)
    torch.testing.assert_close(out.double(), ref, rtol=0, atol=1e-6 * K)
    assert torch.equal(native.native_matmul(x, W, transposed), out)  # same order, same bits
    # plus a low-rank term E F (pending updates)
    r = 1 + M % 7
    E, Fr = torch.randn(2, M, r, generator=g), torch.randn(2, r, N, generator=g)
    both = native.matmul(x, W, transposed, low_rank=(E, Fr))
    ref_both = ref + torch.bmm(E.double(), Fr.double())
    torch.testing.assert_close(both.double(), ref_both, rtol=0, atol=1e-6 * (K + r))


def test_applies_where_measured_faster_and_falls_back_elsewhere(everywhere, monkeypatch):
    g = torch.Generator().manual_seed(2)
    x, W = torch.randn(1, 8, 32, generator=g), torch.randn(1, 32, 32, generator=g)  # rows of 128 bytes
    assert native.applies(x, W, False) and native.applies(x, W, True)
    _, W_odd = _operands(1, 8, 32, 32, False, g)  # rows 37 floats apart: x W stays with the BLAS
    assert not native.applies(x, W_odd, False) and native.applies(x, W_odd, True)
    assert not native.applies(x.double(), W.double(), False)  # float64: torch
    assert not native.applies(torch.randn(1, native.MAX_ROWS + 1, 32), W, False)  # many rows: the BLAS
    torch.set_num_threads(2)
    assert not native.applies(x, W, False)  # several threads: the threaded BLAS
    torch.set_num_threads(1)
    monkeypatch.setattr(native, "MIN_NN", 32 * 32 + 1)
    assert not native.applies(x, W, False) and native.applies(x, W, True)  # small matrix
    monkeypatch.setattr(native, "MIN_NT", 32 * 32 + 1)
    assert not native.applies(x, W, True)
    monkeypatch.setattr(native, "MIN_NN", 0)
    monkeypatch.setenv("BENIGN_NATIVE", "0")
    assert not native.applies(x, W, False)
    assert torch.equal(native.matmul(x, W), torch.bmm(x, W))


def test_a_failing_compiler_means_torch_products_and_a_warning(everywhere, monkeypatch, caplog):
    monkeypatch.setenv("CXX", "false")  # exits 1 whatever it is asked
    native.reset()
    g = torch.Generator().manual_seed(3)
    x, W = torch.randn(1, 8, 32, generator=g), torch.randn(1, 32, 32, generator=g)
    with caplog.at_level("WARNING", logger="benign.native"):
        assert not native.applies(x, W, False)
    assert "native kernels unavailable" in caplog.text
    assert torch.equal(native.matmul(x, W), torch.bmm(x, W))


def test_library_is_built_once_into_the_cache(everywhere, monkeypatch, tmp_path):
    monkeypatch.setenv("BENIGN_NATIVE_CACHE", str(tmp_path))
    native.reset()
    assert native.library() is not None
    built = list(tmp_path.glob("skinny-*.so"))
    assert len(built) == 1
    stamp = built[0].stat().st_mtime_ns
    native.reset()
    assert native.library() is not None
    assert built[0].stat().st_mtime_ns == stamp  # loaded, not rebuilt
    assert not list(tmp_path.glob("*.tmp"))


def test_encoder_float32_through_the_kernels_matches_float64_dense(everywhere):
    """An encoder whose products all go to the kernels (n 20 rows, and the [CLS] row; d and
    mlp_dim off the vector width, matrices padded to whole cache lines), float32, against the
    dense float64 autograd encoder: 12 steps, deferred updates."""
    model = EncoderBatch(
        n=20, T=4, d=40, sigma=1.0, n_test=30, seed=4, mlp_dim=36, signal_norms=[3.0, 5.0], rhos=[0.1, 0.1],
        etas=[0.2, 0.0], lrs=[0.1, 0.1], dtype=torch.float32, defer_rows=40,
    )  # fmt: skip
    for name in ("Wq", "Wv", "W1", "W2"):  # (W_k acts transposed)
        for rows in (1, 20):
            d_in = model.P[name].shape[1]
            assert native.applies(torch.zeros(2, rows, d_in), model.P[name], False)
            assert native.applies(torch.zeros(2, rows, model.P[name].shape[2]), model.P[name], True)
    ref = {k: v.double().clone().requires_grad_(True) for k, v in model.parameters(1).items()}
    X = model.X[1].double()
    for _ in range(12):
        f_ref, att_ref = encoder_dense(ref, X)
        f, att = model.step()
        torch.testing.assert_close(f[1].double(), f_ref.detach(), rtol=0, atol=2e-5)
        torch.testing.assert_close(att[1].double(), att_ref[:, 0].detach(), rtol=0, atol=2e-6)
        loss = F.softplus(-model.y[1].double() * f_ref).mean()
        grads = torch.autograd.grad(loss, list(ref.values()))
        with torch.no_grad():
            for p, g in zip(ref.values(), grads):
                p -= 0.1 * g
    for name, value in model.parameters(1).items():
        torch.testing.assert_close(value.double(), ref[name].detach(), rtol=0, atol=2e-5, msg=name)
    assert ref["cls"].abs().max() > 1e-3
