/**
 * Embeddings for the discover feed (note 3, phase 2): the built-in text embedder, int8 storage,
 * cosine similarity, and the sign-random-projection sketch that lets PostgreSQL without pgvector
 * find near neighbours. Pure (no I/O).
 *
 * - **Text embedder** ({@link embedText}): signed feature hashing (Weinberger et al. 2009, "Feature
 *   Hashing for Large Scale Multitask Learning") of word unigrams and bigrams into `dim` buckets,
 *   weighted by sublinear term frequency 1 + ln tf and by field (title 2, tags 1.5, body 1), common
 *   English stop words dropped, L2-normalized. No model, no download, deterministic. Its limits: it
 *   knows words, not meaning — synonyms ("car"/"automobile") are unrelated, and hash collisions add
 *   noise that shrinks as `dim` grows (256 dims: two unrelated words share a bucket with p = 1/256).
 * - **Storage**: vectors are L2-normalized and stored as int8 codes (round(127·x / max|x|)); cosine
 *   on the codes differs from cosine on the floats by ~1e-3, well below the gaps that order results.
 * - **Sketch** ({@link sketchOf}): 256 sign bits of random Gaussian projections (Charikar 2002,
 *   "Similarity estimation techniques from rounding algorithms": P[bit differs] = θ/π), compared by
 *   Hamming distance in SQL (`bit_count(a # b)`). Its first 16 bits are the item's **bucket**; a query
 *   probes the buckets of a prefix of `b` bits chosen for the table size, in query-directed
 *   multi-probe order (Lv et al. 2007, "Multi-Probe LSH"): flip first the bits whose projections are
 *   closest to zero.
 */
import { createHash } from 'node:crypto';

/** Sign bits per sketch (the SQL column is `bit(256)`). */
export const SKETCH_BITS = 256;
/** Bits of the sketch stored as the bucket (an integer 0..65535). */
export const BUCKET_BITS = 16;
/** Seed of the projection matrix. Changing it invalidates every stored sketch. */
const PROJECTION_SEED = 0x5eed_f00d;

const STOP_WORDS = new Set(
  ('a an and are as at be but by for from has have he her his i in is it its of on or our she so that the ' +
    'their them they this to was we were what when which who will with you your not no do does did can ' +
    'if than then there these those been into about over after more most also just how why hn ask show')
    .split(' '),
);

/** Field weights of the text embedder. */
const FIELD_WEIGHTS = { title: 2, tags: 1.5, text: 1 } as const;
/** Body characters read by the text embedder (longer bodies are cut). */
const MAX_TEXT_CHARS = 4000;

/** The words of a text: NFKD-folded, lower-cased letters and digits, stop words dropped. */
export function words(text: string): string[] {
  const folded = text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
  return (folded.match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 1 && w.length <= 40 && !STOP_WORDS.has(w));
}

/** 32-bit FNV-1a of a string (feature hashing; fast and well spread for short keys). */
function fnv1a(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  // final avalanche (murmur3 fmix32) so low bits are usable as an index
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * The built-in text embedding of an item: see the module doc. Returns a unit vector of length
 * `dim`, or all zeros when the item has no usable words.
 * @param dim dimension, ≥ 8.
 */
export function embedText(fields: { title: string; tags?: readonly string[]; text?: string }, dim: number): Float32Array {
  const tf = new Map<string, number>();
  const add = (ws: string[], weight: number) => {
    for (let i = 0; i < ws.length; i++) {
      tf.set(ws[i]!, (tf.get(ws[i]!) ?? 0) + weight);
      if (i + 1 < ws.length) tf.set(`${ws[i]} ${ws[i + 1]}`, (tf.get(`${ws[i]} ${ws[i + 1]}`) ?? 0) + weight * 0.5);
    }
  };
  add(words(fields.title), FIELD_WEIGHTS.title);
  add(words((fields.tags ?? []).join(' ')), FIELD_WEIGHTS.tags);
  add(words((fields.text ?? '').slice(0, MAX_TEXT_CHARS)), FIELD_WEIGHTS.text);
  const v = new Float32Array(dim);
  for (const [feature, count] of tf) {
    const h = fnv1a(feature, 0);
    const sign = fnv1a(feature, 0x9e3779b9) & 1 ? 1 : -1;
    v[h % dim]! += sign * (1 + Math.log(count));
  }
  return normalize(v);
}

/** `v / ‖v‖` (a new array); all zeros stay zeros. */
export function normalize(v: ArrayLike<number>): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  const out = new Float32Array(v.length);
  if (s === 0) return out;
  const inv = 1 / Math.sqrt(s);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! * inv;
  return out;
}

/** True when every component is 0 (no direction: such a vector is never stored). */
export function isZero(v: ArrayLike<number>): boolean {
  for (let i = 0; i < v.length; i++) if (v[i] !== 0) return false;
  return true;
}

/** int8 codes of a vector: round(127·x / max|x|). Direction is kept; the scale is dropped. */
export function quantize(v: ArrayLike<number>): Int8Array {
  let max = 0;
  for (let i = 0; i < v.length; i++) max = Math.max(max, Math.abs(v[i]!));
  const out = new Int8Array(v.length);
  if (max === 0) return out;
  const k = 127 / max;
  for (let i = 0; i < v.length; i++) out[i] = Math.round(v[i]! * k);
  return out;
}

/** Cosine similarity in [-1, 1] of two equal-length vectors; 0 when either is zero. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Deterministic standard normal samples (SHA-256 counter stream + Box–Muller). */
function gaussianStream(seed: number, count: number): Float32Array {
  const out = new Float32Array(count);
  let block = 0;
  let buf = Buffer.alloc(0);
  let off = 0;
  const u32 = () => {
    if (off + 4 > buf.length) {
      buf = createHash('sha256').update(`${seed}:${block++}`).digest();
      off = 0;
    }
    const x = buf.readUInt32LE(off);
    off += 4;
    return (x + 0.5) / 4294967296;
  };
  for (let i = 0; i < count; i += 2) {
    const r = Math.sqrt(-2 * Math.log(u32()));
    const t = 2 * Math.PI * u32();
    out[i] = r * Math.cos(t);
    if (i + 1 < count) out[i + 1] = r * Math.sin(t);
  }
  return out;
}

const projections = new Map<number, Float32Array>();

/** The fixed SKETCH_BITS × dim Gaussian projection matrix (row-major), built once per dimension. */
function projectionMatrix(dim: number): Float32Array {
  let m = projections.get(dim);
  if (!m) projections.set(dim, (m = gaussianStream(PROJECTION_SEED + dim, SKETCH_BITS * dim)));
  return m;
}

/** The projections r_j · v of a vector on the sketch's hyperplanes (length SKETCH_BITS). */
export function project(v: ArrayLike<number>): Float32Array {
  const dim = v.length;
  const m = projectionMatrix(dim);
  const out = new Float32Array(SKETCH_BITS);
  for (let j = 0; j < SKETCH_BITS; j++) {
    let s = 0;
    const row = j * dim;
    for (let i = 0; i < dim; i++) s += m[row + i]! * v[i]!;
    out[j] = s;
  }
  return out;
}

/** A vector's sketch: its projections' sign bits as a '0'/'1' string (SQL `bit(256)`) and its 16-bit bucket. */
export interface Sketch {
  bits: string;
  bucket: number;
  /** The projections (query-directed probing reads their magnitudes). */
  projections: Float32Array;
}

/** The sketch of a vector (see the module doc). */
export function sketchOf(v: ArrayLike<number>): Sketch {
  const p = project(v);
  let bits = '';
  for (let j = 0; j < SKETCH_BITS; j++) bits += p[j]! >= 0 ? '1' : '0';
  return { bits, bucket: parseInt(bits.slice(0, BUCKET_BITS), 2), projections: p };
}

/** A half-open range [lo, hi) of bucket values: the buckets sharing one prefix. */
export interface BucketRange {
  lo: number;
  hi: number;
}

/**
 * Prefix bits to probe with for a table of `rows` sketches, so that `probes` buckets hold about
 * `scanRows` rows: b = round(log2(rows · probes / scanRows)), clamped to [0, 16].
 */
export function prefixBits(rows: number, probes: number, scanRows: number): number {
  if (rows <= scanRows) return 0;
  return Math.max(0, Math.min(BUCKET_BITS, Math.round(Math.log2((rows * probes) / scanRows))));
}

/**
 * The buckets to probe for a query, best first: the query's own `b`-bit prefix, then the prefixes
 * with one or two bits flipped, ordered by the sum of the squared projections of the flipped bits
 * (query-directed multi-probe, Lv et al. 2007). At most `probes` ranges (all 2^b when fewer).
 */
export function probeRanges(q: Sketch, b: number, probes: number): BucketRange[] {
  if (b === 0) return [{ lo: 0, hi: 1 << BUCKET_BITS }];
  const prefix = q.bucket >>> (BUCKET_BITS - b);
  const cost = Array.from({ length: b }, (_, i) => q.projections[i]! ** 2);
  const sets: { mask: number; score: number }[] = [{ mask: 0, score: 0 }];
  for (let i = 0; i < b; i++) {
    sets.push({ mask: 1 << (b - 1 - i), score: cost[i]! });
    for (let j = i + 1; j < b; j++) sets.push({ mask: (1 << (b - 1 - i)) | (1 << (b - 1 - j)), score: cost[i]! + cost[j]! });
  }
  sets.sort((x, y) => x.score - y.score || x.mask - y.mask);
  const shift = BUCKET_BITS - b;
  return sets.slice(0, Math.min(probes, 2 ** b)).map(({ mask }) => {
    const p = prefix ^ mask;
    return { lo: p << shift, hi: (p + 1) << shift };
  });
}

/** One item a reader viewed or engaged with, for {@link decayedMean}. */
export interface Signal {
  vector: ArrayLike<number>;
  /** When, epoch ms. */
  atMs: number;
  /** Weight (a view 1, an engagement more). */
  weight: number;
}

/**
 * The reader's embedding: the time-decayed mean Σ w_i · 2^(−(now − t_i)/halfLife) · v̂_i (each v̂_i
 * unit length), L2-normalized (the mean's length does not matter to cosine). Signals after `nowMs`
 * are ignored. Returns null when nothing is left (the reader skips phase 2).
 */
export function decayedMean(signals: readonly Signal[], nowMs: number, halfLifeMs: number, dim: number): Float32Array | null {
  const sum = new Float64Array(dim);
  let any = false;
  for (const s of signals) {
    if (s.atMs > nowMs || s.vector.length !== dim) continue;
    const unit = normalize(s.vector);
    if (isZero(unit)) continue;
    const w = s.weight * 2 ** (-(nowMs - s.atMs) / halfLifeMs);
    if (!(w > 0)) continue;
    for (let i = 0; i < dim; i++) sum[i]! += w * unit[i]!;
    any = true;
  }
  if (!any || isZero(sum)) return null;
  return normalize(sum);
}
