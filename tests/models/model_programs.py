"""The real-program suite: JAX programs as users write them, with flax, optax, jax.numpy,
jax.scipy, jax.nn, jax.random and lax control flow.

Each program is one record: a name, what it exercises, and `make()`, which returns the
function and its example arguments (numpy arrays or pytrees of them; flax parameters are
initialised by JAX and handed over as numpy).  The suite runs every program through
`xlair.jit` and `jax.jit` on the same arguments and compares every output leaf
(tests/models/test_models.py, compared by model_compare.py); docs/models.md is generated from the same records.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

PROGRAMS: dict[str, "Program"] = {}


@dataclasses.dataclass(frozen=True)
class Program:
    name: str
    kind: str                  # "flax", "optax", "jax.numpy", "lax control flow", "mixed precision", ...
    doc: str
    make: Callable             # () -> (fn, args tuple)
    rtol: float = 2e-4         # per output leaf, scaled by the leaf's largest magnitude for atol
    atol: float = 2e-5
    vulkan: bool = False       # in the Vulkan subset that `make test` runs on lavapipe


def program(kind: str, *, rtol=2e-4, atol=2e-5, vulkan=False):
    def deco(make):
        name = make.__name__
        PROGRAMS[name] = Program(name, kind, (make.__doc__ or "").strip().splitlines()[0], make,
                                 rtol, atol, vulkan)
        return make
    return deco


def _np(tree):
    import jax
    return jax.tree_util.tree_map(np.asarray, tree)


def _rng(seed=0):
    return np.random.default_rng(seed)


def _f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# flax linen
# ---------------------------------------------------------------------------------------------

def _mlp(features=(256, 128, 10)):
    import flax.linen as nn

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            for f in features[:-1]:
                x = nn.relu(nn.Dense(f)(x))
            return nn.Dense(features[-1])(x)
    return MLP()


@program("flax", vulkan=True)
def mlp_forward():
    """flax linen MLP 784-256-128-10, relu, forward on a batch of 64"""
    import jax
    m = _mlp()
    x = _f32(_rng(), 64, 784)
    params = _np(m.init(jax.random.key(0), x))
    return (lambda p, x: m.apply(p, x)), (params, x)


def _xent(logits, labels):
    import jax.numpy as jnp
    import optax
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, labels))


def _classifier_step(m, opt, params, x, y):
    """A training step of a flax classifier with an optax optimiser: (step, its arguments)."""
    import jax
    import optax

    def step(params, state, x, y):
        loss, g = jax.value_and_grad(lambda p: _xent(m.apply(p, x), y))(params)
        upd, state = opt.update(g, state, params)
        return optax.apply_updates(params, upd), state, loss
    return step, (params, _np(opt.init(params)), x, y)


@program("optax")
def mlp_adam_step():
    """MLP 784-256-128-10 training step: softmax cross-entropy, value_and_grad, optax Adam"""
    import jax
    import optax
    m = _mlp()
    rng = _rng(1)
    x, y = _f32(rng, 64, 784), rng.integers(0, 10, 64).astype(np.int32)
    params = _np(m.init(jax.random.key(1), x))
    return _classifier_step(m, optax.adam(1e-3), params, x, y)


class _CNNDefs:
    @staticmethod
    def cnn():
        import flax.linen as nn

        class CNN(nn.Module):
            @nn.compact
            def __call__(self, x):
                x = nn.relu(nn.Conv(16, (3, 3), strides=(2, 2))(x))
                x = nn.max_pool(x, (2, 2), strides=(2, 2))
                x = nn.relu(nn.Conv(32, (3, 3), kernel_dilation=(2, 2), padding="VALID")(x))
                x = nn.avg_pool(x, (2, 2), strides=(1, 1), padding="SAME")
                x = x.reshape((x.shape[0], -1))
                return nn.Dense(10)(x)
        return CNN()


@program("flax")
def cnn_forward():
    """CNN: strided conv, max pool, dilated conv, avg pool, dense (NHWC 8x28x28x1)"""
    import jax
    m = _CNNDefs.cnn()
    x = _f32(_rng(2), 8, 28, 28, 1)
    params = _np(m.init(jax.random.key(2), x))
    return (lambda p, x: m.apply(p, x)), (params, x)


@program("optax")
def cnn_sgd_step():
    """CNN training step: cross-entropy gradient through convs and pools, optax SGD with momentum"""
    import jax
    import optax
    m = _CNNDefs.cnn()
    rng = _rng(3)
    x, y = _f32(rng, 8, 28, 28, 1), rng.integers(0, 10, 8).astype(np.int32)
    params = _np(m.init(jax.random.key(3), x))
    return _classifier_step(m, optax.sgd(0.05, momentum=0.9), params, x, y)


@program("flax")
def depthwise_conv_grad():
    """Depthwise-separable conv block (feature_group_count = channels) and its input/weight gradients"""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Conv(16, (3, 3), feature_group_count=16, padding="SAME")(x)
            x = nn.silu(x)
            return nn.Conv(24, (1, 1))(x)
    m = Block()
    x = _f32(_rng(4), 4, 12, 12, 16)
    params = _np(m.init(jax.random.key(4), x))
    return jax.grad(lambda p, x: jnp.sum(m.apply(p, x) ** 2), argnums=(0, 1)), (params, x)


def _resnet_block():
    import flax.linen as nn

    class ResBlock(nn.Module):
        train: bool

        @nn.compact
        def __call__(self, x):
            norm = lambda: nn.BatchNorm(use_running_average=not self.train, momentum=0.9)  # noqa: E731
            y = nn.relu(norm()(nn.Conv(8, (3, 3), use_bias=False)(x)))
            y = norm()(nn.Conv(8, (3, 3), use_bias=False)(y))
            return nn.relu(x + y)
    return ResBlock


@program("flax")
def resnet_block_train():
    """ResNet basic block with BatchNorm in training mode: loss gradient and updated batch_stats"""
    import jax
    import jax.numpy as jnp
    R = _resnet_block()
    x = _f32(_rng(5), 4, 10, 10, 8)
    v = _np(R(train=True).init(jax.random.key(5), x))

    def step(params, stats, x):
        def loss(p):
            y, upd = R(train=True).apply({"params": p, "batch_stats": stats}, x, mutable=["batch_stats"])
            return jnp.mean(y ** 2), upd["batch_stats"]
        (l, new_stats), g = jax.value_and_grad(loss, has_aux=True)(params)
        return l, g, new_stats
    return step, (v["params"], v["batch_stats"], x)


@program("flax")
def resnet_block_eval():
    """ResNet basic block with BatchNorm in inference mode (running averages)"""
    import jax
    R = _resnet_block()
    rng = _rng(6)
    x = _f32(rng, 4, 10, 10, 8)
    v = _np(R(train=False).init(jax.random.key(6), x))
    v["batch_stats"] = jax.tree_util.tree_map(lambda a: (np.abs(a) + rng.random(a.shape)).astype(np.float32),
                                              v["batch_stats"])
    return (lambda v, x: R(train=False).apply(v, x)), (v, x)


def _encoder(dim=64, heads=4, causal=False, rms=False, act="gelu"):
    import flax.linen as nn
    import jax.numpy as jnp

    class Encoder(nn.Module):
        @nn.compact
        def __call__(self, x):
            norm = nn.RMSNorm if rms else nn.LayerNorm
            mask = nn.make_causal_mask(jnp.ones(x.shape[:2], jnp.int32)) if causal else None
            h = nn.SelfAttention(num_heads=heads, qkv_features=dim)(norm()(x), mask=mask)
            x = x + h
            f = getattr(nn, act)
            h = nn.Dense(dim)(f(nn.Dense(4 * dim)(norm()(x))))
            return x + h
    return Encoder()


@program("flax")
def transformer_encoder_grad():
    """Transformer encoder layer (SelfAttention, LayerNorm, Dense, gelu): gradient of a loss"""
    import jax
    import jax.numpy as jnp
    m = _encoder()
    x = _f32(_rng(7), 2, 16, 64)
    params = _np(m.init(jax.random.key(7), x))
    return jax.grad(lambda p, x: jnp.mean(m.apply(p, x) ** 2)), (params, x)


@program("flax", vulkan=True)
def transformer_decoder_forward():
    """Decoder block: causal mask, multi-head attention, RMSNorm, silu MLP"""
    import jax
    m = _encoder(causal=True, rms=True, act="silu")
    x = _f32(_rng(8), 2, 16, 64)
    params = _np(m.init(jax.random.key(8), x))
    return (lambda p, x: m.apply(p, x)), (params, x)


@program("flax")
def dropout_train():
    """Dense + dropout(0.3) in training mode with an explicit rng key"""
    import flax.linen as nn
    import jax

    class Drop(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dropout(0.3, deterministic=False)(nn.relu(nn.Dense(32)(x)))
    m = Drop()
    x = _f32(_rng(9), 16, 32)
    params = _np(m.init(jax.random.key(9), x))
    key = np.asarray(jax.random.key_data(jax.random.key(42)))

    def f(p, x, key):
        return m.apply(p, x, rngs={"dropout": jax.random.wrap_key_data(key)})
    return f, (params, x, key)


@program("flax")
def embedding_grad():
    """Token embedding lookup and its gradient (a scatter-add into the table)"""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp

    class Emb(nn.Module):
        @nn.compact
        def __call__(self, ids):
            e = nn.Embed(100, 32)
            return e.attend(e(ids).mean(axis=1))
    m = Emb()
    ids = _rng(10).integers(0, 100, (8, 12)).astype(np.int32)
    params = _np(m.init(jax.random.key(10), ids))
    return jax.grad(lambda p, ids: jnp.sum(jax.nn.log_softmax(m.apply(p, ids)))), (params, ids)


def _rnn(cell_name):
    import flax.linen as nn
    import jax
    cell = getattr(nn, cell_name)(features=32)
    x = _f32(_rng(11), 20, 4, 16)          # time, batch, features
    carry = cell.initialize_carry(jax.random.key(0), (4, 16))
    params = _np(cell.init(jax.random.key(11), carry, x[0]))
    carry = _np(carry)

    def run(p, carry, xs):
        def body(c, x):
            return cell.apply(p, c, x)
        return jax.lax.scan(body, carry, xs)
    return run, (params, carry, x)


@program("lax control flow")
def lstm_scan():
    """flax LSTMCell over 20 steps under lax.scan"""
    return _rnn("LSTMCell")


@program("lax control flow")
def gru_scan_grad():
    """flax GRUCell over 20 steps under lax.scan, gradient of the final state"""
    import jax
    import jax.numpy as jnp
    run, (params, carry, x) = _rnn("GRUCell")
    return jax.grad(lambda p, c, xs: jnp.sum(run(p, c, xs)[1][-1] ** 2)), (params, carry, x)


@program("optax", rtol=1e-3, atol=1e-4)
def gpt_adamw_step():
    """Small GPT (embeddings, 2 causal blocks, tied head) training step: AdamW, cosine schedule, grad clipping"""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import optax

    class GPT(nn.Module):
        @nn.compact
        def __call__(self, ids):
            emb = nn.Embed(64, 32)
            pos = self.param("pos", nn.initializers.normal(0.02), (ids.shape[1], 32))
            x = emb(ids) + pos
            for _ in range(2):
                x = _encoder(dim=32, heads=2, causal=True)(x)
            return emb.attend(nn.LayerNorm()(x))
    m = GPT()
    ids = _rng(12).integers(0, 64, (4, 17)).astype(np.int32)
    params = _np(m.init(jax.random.key(12), ids[:, :-1]))
    sched = optax.warmup_cosine_decay_schedule(0.0, 3e-3, 10, 100)
    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(sched, weight_decay=0.01))
    state = _np(opt.init(params))

    def step(params, state, ids):
        def loss(p):
            return _xent(m.apply(p, ids[:, :-1]), ids[:, 1:])
        l, g = jax.value_and_grad(loss)(params)
        upd, state = opt.update(g, state, params)
        return optax.apply_updates(params, upd), state, l
    return step, (params, state, ids)


@program("flax")
def nnx_mlp_grad():
    """flax nnx MLP (Linear, gelu): loss and gradient through nnx.split/merge"""
    import jax
    import jax.numpy as jnp
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(20, 48, rngs=rngs)
            self.l2 = nnx.Linear(48, 5, rngs=rngs)

        def __call__(self, x):
            return self.l2(nnx.gelu(self.l1(x)))
    graphdef, state = nnx.split(MLP(nnx.Rngs(0)))
    x = _f32(_rng(13), 16, 20)

    def loss(state, x):
        return jnp.mean(nnx.merge(graphdef, state)(x) ** 2)
    return jax.value_and_grad(loss), (_np(state), x)


# ---------------------------------------------------------------------------------------------
# jax.numpy, jax.scipy, jax.nn, jax.random
# ---------------------------------------------------------------------------------------------

@program("jax.scipy", rtol=1e-4, atol=1e-5)
def scipy_special():
    """jax.scipy.special: erf, erfc, erfinv, gammaln, digamma, xlogy, logsumexp, expit, ndtri, i0e"""
    import jax.scipy.special as sp
    rng = _rng(14)
    x = rng.uniform(0.1, 4.0, 64).astype(np.float32)
    u = rng.uniform(0.02, 0.98, 64).astype(np.float32)

    def f(x, u):
        return (sp.erf(x - 2), sp.erfc(x - 2), sp.erfinv(2 * u - 1), sp.gammaln(x), sp.digamma(x),
                sp.xlogy(x, u), sp.logsumexp(x), sp.expit(x - 2), sp.ndtri(u), sp.i0e(x))
    return f, (x, u)


@program("jax.nn", vulkan=True)
def nn_functions():
    """jax.nn: softmax, log_softmax, gelu (tanh and exact), silu, one_hot, logsumexp, normalize"""
    import jax
    import jax.numpy as jnp
    rng = _rng(15)
    x = _f32(rng, 8, 10)
    labels = rng.integers(0, 10, 8).astype(np.int32)

    def f(x, labels):
        oh = jax.nn.one_hot(labels, 10)
        return (jax.nn.softmax(x), jax.nn.log_softmax(x), jax.nn.gelu(x), jax.nn.gelu(x, approximate=False),
                jax.nn.silu(x), jnp.sum(oh * x, axis=1), jax.nn.logsumexp(x, axis=0),
                jax.nn.standardize(x, axis=-1), jax.nn.relu6(x), jax.nn.softplus(x))
    return f, (x, labels)


@program("jax.random")
def random_sampling():
    """jax.random: split, fold_in, normal, uniform, bernoulli, categorical, permutation, randint"""
    import jax
    import jax.numpy as jnp
    key = np.asarray(jax.random.key_data(jax.random.key(7)))
    logits = _f32(_rng(16), 6, 5)

    def f(key, logits):
        k = jax.random.wrap_key_data(key)
        k1, k2, k3 = jax.random.split(k, 3)
        k4 = jax.random.fold_in(k1, 17)
        return (jax.random.normal(k1, (4, 8)), jax.random.uniform(k2, (16,)),
                jax.random.bernoulli(k3, 0.3, (10,)), jax.random.categorical(k4, logits),
                jax.random.permutation(k2, jnp.arange(20)), jax.random.randint(k3, (12,), 0, 100))
    return f, (key, logits)


@program("jax.numpy", rtol=1e-4, atol=1e-4)
def fft_ops():
    """jnp.fft: fft, ifft, rfft, irfft, fft2 and a spectral convolution"""
    import jax.numpy as jnp
    rng = _rng(17)
    x = _f32(rng, 4, 32)
    img = _f32(rng, 8, 8)

    def f(x, img):
        X = jnp.fft.fft(x)
        return (X.real, X.imag, jnp.fft.ifft(X).real, jnp.abs(jnp.fft.rfft(x)), jnp.fft.irfft(jnp.fft.rfft(x), 32),
                jnp.abs(jnp.fft.fft2(img)), jnp.fft.irfft(jnp.fft.rfft(x) * jnp.fft.rfft(x[::-1]), 32))
    return f, (x, img)


@program("jax.numpy")
def sorting_and_scans():
    """sort, argsort, lax.top_k, cumsum, cumprod, searchsorted, unique-free median"""
    import jax
    import jax.numpy as jnp
    rng = _rng(18)
    x = rng.permutation(64).reshape(4, 16).astype(np.float32) / 7   # distinct values: argsort is unique
    q = np.sort(rng.uniform(0, 9, 10)).astype(np.float32)

    def f(x, q):
        v, i = jax.lax.top_k(x, 5)
        s = jnp.sort(x[0])
        return (jnp.sort(x, axis=1), jnp.argsort(x, axis=0), v, i, jnp.cumsum(x, axis=1),
                jnp.cumprod(x[:, :6] / 2, axis=1), jnp.searchsorted(s, q), jnp.median(x, axis=1))
    return f, (x, q)


@program("jax.numpy", vulkan=True)
def einsum_ops():
    """einsum: batched matmul, bilinear form, trace, outer product, attention scores"""
    import jax.numpy as jnp
    rng = _rng(19)
    a, b, w = _f32(rng, 3, 4, 5), _f32(rng, 3, 5, 6), _f32(rng, 4, 6)
    q, k = _f32(rng, 2, 8, 4, 16), _f32(rng, 2, 8, 4, 16)

    def f(a, b, w, q, k):
        return (jnp.einsum("bij,bjk->bik", a, b), jnp.einsum("bij,bjk,ik->b", a, b, w),
                jnp.einsum("bii->b", a[:, :, :4]), jnp.einsum("i,j->ij", w[0], w[1]),
                jnp.einsum("bqhd,bkhd->bhqk", q, k))
    return f, (a, b, w, q, k)


@program("jax.numpy")
def vmap_ops():
    """vmap of a per-example loss gradient and of a nested vmap (pairwise distances)"""
    import jax
    import jax.numpy as jnp
    rng = _rng(20)
    w, xs, ys = _f32(rng, 8, 3), _f32(rng, 16, 8), _f32(rng, 16, 3)

    def per_example(w, x, y):
        return jnp.sum((jnp.tanh(x @ w) - y) ** 2)

    def f(w, xs, ys):
        g = jax.vmap(jax.grad(per_example), in_axes=(None, 0, 0))(w, xs, ys)
        d = jax.vmap(lambda a: jax.vmap(lambda b: jnp.linalg.norm(a - b))(xs))(xs)
        return g, d
    return f, (w, xs, ys)


@program("jax.numpy")
def indexed_updates():
    """.at[].add/.set/.min/.max/.mul with repeated indices, fancy indexing and boolean masks"""
    import jax.numpy as jnp
    rng = _rng(21)
    x = _f32(rng, 10, 4)
    idx = np.array([1, 3, 3, 7, 0, 9, 3], np.int32)
    v = _f32(rng, 7, 4)

    def f(x, idx, v):
        return (x.at[idx].add(v), x.at[idx[:3]].set(v[:3]), x.at[idx].min(v), x.at[idx].max(v),
                x.at[2, 1:3].mul(5.0), x[idx, 2], jnp.where(x > 0, x, 0).sum(0), x[::-2, ::2])
    return f, (x, idx, v)


@program("jax.numpy")
def segment_sums():
    """jax.ops.segment_sum / segment_max and a bincount-style histogram"""
    import jax
    import jax.numpy as jnp
    rng = _rng(22)
    data = _f32(rng, 30, 3)
    seg = np.sort(rng.integers(0, 6, 30)).astype(np.int32)

    def f(data, seg):
        return (jax.ops.segment_sum(data, seg, num_segments=6), jax.ops.segment_max(data, seg, num_segments=6),
                jnp.bincount(seg, length=6), jax.ops.segment_sum(data, seg, num_segments=6, indices_are_sorted=True))
    return f, (data, seg)


# ---------------------------------------------------------------------------------------------
# lax control flow
# ---------------------------------------------------------------------------------------------

def _scan_program(unroll):
    import jax
    import jax.numpy as jnp
    rng = _rng(23)
    w, xs = _f32(rng, 8, 8, scale=0.3), _f32(rng, 25, 8)

    def f(w, xs):
        def body(h, x):
            h = jnp.tanh(h @ w + x)
            return h, jnp.sum(h)
        return jax.lax.scan(body, jnp.zeros(8, jnp.float32), xs, unroll=unroll)
    return f, (w, xs)


@program("lax control flow", vulkan=True)
def scan_rnn():
    """lax.scan of a tanh RNN over 25 steps, carrying state and stacking outputs"""
    return _scan_program(1)


@program("lax control flow")
def scan_unrolled():
    """the same lax.scan with unroll=4 (25 steps: a remainder iteration)"""
    return _scan_program(4)


@program("lax control flow", vulkan=True)
def fori_loop_newton():
    """lax.fori_loop: 30 Newton steps for sqrt on a vector"""
    import jax
    a = _rng(24).uniform(0.5, 50, 100).astype(np.float32)
    return (lambda a: jax.lax.fori_loop(0, 30, lambda i, x: 0.5 * (x + a / x), a)), (a,)


@program("lax control flow")
def while_loop_collatz():
    """lax.while_loop with a data-dependent trip count (Collatz steps, int32)"""
    import jax
    import jax.numpy as jnp
    n = np.arange(1, 41, dtype=np.int32)

    def steps(n):
        def cond(c):
            return jnp.any(c[0] != 1)

        def body(c):
            x, k = c
            done = x == 1
            x = jnp.where(done, x, jnp.where(x % 2 == 0, x // 2, 3 * x + 1))
            return x, k + (~done).astype(jnp.int32)
        return jax.lax.while_loop(cond, body, (n, jnp.zeros_like(n)))[1]
    return steps, (n,)


@program("lax control flow")
def cond_and_switch():
    """lax.cond and lax.switch on a traced predicate / index, with differently shaped branches"""
    import jax
    import jax.numpy as jnp
    x = _f32(_rng(25), 16)

    def f(x, i, p):
        a = jax.lax.cond(p, lambda v: jnp.sin(v) * 2, lambda v: jnp.cumsum(v), x)
        b = jax.lax.switch(i, [lambda v: v + 1, lambda v: jnp.sort(v), lambda v: v[::-1] * v], x)
        return a, b, jax.grad(lambda v: jnp.sum(jax.lax.cond(p, jnp.exp, jnp.tanh, v)))(x)
    return f, (x, np.int32(2), np.bool_(True))


@program("lax control flow")
def associative_scan_ops():
    """lax.associative_scan: prefix sums, prefix max and a linear recurrence h = a*h + b"""
    import jax
    import jax.numpy as jnp
    rng = _rng(26)
    a, b = rng.uniform(0.5, 1.0, 33).astype(np.float32), _f32(rng, 33)

    def f(a, b):
        def lin(l, r):
            return r[0] * l[0], r[0] * l[1] + r[1]
        return (jax.lax.associative_scan(jnp.add, b), jax.lax.associative_scan(jnp.maximum, b),
                jax.lax.associative_scan(lin, (a, b))[1])
    return f, (a, b)


@program("lax control flow")
def lax_map_and_remat():
    """lax.map over rows, and the gradient of a jax.checkpoint (remat) MLP"""
    import jax
    import jax.numpy as jnp
    rng = _rng(27)
    x, w1, w2 = _f32(rng, 12, 16), _f32(rng, 16, 32, scale=0.3), _f32(rng, 32, 4, scale=0.3)

    @jax.checkpoint
    def layer(w1, w2, x):
        return jnp.tanh(jnp.tanh(x @ w1) @ w2)

    def f(x, w1, w2):
        m = jax.lax.map(lambda r: jnp.sort(r) * jnp.max(r), x)
        g = jax.grad(lambda a, b: jnp.sum(layer(a, b, x) ** 2), argnums=(0, 1))(w1, w2)
        return m, g
    return f, (x, w1, w2)


# ---------------------------------------------------------------------------------------------
# mixed precision
# ---------------------------------------------------------------------------------------------

@program("mixed precision", rtol=2e-2, atol=2e-2)
def bf16_mlp():
    """bf16 matmuls and activations with f32 accumulation (preferred_element_type) and a bf16 softmax"""
    import jax
    import jax.numpy as jnp
    rng = _rng(28)
    x, w1, w2 = _f32(rng, 32, 64), _f32(rng, 64, 64, scale=0.2), _f32(rng, 64, 16, scale=0.2)

    def f(x, w1, w2):
        h = jnp.dot(x.astype(jnp.bfloat16), w1.astype(jnp.bfloat16), preferred_element_type=jnp.float32)
        h = jax.nn.gelu(h.astype(jnp.bfloat16))
        y = jnp.dot(h, w2.astype(jnp.bfloat16))
        return jax.nn.softmax(y.astype(jnp.float32)), y
    return f, (x, w1, w2)


@program("mixed precision", rtol=5e-3, atol=5e-3)
def f16_layer():
    """f16 dense layer with layer norm computed in f32 and cast back"""
    import jax
    import jax.numpy as jnp
    rng = _rng(29)
    x, w = _f32(rng, 16, 32).astype(np.float16), _f32(rng, 32, 32, scale=0.2).astype(np.float16)

    def f(x, w):
        h = jax.nn.silu(x @ w)
        h32 = h.astype(jnp.float32)
        n = (h32 - h32.mean(-1, keepdims=True)) / jnp.sqrt(h32.var(-1, keepdims=True) + 1e-5)
        return n.astype(jnp.float16), jnp.sum(h, axis=0)
    return f, (x, w)


@program("mixed precision")
def int8_quantized_matmul():
    """int8 x int8 -> int32 matmul, per-channel dequantisation to f32, requantisation with rounding"""
    import jax
    import jax.numpy as jnp
    rng = _rng(30)
    a = rng.integers(-128, 128, (16, 32)).astype(np.int8)
    b = rng.integers(-128, 128, (32, 8)).astype(np.int8)
    scale = rng.uniform(0.001, 0.01, 8).astype(np.float32)

    def f(a, b, scale):
        acc = jax.lax.dot(a, b, preferred_element_type=jnp.int32)
        y = acc.astype(jnp.float32) * scale
        q = jnp.clip(jnp.round(y / 0.05), -128, 127).astype(jnp.int8)
        return acc, y, q, a.astype(jnp.float32).mean(0)
    return f, (a, b, scale)


@program("mixed precision")
def u32_bit_tricks():
    """uint32 bit tricks: xorshift hash, popcount, clz, rotations, float bit casts"""
    import jax
    import jax.numpy as jnp
    x = _rng(31).integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)

    def f(x):
        h = x ^ (x << 13)
        h = h ^ (h >> 17)
        h = h ^ (h << 5)
        rot = (x << 7) | (x >> 25)
        fl = jax.lax.bitcast_convert_type((x >> 9) | jnp.uint32(0x3F800000), jnp.float32) - 1.0
        return h, jax.lax.population_count(x), jax.lax.clz(x), rot, fl, (x * jnp.uint32(2654435761)) >> 16
    return f, (x,)


# ---------------------------------------------------------------------------------------------
# programs new users brought (typed PRNG keys, iterative solvers, distributions, VAE, MoE)
# ---------------------------------------------------------------------------------------------

@program("optax")
def vae_adam_step():
    """VAE training step: MLP encoder/decoder, reparameterisation with a typed key argument, BCE + KL, optax Adam"""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import optax

    class VAE(nn.Module):
        @nn.compact
        def __call__(self, x, key):
            h = nn.relu(nn.Dense(64)(x))
            mu, logvar = nn.Dense(8)(h), nn.Dense(8)(h)
            z = mu + jnp.exp(0.5 * logvar) * jax.random.normal(key, mu.shape)
            return nn.Dense(x.shape[-1])(nn.relu(nn.Dense(64)(z))), mu, logvar
    m = VAE()
    x = (_rng(40).random((16, 49)) > 0.5).astype(np.float32)
    params = _np(m.init(jax.random.key(0), x, jax.random.key(1)))
    opt = optax.adam(1e-3)

    def step(params, state, x, key):
        key, sub = jax.random.split(key)

        def loss(p):
            logits, mu, logvar = m.apply(p, x, sub)
            bce = optax.sigmoid_binary_cross_entropy(logits, x).sum(-1)
            return jnp.mean(bce - 0.5 * jnp.sum(1 + logvar - mu ** 2 - jnp.exp(logvar), -1))
        l, g = jax.value_and_grad(loss)(params)
        upd, state = opt.update(g, state, params)
        return optax.apply_updates(params, upd), state, key, l
    return step, (params, _np(opt.init(params)), x, jax.random.key(7))


@program("flax")
def nnx_train_step():
    """flax nnx Linear/BatchNorm/Dropout training step: nnx.Rngs keys in the state, value_and_grad, optax SGD"""
    import jax
    import jax.numpy as jnp
    import optax
    from flax import nnx

    class Net(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(12, 32, rngs=rngs)
            self.bn = nnx.BatchNorm(32, rngs=rngs)
            self.drop = nnx.Dropout(0.2, rngs=rngs)
            self.l2 = nnx.Linear(32, 3, rngs=rngs)

        def __call__(self, x):
            return self.l2(self.drop(nnx.relu(self.bn(self.l1(x)))))
    model = Net(nnx.Rngs(params=0, dropout=1))
    model.train()
    graphdef, params, rest = nnx.split(model, nnx.Param, ...)
    tx = optax.sgd(0.1, momentum=0.9)
    rng = _rng(41)
    x, y = _f32(rng, 16, 12), rng.integers(0, 3, 16).astype(np.int32)

    def step(params, rest, opt_state, x, y):
        def loss_fn(params):
            m = nnx.merge(graphdef, params, rest, copy=True)
            loss = optax.softmax_cross_entropy_with_integer_labels(m(x), y).mean()
            return loss, nnx.split(m, nnx.Param, ...)[2]
        (loss, new_rest), g = jax.value_and_grad(loss_fn, has_aux=True)(params)
        upd, opt_state = tx.update(g, opt_state, params)
        return optax.apply_updates(params, upd), new_rest, opt_state, loss

    def host(tree):         # numpy leaves, typed keys kept
        return jax.tree_util.tree_map(
            lambda a: a if jnp.issubdtype(a.dtype, jax.dtypes.prng_key) else np.asarray(a), tree)
    return step, (host(params), host(rest), host(tx.init(params)), x, y)


@program("jax.scipy", rtol=1e-3, atol=1e-4)
def bfgs_minimize():
    """jax.scipy.optimize.minimize (BFGS, its line search's zoom loops) on a Rosenbrock-like function"""
    import jax.numpy as jnp
    from jax.scipy.optimize import minimize
    x0 = np.array([-1.2, 1.0, 0.5, -0.3], np.float32)
    c = np.array([1.0, 2.0, 0.5, 1.5], np.float32)

    def rosen(x, c):
        return jnp.sum(10.0 * (x[1:] - x[:-1] ** 2) ** 2 + (c[:-1] - x[:-1]) ** 2) + 0.1 * jnp.sum((x - c) ** 2)

    def f(x0, c):
        r = minimize(rosen, x0, args=(c,), method="BFGS", options={"maxiter": 50})
        return r.x, r.fun       # (not nit or jac: where gtol is met, and the gradient there, is rounding)
    return f, (x0, c)


@program("lax control flow", rtol=1e-4, atol=1e-5)
def tolerance_loops():
    """while_loop until a tolerance (the error recomputed, not read), lax.betainc's continued fraction"""
    import jax
    import jax.numpy as jnp
    from jax import lax
    a = np.array([0.5, 1.0, 2.0, 3.5], np.float32)
    x = np.linspace(0.05, 0.95, 4).astype(np.float32)

    def f(a, x):
        def body(c):            # Babylonian square roots; the error is recomputed each trip
            y, _, n = c
            y2 = 0.5 * (y + a / y)
            return y2, jnp.max(jnp.abs(y2 - y)), n + 1
        y, err, n = lax.while_loop(lambda c: (c[1] > 1e-6) & (c[2] < 50), body, (a + 1.0, jnp.float32(1.0), 0))
        return y, n, jax.scipy.special.betainc(a, a[::-1], x)
    return f, (a, x)


@program("jax.random", rtol=1e-4, atol=1e-5)
def random_distributions():
    """jax.random.key made inside from a seed: gamma, beta, dirichlet and poisson with shapes (rejection loops)"""
    import jax
    alpha = np.array([0.5, 1.0, 2.0, 5.0], np.float32)

    def f(seed, alpha):
        k1, k2, k3, k4 = jax.random.split(jax.random.key(seed), 4)
        return (jax.random.gamma(k1, alpha, (3, 4)), jax.random.beta(k2, 2.0, alpha, (4,)),
                jax.random.dirichlet(k3, alpha, (2,)), jax.random.poisson(k4, 3.0, (6,)))
    return f, (np.int32(42), alpha)


@program("flax", rtol=1e-3, atol=1e-4, vulkan=True)
def moe_top2_grad():
    """Mixture of experts: router, lax.top_k(2), softmax over the top 2, one-hot einsum dispatch, gradient"""
    import jax
    import jax.numpy as jnp
    E, d, h, T = 4, 16, 32, 12
    rng = _rng(42)
    p = {"router": _f32(rng, d, E, scale=0.5), "w1": _f32(rng, E, d, h, scale=0.2),
         "w2": _f32(rng, E, h, d, scale=0.2)}
    x = _f32(rng, T, d)

    def moe(p, x):
        vals, idx = jax.lax.top_k(x @ p["router"], 2)
        onehot = jax.nn.one_hot(idx, E)                                   # [T, 2, E]
        combine = jnp.einsum("tk,tke->te", jax.nn.softmax(vals, -1), onehot)
        xe = jnp.einsum("te,td->etd", onehot.sum(1), x)
        ye = jnp.einsum("eth,ehd->etd", jax.nn.gelu(jnp.einsum("etd,edh->eth", xe, p["w1"])), p["w2"])
        return jnp.einsum("etd,te->td", ye, combine)

    def f(p, x):
        return moe(p, x), jax.grad(lambda p, x: jnp.sum(moe(p, x) ** 2), argnums=(0, 1))(p, x)
    return f, (p, x)
