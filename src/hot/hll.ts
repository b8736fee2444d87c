/**
 * HyperLogLog, bit-compatible with Redis's `PFADD` / `PFCOUNT` (Redis ≥ 5, src/hyperloglog.c), so the
 * in-process hot counters estimate exactly what Redis estimates for the same visitors, and a
 * checkpoint written by either store restores into the other.
 *
 * - Precision p = 14: m = 16,384 registers of 6 bits; standard error 1.04/√m = 0.81 %
 *   (Flajolet, Fusy, Gandouet, Meunier 2007, "HyperLogLog: the analysis of a near-optimal
 *   cardinality estimation algorithm").
 * - Hash: MurmurHash64A (Austin Appleby) with Redis's seed 0xadc83b19 over the element's UTF-8
 *   bytes. Register index = the low 14 bits; the value = 1 + the number of trailing zeros of the
 *   remaining 50 bits (bit 50 forced to 1, so at most 51) — exactly `hllPatLen` of Redis.
 * - Estimate: Otmar Ertl's improved raw estimator ("New cardinality estimation algorithms for
 *   HyperLogLog sketches", 2017), as `hllCount` computes it from the register histogram, rounded
 *   to an integer like Redis (`llroundl`).
 * - Serialization: Redis's string format — 16-byte header `HYLL`, encoding (0 dense, 1 sparse),
 *   3 unused bytes, 8-byte cached cardinality whose top bit marks the cache invalid — then 12,288
 *   bytes of packed 6-bit registers (dense) or the sparse opcodes ZERO / XZERO / VAL.
 *
 * Registers live in a Map while few are set (most items have few visitors) and in a Uint8Array once
 * more than {@link SPARSE_MAX_REGISTERS} are, so small sketches cost a few hundred bytes, not 16 KiB.
 */

/** log2 of the number of registers (Redis's HLL_P). */
export const HLL_P = 14;
/** Number of registers m (Redis's HLL_REGISTERS). */
export const HLL_REGISTERS = 1 << HLL_P;
/** Bits of hash left for the run length (Redis's HLL_Q). */
const HLL_Q = 64 - HLL_P;
/** Standard error of the estimate, 1.04/√m (Flajolet et al. 2007): 0.8125 % for m = 16,384. */
export const HLL_STANDARD_ERROR = 1.04 / Math.sqrt(HLL_REGISTERS);
const HLL_ALPHA_INF = 1 / (2 * Math.LN2); // 0.7213475204444817, Ertl 2017
const HEADER_BYTES = 16;
const DENSE_BYTES = HEADER_BYTES + (HLL_REGISTERS * 6) / 8;
/** Registers kept in a Map before switching to a flat array. */
const SPARSE_MAX_REGISTERS = 512;
const SEED = 0xadc83b19n;
const M64 = 0xc6a4a7935bd1e995n;
const MASK64 = 0xffffffffffffffffn;
const encoder = new TextEncoder();

/** MurmurHash64A of `bytes` with `seed`, as Redis's hyperloglog.c computes it (little-endian reads). */
export function murmurHash64A(bytes: Uint8Array, seed: bigint = SEED): bigint {
  const len = bytes.length;
  let h = (seed ^ ((BigInt(len) * M64) & MASK64)) & MASK64;
  const blocks = len - (len & 7);
  for (let i = 0; i < blocks; i += 8) {
    let k = 0n;
    for (let b = 7; b >= 0; b--) k = (k << 8n) | BigInt(bytes[i + b]!);
    k = (k * M64) & MASK64;
    k ^= k >> 47n;
    k = (k * M64) & MASK64;
    h ^= k;
    h = (h * M64) & MASK64;
  }
  const rest = len & 7;
  if (rest > 0) {
    for (let b = rest - 1; b >= 0; b--) h ^= BigInt(bytes[blocks + b]!) << BigInt(8 * b);
    h = (h * M64) & MASK64;
  }
  h ^= h >> 47n;
  h = (h * M64) & MASK64;
  h ^= h >> 47n;
  return h;
}

/** The register an element lands in and the value it proposes (Redis's `hllPatLen`). */
export function hllPosition(element: string): { index: number; value: number } {
  const hash = murmurHash64A(encoder.encode(element));
  const index = Number(hash & BigInt(HLL_REGISTERS - 1));
  let rest = (hash >> BigInt(HLL_P)) | (1n << BigInt(HLL_Q));
  let value = 1;
  while ((rest & 1n) === 0n) {
    value++;
    rest >>= 1n;
  }
  return { index, value };
}

/** A HyperLogLog sketch (see the module doc). */
export class HyperLogLog {
  private sparse: Map<number, number> | null = new Map();
  private dense: Uint8Array | null = null;

  /** Adds an element; true when a register changed (Redis's PFADD reply 1). */
  add(element: string): boolean {
    const { index, value } = hllPosition(element);
    return this.raise(index, value);
  }

  /** Registers set to a non-zero value. */
  get setRegisters(): number {
    if (this.sparse) return this.sparse.size;
    let n = 0;
    for (const v of this.dense!) if (v !== 0) n++;
    return n;
  }

  /** The estimated cardinality (Ertl's estimator, rounded like Redis's PFCOUNT). */
  count(): number {
    const histo = new Array<number>(HLL_Q + 2).fill(0);
    if (this.sparse) {
      histo[0] = HLL_REGISTERS - this.sparse.size;
      for (const v of this.sparse.values()) histo[v]!++;
    } else {
      for (const v of this.dense!) histo[v]!++;
    }
    const m = HLL_REGISTERS;
    let z = m * tau((m - histo[HLL_Q + 1]!) / m);
    for (let j = HLL_Q; j >= 1; j--) {
      z += histo[j]!;
      z *= 0.5;
    }
    z += m * sigma(histo[0]! / m);
    return Math.round((HLL_ALPHA_INF * m * m) / z);
  }

  /** Folds `other` into this sketch (register-wise max, Redis's PFMERGE). */
  merge(other: HyperLogLog): void {
    other.forEachRegister((index, value) => void this.raise(index, value));
  }

  /**
   * The sketch as a Redis HLL string: sparse when every register fits (value ≤ 32), dense
   * otherwise; the cached cardinality is marked invalid so Redis recomputes it.
   */
  toRedis(): Buffer {
    const regs = this.registers();
    const sparse = encodeSparse(regs);
    if (sparse) return withHeader(1, sparse);
    const body = Buffer.alloc(DENSE_BYTES - HEADER_BYTES);
    for (let i = 0; i < HLL_REGISTERS; i++) if (regs[i]) setDense(body, i, regs[i]!);
    return withHeader(0, body);
  }

  /**
   * Parses a Redis HLL string (dense or sparse).
   * @throws Error when the bytes are not a valid Redis HyperLogLog.
   */
  static fromRedis(bytes: Uint8Array): HyperLogLog {
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (buf.length < HEADER_BYTES || buf.toString('latin1', 0, 4) !== 'HYLL')
      throw new Error('not a Redis HyperLogLog');
    const hll = new HyperLogLog();
    const encoding = buf[4];
    if (encoding === 0) {
      if (buf.length !== DENSE_BYTES)
        throw new Error(`dense HyperLogLog of ${buf.length} bytes, expected ${DENSE_BYTES}`);
      const body = buf.subarray(HEADER_BYTES);
      for (let i = 0; i < HLL_REGISTERS; i++) {
        const v = getDense(body, i);
        if (v) hll.raise(i, v);
      }
    } else if (encoding === 1) {
      decodeSparse(buf.subarray(HEADER_BYTES), (i, v) => void hll.raise(i, v));
    } else {
      throw new Error(`unknown HyperLogLog encoding ${String(encoding)}`);
    }
    return hll;
  }

  private raise(index: number, value: number): boolean {
    if (this.sparse) {
      const old = this.sparse.get(index) ?? 0;
      if (value <= old) return false;
      this.sparse.set(index, value);
      if (this.sparse.size > SPARSE_MAX_REGISTERS) this.densify();
      return true;
    }
    if (value <= this.dense![index]!) return false;
    this.dense![index] = value;
    return true;
  }

  private densify(): void {
    const dense = new Uint8Array(HLL_REGISTERS);
    for (const [i, v] of this.sparse!) dense[i] = v;
    this.dense = dense;
    this.sparse = null;
  }

  private forEachRegister(fn: (index: number, value: number) => void): void {
    if (this.sparse) for (const [i, v] of this.sparse) fn(i, v);
    else this.dense!.forEach((v, i) => v && fn(i, v));
  }

  private registers(): Uint8Array {
    if (this.dense) return this.dense;
    const regs = new Uint8Array(HLL_REGISTERS);
    for (const [i, v] of this.sparse!) regs[i] = v;
    return regs;
  }
}

/** Ertl's σ(x) (Redis `hllSigma`). */
function sigma(x: number): number {
  if (x === 1) return Infinity;
  let y = 1;
  let z = x;
  let zPrime: number;
  do {
    x *= x;
    zPrime = z;
    z += x * y;
    y += y;
  } while (zPrime !== z);
  return z;
}

/** Ertl's τ(x) (Redis `hllTau`). */
function tau(x: number): number {
  if (x === 0 || x === 1) return 0;
  let y = 1;
  let z = 1 - x;
  let zPrime: number;
  do {
    x = Math.sqrt(x);
    zPrime = z;
    y *= 0.5;
    z -= (1 - x) ** 2 * y;
  } while (zPrime !== z);
  return z / 3;
}

function withHeader(encoding: 0 | 1, body: Uint8Array): Buffer {
  const out = Buffer.alloc(HEADER_BYTES + body.length);
  out.write('HYLL', 0, 'latin1');
  out[4] = encoding;
  out[15] = 0x80; // cached cardinality invalid: Redis recomputes on the next PFCOUNT
  out.set(body, HEADER_BYTES);
  return out;
}

/** Register i of a dense body: 6 bits starting at bit 6i, least significant bits first. */
function getDense(body: Uint8Array, i: number): number {
  const bit = i * 6;
  const b = bit >> 3;
  const fb = bit & 7;
  const lo = body[b]! >> fb;
  const hi = b + 1 < body.length ? body[b + 1]! << (8 - fb) : 0;
  return (lo | hi) & 63;
}

function setDense(body: Uint8Array, i: number, v: number): void {
  const bit = i * 6;
  const b = bit >> 3;
  const fb = bit & 7;
  body[b] = (body[b]! & ~(63 << fb)) | ((v << fb) & 0xff);
  if (b + 1 < body.length) body[b + 1] = (body[b + 1]! & ~(63 >> (8 - fb))) | (v >> (8 - fb));
}

/** Sparse opcodes for all registers, or null when a value exceeds 32 (sparse cannot hold it). */
function encodeSparse(regs: Uint8Array): Uint8Array | null {
  const out: number[] = [];
  let i = 0;
  while (i < HLL_REGISTERS) {
    const v = regs[i]!;
    let run = 1;
    while (i + run < HLL_REGISTERS && regs[i + run] === v) run++;
    if (v === 0) {
      for (let left = run; left > 0; ) {
        const n = Math.min(left, 16384);
        if (n <= 64)
          out.push(n - 1); // ZERO 00xxxxxx
        else out.push(0x40 | ((n - 1) >> 8), (n - 1) & 0xff); // XZERO 01xxxxxx yyyyyyyy
        left -= n;
      }
    } else {
      if (v > 32) return null;
      for (let left = run; left > 0; ) {
        const n = Math.min(left, 4);
        out.push(0x80 | ((v - 1) << 2) | (n - 1)); // VAL 1vvvvvxx
        left -= n;
      }
    }
    i += run;
  }
  return Uint8Array.from(out);
}

/** Walks sparse opcodes, calling `set` for every non-zero register. */
function decodeSparse(body: Uint8Array, set: (index: number, value: number) => void): void {
  let index = 0;
  for (let p = 0; p < body.length; ) {
    const op = body[p]!;
    if ((op & 0xc0) === 0) {
      index += (op & 0x3f) + 1;
      p++;
    } else if ((op & 0xc0) === 0x40) {
      if (p + 1 >= body.length) throw new Error('truncated sparse HyperLogLog');
      index += (((op & 0x3f) << 8) | body[p + 1]!) + 1;
      p += 2;
    } else {
      const value = ((op >> 2) & 0x1f) + 1;
      const run = (op & 3) + 1;
      for (let r = 0; r < run; r++) set(index + r, value);
      index += run;
      p++;
    }
    if (index > HLL_REGISTERS) throw new Error('sparse HyperLogLog overflows its registers');
  }
  if (index !== HLL_REGISTERS) throw new Error('sparse HyperLogLog does not cover every register');
}
