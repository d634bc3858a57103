"""Random numbers: RngUniform, RngNormal (stateful: the executable holds the generator's state)
and RngBitGenerator (a pure function of its state, bit-exact with XLA).

RngBitGenerator follows XLA's expansion (xla/service/rng_bit_generator_expander.cc and
xla/hlo/builder/lib/prng.cc):

* state[0] is the key (two u32 words, low word first).
* RNG_THREE_FRY: state is u64[2]; state[1] is a 64-bit counter.  Threefry-2x32 with 20 rounds
  maps the counter (low word, high word) to two u32 words.  64-bit outputs take one counter per
  element (value = word0 | word1 << 32, counters state[1] + row-major index).  32-bit and
  narrower outputs halve the shape along its first even dimension (else its largest one): one
  counter per element of the half shape, word0 and word1 land on consecutive elements along that
  dimension; narrower types keep the low bits of each u32.  New state: [key, counter + number of
  counters used].
* RNG_PHILOX (and RNG_DEFAULT, which is Philox as on XLA:CPU): state is u64[3] (counter =
  state[1] + state[2] << 64) or u64[2] (counter = state[1] + state[0] << 64).  Philox-4x32 with
  10 rounds maps each 128-bit counter to four u32 words; 32-bit and narrower outputs take the
  words round-robin (element 4 i + w), 64-bit outputs pair them (element 2 i + h = words 2h,
  2h + 1).  New state: [key, counter + blocks used] (u64[2]: only the counter's low word).
* Floating-point outputs are the generated bits of the same width, bitcast.
"""
from __future__ import annotations

import numpy as np

from ..attrs import ShapeKind, kind_for, RandomAlgorithm
from ..core import Attr, OpDef, Operand, register
from ..types import FLOATS, INTEGERS, PRED, U64, Shape

UNIFORM_TYPES = (PRED,) + INTEGERS + FLOATS
BITS_TYPES = INTEGERS + FLOATS

M32 = np.uint64(0xFFFFFFFF)


# ----------------------------------------------------------------------------------------
# RngUniform, RngNormal
# ----------------------------------------------------------------------------------------
def _rng_shape(chk, shape, et):
    chk.array("shape", shape, cid="rng_i3")
    chk.non_negative("shape", shape.dims, cid="rng_i3")
    if shape.element_type != et:
        chk.fail("shape", f"must have the element type of the parameters ({et})", shape, cid="rng_c1")


def _uniform_infer(chk, a, b, shape):
    chk.scalar("a", a, cid="rng_i1")
    chk.scalar("b", b, cid="rng_i2")
    chk.element_type("a", a, UNIFORM_TYPES, "PRED, integer or floating-point", cid="rng_i1")
    chk.same_element_type("a", a, "b", b, cid="rng_c1")
    _rng_shape(chk, shape, a.element_type)
    return shape


_HOST_RNG = np.random.default_rng(0x5EED)


def _uniform_ref(a, b, shape, *, result):
    """Uniform on [a, b) from numpy's generator (a different stream than the compiled program's:
    tests compare distributions, not values).  b <= a (implementation-defined) gives a."""
    et = result.element_type
    if et.is_float:
        lo, hi = float(a), float(b)
        if not hi > lo:
            return np.full(result.dims, lo, dtype=result.dtype)
        v = (lo + (hi - lo) * _HOST_RNG.random(result.dims)).astype(result.dtype)
        return np.where(v < np.asarray(hi, result.dtype), v, np.asarray(lo, result.dtype))
    lo, hi = int(a), int(b)
    if hi <= lo + 1:
        return np.full(result.dims, lo, dtype=result.dtype)
    return _HOST_RNG.integers(lo, hi, size=result.dims).astype(result.dtype)


register(OpDef("RngUniform", (Operand("a"), Operand("b"), Attr("shape", ShapeKind())),
               _uniform_infer, _uniform_ref, "random", "RngUniform", side_effecting=True,
               doc="uniform random numbers on [a, b); advances the executable's generator state",
               constraints={
                   "rng_i1": "a (mu) is a scalar of an integer, PRED or floating-point type",
                   "rng_i2": "b (sigma) is a scalar",
                   "rng_i3": "shape is an array shape with non-negative dimensions",
                   "rng_c1": "`element_type(a) = element_type(b) = element_type(result)`",
               }))


def _normal_infer(chk, mu, sigma, shape):
    chk.scalar("mu", mu, cid="rng_i1")
    chk.scalar("sigma", sigma, cid="rng_i2")
    chk.element_type("mu", mu, FLOATS, "floating-point", cid="rng_c2")
    chk.same_element_type("mu", mu, "sigma", sigma, cid="rng_c1")
    _rng_shape(chk, shape, mu.element_type)
    return shape


def _normal_ref(mu, sigma, shape, *, result):
    return _HOST_RNG.normal(float(mu), abs(float(sigma)), result.dims).astype(result.dtype)


register(OpDef("RngNormal", (Operand("mu"), Operand("sigma"), Attr("shape", ShapeKind())),
               _normal_infer, _normal_ref, "random", "RngNormal", side_effecting=True,
               doc="normal random numbers N(mu, sigma); advances the executable's generator state",
               constraints={
                   "rng_i1": "a (mu) is a scalar of an integer, PRED or floating-point type",
                   "rng_i2": "b (sigma) is a scalar",
                   "rng_i3": "shape is an array shape with non-negative dimensions",
                   "rng_c1": "`element_type(a) = element_type(b) = element_type(result)`",
                   "rng_c2": "If `rng_distribution = NORMAL`, then `is_float(a)`",
               }))


# ----------------------------------------------------------------------------------------
# RngBitGenerator
# ----------------------------------------------------------------------------------------
def state_sizes(algorithm: RandomAlgorithm) -> tuple[int, ...]:
    return (2,) if algorithm is RandomAlgorithm.RNG_THREE_FRY else (2, 3)


def _rbg_infer(chk, algorithm, initial_state, shape):
    chk.array("initial_state", initial_state, cid="rng_bit_generator_i2")
    sizes = state_sizes(algorithm)
    if initial_state.element_type != U64 or initial_state.rank != 1 or initial_state.dims[0] not in sizes:
        want = " or ".join(f"u64[{n}]" for n in sizes)
        chk.fail("initial_state", f"must have shape {want} for {algorithm.name}", initial_state,
                 cid="rng_bit_generator_c2")
    chk.array("shape", shape, cid="spec:RngBitGenerator")
    chk.non_negative("shape", shape.dims, cid="spec:RngBitGenerator")
    chk.element_type("shape", shape, BITS_TYPES, "integer or floating-point", cid="spec:RngBitGenerator")
    return Shape.tuple([initial_state, shape])


def threefry2x32(x0, x1, k0, k1):
    """Threefry-2x32, 20 rounds (Salmon et al. 2011), on uint64 arrays holding u32 values."""
    rot = (13, 15, 26, 6, 17, 29, 16, 24)
    ks = (k0 & M32, k1 & M32, (k0 ^ k1 ^ np.uint64(0x1BD11BDA)) & M32)
    x0 = (x0 + ks[0]) & M32
    x1 = (x1 + ks[1]) & M32
    for block in range(5):
        for r in rot[4 * (block % 2): 4 * (block % 2) + 4]:
            x0 = (x0 + x1) & M32
            x1 = ((x1 << np.uint64(r)) | (x1 >> np.uint64(32 - r))) & M32
            x1 = x1 ^ x0
        x0 = (x0 + ks[(block + 1) % 3]) & M32
        x1 = (x1 + ks[(block + 2) % 3] + np.uint64(block + 1)) & M32
    return x0, x1


def philox4x32(c, k0, k1):
    """Philox-4x32, 10 rounds (Salmon et al. 2011); c is a list of four uint64 arrays of u32 values."""
    c = list(c)
    for _ in range(10):
        p0 = c[0] * np.uint64(0xD2511F53)
        p1 = c[2] * np.uint64(0xCD9E8D57)
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & M32, p1 & M32,
             ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & M32, p0 & M32]
        k0 = (k0 + np.uint64(0x9E3779B9)) & M32
        k1 = (k1 + np.uint64(0xBB67AE85)) & M32
    return c


def split_dim(dims) -> int:
    """The dimension XLA halves for 32-bit and narrower Threefry output."""
    for i, d in enumerate(dims):
        if d % 2 == 0:
            return i
    return int(np.argmax(dims))


def _threefry_bits(state, dims, bits):
    key, ctr = state[0], state[1]
    k0, k1 = key & M32, key >> np.uint64(32)
    if bits == 64:
        c = ctr + np.arange(int(np.prod(dims, dtype=np.int64)), dtype=np.uint64)
        x0, x1 = threefry2x32(c & M32, c >> np.uint64(32), k0, k1)
        return (x0 | (x1 << np.uint64(32))).reshape(dims), np.array([key, ctr + np.uint64(c.size)], np.uint64)
    if len(dims) == 0:
        x0, _ = threefry2x32(ctr & M32, ctr >> np.uint64(32), k0, k1)
        return x0.reshape(()), np.array([key, ctr + np.uint64(1)], np.uint64)
    s = split_dim(dims)
    half = list(dims)
    half[s] = (dims[s] + 1) // 2
    nh = int(np.prod(half, dtype=np.int64))
    c = ctr + np.arange(nh, dtype=np.uint64)
    x0, x1 = threefry2x32(c & M32, c >> np.uint64(32), k0, k1)
    pair = np.stack([x0.reshape(half), x1.reshape(half)], axis=s + 1)        # [.., h, 2, ..]
    full = list(dims)
    full[s] = 2 * half[s]
    out = pair.reshape(full)
    out = out[tuple(slice(0, d) for d in dims)]
    return out, np.array([key, ctr + np.uint64(nh)], np.uint64)


def _philox_bits(state, dims, bits):
    key = state[0]
    k0, k1 = key & M32, key >> np.uint64(32)
    lo, hi = (state[1], state[2]) if len(state) == 3 else (state[1], state[0])
    n = int(np.prod(dims, dtype=np.int64))
    blocks = (n + 1) // 2 if bits == 64 else (n + 3) // 4
    i = np.arange(blocks, dtype=np.uint64)
    with np.errstate(over="ignore"):
        clo = lo + i
        chi = hi + (clo < lo).astype(np.uint64)
        words = philox4x32([clo & M32, clo >> np.uint64(32), chi & M32, chi >> np.uint64(32)], k0, k1)
        if bits == 64:
            vals = np.stack([words[0] | (words[1] << np.uint64(32)), words[2] | (words[3] << np.uint64(32))], 1)
        else:
            vals = np.stack(words, 1)
        new_lo = lo + np.uint64(blocks)
        new_hi = hi + np.uint64(new_lo < lo)
    out = vals.reshape(-1)[:n].reshape(dims)
    new = [key, new_lo, new_hi] if len(state) == 3 else [key, new_lo]
    return out, np.array(new, np.uint64)


def rng_bits(algorithm: RandomAlgorithm, state: np.ndarray, shape: Shape):
    """(new state, bits as `shape`'s element type): XLA's RngBitGenerator on the host."""
    state = np.asarray(state).astype(np.uint64)
    et = shape.element_type
    bits = et.bits
    with np.errstate(over="ignore"):
        if algorithm is RandomAlgorithm.RNG_THREE_FRY:
            raw, new = _threefry_bits(state, shape.dims, 64 if bits == 64 else 32)
        else:
            raw, new = _philox_bits(state, shape.dims, 64 if bits == 64 else 32)
    utype = np.dtype(f"u{bits // 8}")
    data = np.asarray(raw & np.uint64((1 << bits) - 1) if bits < 64 else raw).astype(utype).view(et.dtype)
    return new, data.reshape(shape.dims)


def _rbg_ref(algorithm, initial_state, shape, *, result):
    return rng_bits(algorithm, initial_state, shape)


register(OpDef("RngBitGenerator",
               (Attr("algorithm", kind_for(RandomAlgorithm)), Operand("initial_state"),
                Attr("shape", ShapeKind())),
               _rbg_infer, _rbg_ref, "random", "RngBitGenerator",
               doc="(new_state, random bits of shape) from initial_state, bit-exact with XLA",
               constraints={
                   "rng_bit_generator_i2": "initial_state is an array",
                   "rng_bit_generator_c2": "initial_state is u64[2] (THREE_FRY) or u64[2] or u64[3] "
                                           "(PHILOX, DEFAULT)",
                   "spec:RngBitGenerator": "shape is an array shape of an integer or floating-point "
                                           "type with non-negative dimensions",
               }))
