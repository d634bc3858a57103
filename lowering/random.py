"""Lowering of the random-number ops (mirrors dialect/ops/random.py).

RngBitGenerator: one linalg.generic over the output whose body computes each element's
Threefry-2x32 or Philox-4x32 block from its row-major position (counter-based generators need
no loop), plus the new state built with tensor.from_elements.  The bits are XLA's (see the
record's docstring for the layout).

RngUniform / RngNormal: the executable holds the generator state in a mutable IREE global,
`util.global private mutable @xlair_rng_state : tensor<2xi64>` (key, counter), initially
[0x5EED, 0].  Each op loads it, generates Philox-4x32 blocks from (key, counter) as
RngBitGenerator(RNG_PHILOX) does for a u64[2] state, and stores the advanced counter, so
repeated calls and several ops in one program draw fresh numbers.  The public function
`@xlair_rng_seed(tensor<i64>)` sets the state to [seed, 0] (`Executable.seed(n)`).
Uniform floats take the top mantissa bits of a word (XLA's ConvertRandomBitsToUniformFloatingPoint),
uniform integers a + bits mod (b - a); normals use Box-Muller on two uniforms per element.
"""
from __future__ import annotations

import math as pymath

import numpy as np

import xlair.dialect.ops  # noqa: F401
from xlair.dialect.attrs import RandomAlgorithm
from xlair.dialect.ir import arith, func, ir, math, tensor
from xlair.dialect.types import F32, F64, Shape

from .elementwise import narrow_float
from .registry import affine_map, declare_global, empty, generic, int_const, loop_index, lowers, tuple_of

CI = arith.CmpIPredicate
CF = arith.CmpFPredicate

STATE_GLOBAL = "xlair_rng_state"
SEED_FUNCTION = "xlair_rng_seed"
DEFAULT_KEY = 0x5EED


def _i(bits: int) -> ir.Type:
    return ir.IntegerType.get_signless(bits)


def _c(bits: int, v: int) -> ir.Value:
    return int_const(_i(bits), v)


def _lo32(x):
    return arith.trunci(_i(32), x)


def _hi32(x):
    return arith.trunci(_i(32), arith.shrui(x, _c(64, 32)))


def _u64(lo, hi):
    return arith.ori(arith.extui(_i(64), lo), arith.shli(arith.extui(_i(64), hi), _c(64, 32)))


# ----------------------------------------------------------------------------------------
# the generators, as scalar code
# ----------------------------------------------------------------------------------------
def threefry2x32(x0, x1, k0, k1):
    rot = (13, 15, 26, 6, 17, 29, 16, 24)
    ks = (k0, k1, arith.xori(arith.xori(k0, k1), _c(32, 0x1BD11BDA)))
    x0 = arith.addi(x0, ks[0])
    x1 = arith.addi(x1, ks[1])
    for block in range(5):
        for r in rot[4 * (block % 2): 4 * (block % 2) + 4]:
            x0 = arith.addi(x0, x1)
            x1 = arith.ori(arith.shli(x1, _c(32, r)), arith.shrui(x1, _c(32, 32 - r)))
            x1 = arith.xori(x1, x0)
        x0 = arith.addi(x0, ks[(block + 1) % 3])
        x1 = arith.addi(arith.addi(x1, ks[(block + 2) % 3]), _c(32, block + 1))
    return x0, x1


def _mul_hi_lo(x, k: int):
    p = arith.muli(arith.extui(_i(64), x), _c(64, k))
    return _hi32(p), _lo32(p)


def philox4x32(c, k0, k1):
    c = list(c)
    for _ in range(10):
        h0, l0 = _mul_hi_lo(c[0], 0xD2511F53)
        h1, l1 = _mul_hi_lo(c[2], 0xCD9E8D57)
        c = [arith.xori(arith.xori(h1, c[1]), k0), l1, arith.xori(arith.xori(h0, c[3]), k1), l0]
        k0 = arith.addi(k0, _c(32, 0x9E3779B9))
        k1 = arith.addi(k1, _c(32, 0xBB67AE85))
    return c


def philox_block(key, lo, hi, block):
    """The four u32 words of Philox block `block` (i64) after counter (lo, hi)."""
    clo = arith.addi(lo, block)
    chi = arith.addi(hi, arith.extui(_i(64), arith.cmpi(CI.ult, clo, lo)))
    return philox4x32([_lo32(clo), _hi32(clo), _lo32(chi), _hi32(chi)], _lo32(key), _hi32(key))


def _select_word(words, w):
    """words[w] for an i64 w in [0, len(words))."""
    out = words[-1]
    for i in range(len(words) - 2, -1, -1):
        out = arith.select(arith.cmpi(CI.eq, w, _c(64, i)), words[i], out)
    return out


def _linear_index(dims, positions=None):
    """Row-major linear index (i64) of the current point of a generic over `dims`."""
    acc = _c(64, 0)
    for d, size in enumerate(dims):
        i = positions[d] if positions else arith.index_cast(_i(64), loop_index(d))
        acc = arith.addi(arith.muli(acc, _c(64, size)), i)
    return acc


def _numel(dims) -> int:
    return int(np.prod(dims, dtype=np.int64)) if len(dims) else 1


def _to_element(word, bits: int, et):
    """Raw bits (i32 or i64) as an element of `et` (low bits kept, floats bitcast)."""
    if et.bits < bits:
        word = arith.trunci(_i(et.bits), word)
    if et.is_float:
        return arith.bitcast(et.builtin_type(), word)
    return word


def _generate(out: Shape, element_fn):
    """A linalg.generic over `out` whose body is element_fn(positions as i64) -> element."""
    n = out.rank

    def body(_o):
        pos = [arith.index_cast(_i(64), loop_index(d)) for d in range(n)]
        return element_fn(pos)
    return generic([], [], [empty(out)], [affine_map(n, list(range(n)))], ["parallel"] * n, body)[0]


# ----------------------------------------------------------------------------------------
# RngBitGenerator
# ----------------------------------------------------------------------------------------
def _state_scalars(state, size):
    from .registry import index
    return [tensor.extract(state, [index(i)]) for i in range(size)]


def _threefry(lw, s, out: Shape):
    key, ctr = s[0], s[1]
    k0, k1 = _lo32(key), _hi32(key)
    dims, et = out.dims, out.element_type
    if et.bits == 64:
        def element(pos):
            c = arith.addi(ctr, _linear_index(dims, pos))
            x0, x1 = threefry2x32(_lo32(c), _hi32(c), k0, k1)
            return _to_element(_u64(x0, x1), 64, et)
        used = _numel(dims)
    elif not dims:
        def element(pos):
            x0, _ = threefry2x32(_lo32(ctr), _hi32(ctr), k0, k1)
            return _to_element(x0, 32, et)
        used = 1
    else:
        from xlair.dialect.ops.random import split_dim
        sd = split_dim(dims)
        half = list(dims)
        half[sd] = (dims[sd] + 1) // 2
        used = _numel(half)

        def element(pos):
            hpos = list(pos)
            hpos[sd] = arith.shrui(pos[sd], _c(64, 1))
            c = arith.addi(ctr, _linear_index(half, hpos))
            x0, x1 = threefry2x32(_lo32(c), _hi32(c), k0, k1)
            odd = arith.cmpi(CI.ne, arith.andi(pos[sd], _c(64, 1)), _c(64, 0))
            return _to_element(arith.select(odd, x1, x0), 32, et)
    data = _generate(out, element)
    new = [key, arith.addi(ctr, _c(64, used))]
    return new, data


def _philox_counter(s):
    return (s[1], s[2]) if len(s) == 3 else (s[1], s[0])


def _philox(lw, s, out: Shape):
    key = s[0]
    lo, hi = _philox_counter(s)
    dims, et = out.dims, out.element_type
    n = _numel(dims)
    wide = et.bits == 64
    per = 2 if wide else 4

    def element(pos):
        lin = _linear_index(dims, pos)
        block = arith.divui(lin, _c(64, per))
        w = arith.remui(lin, _c(64, per))
        words = philox_block(key, lo, hi, block)
        if wide:
            return _to_element(_select_word([_u64(words[0], words[1]), _u64(words[2], words[3])], w), 64, et)
        return _to_element(_select_word(words, w), 32, et)
    data = _generate(out, element)
    blocks = (n + per - 1) // per
    new_lo = arith.addi(lo, _c(64, blocks))
    if len(s) == 3:
        new_hi = arith.addi(hi, arith.extui(_i(64), arith.cmpi(CI.ult, new_lo, lo)))
        return [key, new_lo, new_hi], data
    return [key, new_lo], data


@lowers("xla.rng_bit_generator")
def lower_rng_bit_generator(lw):
    alg = lw.attr("algorithm")
    state_shape = lw.shape("initial_state")
    out = lw.result_shape.tuple_shapes[1]
    s = _state_scalars(lw.value("initial_state"), state_shape.dims[0])
    if alg is RandomAlgorithm.RNG_THREE_FRY:
        new, data = _threefry(lw, s, out)
    else:                                   # RNG_PHILOX, and RNG_DEFAULT (Philox, as XLA:CPU)
        new, data = _philox(lw, s, out)
    state = tensor.from_elements(ir.RankedTensorType.get([len(new)], _i(64)), new)
    return tuple_of(lw, [state, data])


# ----------------------------------------------------------------------------------------
# the executable's generator state
# ----------------------------------------------------------------------------------------
def _state_type() -> ir.Type:
    return ir.RankedTensorType.get([2], _i(64))


def ensure_state(op: ir.Operation) -> None:
    """Declare the state global and the seed function in the op's module (once)."""
    t = _state_type()
    init = ir.DenseElementsAttr.get(np.array([DEFAULT_KEY, 0], np.int64), type=t)
    block = declare_global(op, STATE_GLOBAL, t, init)
    if block is None:
        return
    with ir.Location.unknown(), ir.InsertionPoint(block):
        scalar = ir.RankedTensorType.get([], _i(64))
        f = func.FuncOp(SEED_FUNCTION, ir.FunctionType.get([scalar], []))
        entry = f.add_entry_block()
        with ir.InsertionPoint(entry):
            seed = tensor.extract(entry.arguments[0], [])
            st = tensor.from_elements(t, [seed, _c(64, 0)])
            ir.Operation.create("util.global.store", operands=[st],
                                attributes={"global": ir.FlatSymbolRefAttr.get(STATE_GLOBAL)})
            func.ReturnOp([])


def _load_state(lw):
    ensure_state(lw.op)
    st = ir.Operation.create("util.global.load", results=[_state_type()],
                             attributes={"global": ir.FlatSymbolRefAttr.get(STATE_GLOBAL)}).result
    return _state_scalars(st, 2)


def _store_state(key, ctr):
    st = tensor.from_elements(_state_type(), [key, ctr])
    ir.Operation.create("util.global.store", operands=[st],
                        attributes={"global": ir.FlatSymbolRefAttr.get(STATE_GLOBAL)})


def _uniform01(word, bits: int, ft):
    """[0, 1) from the top mantissa bits of a random word (XLA's float conversion)."""
    mant = 52 if bits == 64 else 23
    m = arith.shrui(word, _c(bits, bits - mant))
    f = arith.uitofp(ft, m)
    return arith.mulf(f, arith.constant(ft, ir.FloatAttr.get(ft, 2.0 ** -mant)))


def _order_key(x):
    """A signed integer ordered as the float x (XLA's total order)."""
    bits = x.type.width
    i = arith.bitcast(_i(bits), x)
    sign = arith.shrsi(i, _c(bits, bits - 1))
    return arith.xori(i, arith.andi(sign, _c(bits, (1 << (bits - 1)) - 1)))


@lowers("xla.rng_uniform")
def lower_rng_uniform(lw):
    out = lw.result_shape
    et = out.element_type
    key, ctr = _load_state(lw)
    a = tensor.extract(lw.value("a"), [])
    b = tensor.extract(lw.value("b"), [])
    wide = et.bits == 64
    per = 2 if wide else 4
    n = _numel(out.dims)
    dims = out.dims

    def word_at(pos):
        lin = _linear_index(dims, pos)
        words = philox_block(key, ctr, key, arith.divui(lin, _c(64, per)))
        w = arith.remui(lin, _c(64, per))
        if wide:
            return _select_word([_u64(words[0], words[1]), _u64(words[2], words[3])], w)
        return _select_word(words, w)

    if et.is_float:
        ct = F64 if wide else F32
        ft = ct.builtin_type()

        def element(pos):
            u = _uniform01(word_at(pos), 64 if wide else 32, ft)
            aw = a if et == ct else arith.extf(ft, a)
            bw = b if et == ct else arith.extf(ft, b)
            v = arith.addf(aw, arith.mulf(u, arith.subf(bw, aw)))
            if et == ct:
                ok = arith.ori(arith.cmpf(CF.OLT, v, bw), arith.cmpf(CF.OLE, bw, aw))
                return arith.select(ok, v, aw)
            # a value that rounds up to b in the narrow type becomes a; compared on the bits
            # (total order) since IREE evaluates f16/bf16 comparisons in f32 before rounding
            t = narrow_float(v, et.builtin_type())
            ok = arith.ori(arith.cmpi(CI.slt, _order_key(t), _order_key(b)), arith.cmpf(CF.OLE, bw, aw))
            return arith.select(ok, t, a)
    elif et.is_pred:
        def element(pos):
            return a                       # [a, b) holds only a (or is empty)
    else:
        bits = 64 if wide else 32

        def ext(x):
            if et.bits == bits:
                return x
            return arith.extsi(_i(bits), x) if et.is_signed else arith.extui(_i(bits), x)

        def element(pos):
            aw, bw = ext(a), ext(b)
            rng = arith.subi(bw, aw)
            zero = arith.cmpi(CI.eq, rng, _c(bits, 0))
            safe = arith.select(zero, _c(bits, 1), rng)
            v = arith.addi(aw, arith.remui(word_at(pos), safe))
            v = arith.select(zero, aw, v)
            return v if et.bits == bits else arith.trunci(et.builtin_type(), v)
    data = _generate(out, element)
    _store_state(key, arith.addi(ctr, _c(64, (n + per - 1) // per)))
    return data


@lowers("xla.rng_normal")
def lower_rng_normal(lw):
    out = lw.result_shape
    et = out.element_type
    key, ctr = _load_state(lw)
    mu = tensor.extract(lw.value("mu"), [])
    sigma = tensor.extract(lw.value("sigma"), [])
    wide = et.bits == 64
    ct = F64 if wide else F32
    ft = ct.builtin_type()
    per = 1 if wide else 2           # elements per Philox block (two words, or two u64, each)
    n = _numel(out.dims)
    dims = out.dims

    def fc(v):
        return arith.constant(ft, ir.FloatAttr.get(ft, v))

    def element(pos):
        lin = _linear_index(dims, pos)
        words = philox_block(key, ctr, key, arith.divui(lin, _c(64, per)))
        if wide:
            w1, w2, bits = _u64(words[0], words[1]), _u64(words[2], words[3]), 64
        else:
            second = arith.cmpi(CI.ne, arith.remui(lin, _c(64, 2)), _c(64, 0))
            w1 = arith.select(second, words[2], words[0])
            w2 = arith.select(second, words[3], words[1])
            bits = 32
        u1 = arith.subf(fc(1.0), _uniform01(w1, bits, ft))      # (0, 1]
        u2 = _uniform01(w2, bits, ft)
        r = math.sqrt(arith.mulf(fc(-2.0), math.log(u1)))
        z = arith.mulf(r, math.cos(arith.mulf(fc(2 * pymath.pi), u2)))
        m = mu if et == ct else arith.extf(ft, mu)
        s = sigma if et == ct else arith.extf(ft, sigma)
        v = arith.addf(m, arith.mulf(s, z))
        return v if et == ct else narrow_float(v, et.builtin_type())
    data = _generate(out, element)
    _store_state(key, arith.addi(ctr, _c(64, (n + per - 1) // per)))
    return data
