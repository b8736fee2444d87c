/**
 * Embeddings for the discover feed (the discover design, phase 2): the built-in text embedder, int8 storage,
 * cosine similarity, and the reader embedding (a decayed mean). Pure (no I/O). The nearest-neighbour
 * search over them is a VectorSearch (vector-search.ts).
 *
 * - **Text embedder** ({@link embedText}): signed feature hashing (Weinberger et al. 2009, "Feature
 *   Hashing for Large Scale Multitask Learning") of word unigrams and bigrams into `dim` buckets,
 *   weighted by sublinear term frequency 1 + ln tf and by field (title 2, tags 1.5, body 1), common
 *   English stop words dropped, L2-normalized. No model, no download, deterministic. Its limits: it
 *   knows words, not meaning — synonyms ("car"/"automobile") are unrelated, and hash collisions add
 *   noise that shrinks as `dim` grows (256 dims: two unrelated words share a bucket with p = 1/256).
 * - **Storage**: vectors are L2-normalized and stored as int8 codes (round(127·x / max|x|)); cosine
 *   on the codes differs from cosine on the floats by ~1e-3, well below the gaps that order results.
 */
import { fmix32, fnv1a } from '../kernel/hash.js';
import { foldBounded } from '../kernel/items/fold.js';
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by for from has have he her his i in is it its of on or our she so that the ' +
    'their them they this to was we were what when which who will with you your not no do does did can ' +
    'if than then there these those been into about over after more most also just how why hn ask show'
  ).split(' '),
);

/** Field weights of the text embedder. */
const FIELD_WEIGHTS = { title: 2, tags: 1.5, text: 1 } as const;
/**
 * Folded characters the text embedder reads of each field (the body's longer part is cut): the work per
 * item is bounded whatever NFKD makes of it (src/kernel/items/fold.ts) — a body of 100,000 × U+FDFA took
 * 17 ms to embed, now about what 4,000 letters take.
 */
const MAX_FOLDED = { title: 2000, tags: 2000, text: 4000 } as const;

/** The embedder's fold: NFKD, the Latin accents (U+0300–U+036F) removed, lower case. */
const foldAccents = (s: string) =>
  s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();

/**
 * The words of a text: NFKD-folded, lower-cased letters and digits, stop words dropped; at most `maxFolded`
 * folded characters are read (a word cut there is left out).
 */
export function words(text: string | readonly string[], maxFolded: number = MAX_FOLDED.text): string[] {
  const { folded, cut } = foldBounded(typeof text === 'string' ? [text] : text, maxFolded, foldAccents);
  const ws = folded.match(/[\p{L}\p{N}]+/gu) ?? [];
  if (cut) ws.pop();
  return ws.filter((w) => w.length > 1 && w.length <= 40 && !STOP_WORDS.has(w));
}

/** 32-bit FNV-1a with MurmurHash3's finalizer, so low bits are usable as a feature index. */
function featureHash(s: string, seed: number): number {
  return fmix32(fnv1a(s, seed));
}

/**
 * The built-in text embedding of an item: see the module doc. Returns a unit vector of length
 * `dim`, or all zeros when the item has no usable words.
 * @param dim dimension, ≥ 8.
 */
export function embedText(
  fields: { title: string; tags?: readonly string[]; text?: string },
  dim: number,
): Float32Array {
  const tf = new Map<string, number>();
  const add = (ws: string[], weight: number) => {
    for (let i = 0; i < ws.length; i++) {
      tf.set(ws[i]!, (tf.get(ws[i]!) ?? 0) + weight);
      if (i + 1 < ws.length) tf.set(`${ws[i]} ${ws[i + 1]}`, (tf.get(`${ws[i]} ${ws[i + 1]}`) ?? 0) + weight * 0.5);
    }
  };
  add(words(fields.title, MAX_FOLDED.title), FIELD_WEIGHTS.title);
  add(words((fields.tags ?? []).join(' '), MAX_FOLDED.tags), FIELD_WEIGHTS.tags);
  add(words(fields.text ?? '', MAX_FOLDED.text), FIELD_WEIGHTS.text);
  const v = new Float32Array(dim);
  for (const [feature, count] of tf) {
    const h = featureHash(feature, 0);
    const sign = featureHash(feature, 0x9e3779b9) & 1 ? 1 : -1;
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
export function decayedMean(
  signals: readonly Signal[],
  nowMs: number,
  halfLifeMs: number,
  dim: number,
): Float32Array | null {
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
