/**
 * Implicit-feedback matrix factorisation by alternating least squares: readers and items get vectors
 * of `factors` numbers whose dot product predicts whether the reader engages with the item.
 *
 * Hu, Koren & Volinsky 2008, "Collaborative Filtering for Implicit Feedback Datasets" (ICDM):
 * minimise Σ_{u,i} c_ui (p_ui − x_uᵀ y_i)² + λ (Σ_u ‖x_u‖² + Σ_i ‖y_i‖²), with p_ui = 1 where the reader
 * engaged (0 elsewhere) and confidence c_ui = 1 + α · r_ui (r_ui: the interaction's weight). Each half
 * step solves, for every reader (then every item),
 *
 *   (YᵀY + Yᵀ(C_u − I)Y + λI) x_u = Yᵀ C_u p_u
 *
 * with YᵀY computed once per half step (the paper's speed-up). The solve is a few steps of the conjugate
 * gradient method warm-started at the previous vector (Takács, Pilászy & Tikk 2011, "Applications of the
 * conjugate gradient method for implicit feedback collaborative filtering", RecSys; 3 steps as in Ben
 * Frederickson's `implicit` library), so a half step costs O(nnz · f · steps + n · f² · steps) rather
 * than a Cholesky per row.
 *
 * {@link foldIn} gives a vector to a reader the last training did not see (or whose signals changed
 * since) from its current interactions and the trained item vectors: the same user step, solved exactly
 * (Cholesky), so serving never needs stored reader vectors.
 *
 * Pure and deterministic for a seed; works on integer-indexed sparse rows (CSR) and Float32Array factors
 * (row-major: vector k of a matrix is `[k·f, (k + 1)·f)`).
 */
import { prng } from '../kernel/prng.js';

/** A sparse matrix in compressed rows: row r's columns are `cols[ptr[r] .. ptr[r + 1])`. */
export interface Csr {
  rows: number;
  cols: number;
  ptr: Int32Array;
  idx: Int32Array;
  val: Float32Array;
}

/** Hyper-parameters of {@link trainAls}. */
export interface AlsSettings {
  /** Dimensions of a vector (f). */
  factors: number;
  /** λ, the L2 regularisation. */
  regularization: number;
  /** α of the confidence 1 + α · r. */
  alpha: number;
  /** Alternations (a reader step then an item step each). */
  iterations: number;
  /** Conjugate-gradient steps per solve. */
  cgSteps: number;
  /** Seed of the initial vectors. */
  seed: number;
}

/** A trained model: reader vectors (`readers × f`) and item vectors (`items × f`). */
export interface Factors {
  f: number;
  readers: Float32Array;
  items: Float32Array;
}

/** The transpose of a CSR matrix (items × readers from readers × items). */
export function transpose(m: Csr): Csr {
  const ptr = new Int32Array(m.cols + 1);
  for (let k = 0; k < m.idx.length; k++) ptr[m.idx[k]! + 1]!++;
  for (let c = 0; c < m.cols; c++) ptr[c + 1]! += ptr[c]!;
  const next = ptr.slice(0, m.cols);
  const idx = new Int32Array(m.idx.length);
  const val = new Float32Array(m.idx.length);
  for (let r = 0; r < m.rows; r++)
    for (let k = m.ptr[r]!; k < m.ptr[r + 1]!; k++) {
      const at = next[m.idx[k]!]!++;
      idx[at] = r;
      val[at] = m.val[k]!;
    }
  return { rows: m.cols, cols: m.rows, ptr, idx, val };
}

/** Small random vectors (uniform in ±0.01 / √f: a start near zero, Frederickson's `implicit` does the same). */
function initial(n: number, f: number, rand: () => number): Float32Array {
  const v = new Float32Array(n * f);
  const scale = 0.01 / Math.sqrt(f);
  for (let k = 0; k < v.length; k++) v[k] = (rand() * 2 - 1) * scale;
  return v;
}

/** YᵀY (f × f, row-major) of a factor matrix with `n` rows. */
export function gram(y: Float32Array, n: number, f: number): Float64Array {
  const g = new Float64Array(f * f);
  for (let r = 0; r < n; r++) {
    const o = r * f;
    for (let a = 0; a < f; a++) {
      const ya = y[o + a]!;
      if (ya === 0) continue;
      const ga = a * f;
      for (let b = a; b < f; b++) g[ga + b]! += ya * y[o + b]!;
    }
  }
  for (let a = 0; a < f; a++) for (let b = 0; b < a; b++) g[a * f + b] = g[b * f + a]!;
  return g;
}

/** Dot product of row `r` of `m` and `v` (length f). */
function dotRow(m: Float32Array, r: number, v: Float64Array, f: number): number {
  let s = 0;
  const o = r * f;
  for (let a = 0; a < f; a++) s += m[o + a]! * v[a]!;
  return s;
}

/** Scratch vectors of one solve (reused across rows). */
interface CgScratch {
  x: Float64Array;
  r: Float64Array;
  p: Float64Array;
  ap: Float64Array;
}

/** A · v for one row's system: YtY v + Σ (c − 1)(y·v) y + λ v, into `out`. */
function applyA(
  yty: Float64Array,
  y: Float32Array,
  m: Csr,
  row: number,
  s: AlsSettings,
  v: Float64Array,
  out: Float64Array,
): void {
  const f = s.factors;
  for (let a = 0; a < f; a++) {
    let t = s.regularization * v[a]!;
    const ga = a * f;
    for (let b = 0; b < f; b++) t += yty[ga + b]! * v[b]!;
    out[a] = t;
  }
  for (let k = m.ptr[row]!; k < m.ptr[row + 1]!; k++) {
    const j = m.idx[k]!;
    const w = s.alpha * m.val[k]! * dotRow(y, j, v, f);
    const o = j * f;
    for (let a = 0; a < f; a++) out[a]! += w * y[o + a]!;
  }
}

/** Updates row `row` of `x` in place: `cgSteps` conjugate-gradient steps from its current value. */
function solveRow(
  x: Float32Array,
  y: Float32Array,
  yty: Float64Array,
  m: Csr,
  row: number,
  s: AlsSettings,
  t: CgScratch,
): void {
  const f = s.factors;
  const o = row * f;
  for (let a = 0; a < f; a++) t.x[a] = x[o + a]!;
  applyA(yty, y, m, row, s, t.x, t.ap);
  // r = b − A x, with b = Σ c_j y_j over the row's entries (p = 1 there)
  for (let a = 0; a < f; a++) t.r[a] = -t.ap[a]!;
  for (let k = m.ptr[row]!; k < m.ptr[row + 1]!; k++) {
    const j = m.idx[k]!;
    const c = 1 + s.alpha * m.val[k]!;
    for (let a = 0; a < f; a++) t.r[a]! += c * y[j * f + a]!;
  }
  t.p.set(t.r);
  let rs = dot(t.r, t.r);
  for (let step = 0; step < s.cgSteps && rs > 1e-20; step++) {
    applyA(yty, y, m, row, s, t.p, t.ap);
    const alpha = rs / dot(t.p, t.ap);
    for (let a = 0; a < f; a++) {
      t.x[a]! += alpha * t.p[a]!;
      t.r[a]! -= alpha * t.ap[a]!;
    }
    const next = dot(t.r, t.r);
    for (let a = 0; a < f; a++) t.p[a] = t.r[a]! + (next / rs) * t.p[a]!;
    rs = next;
  }
  for (let a = 0; a < f; a++) x[o + a] = t.x[a]!;
}

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let k = 0; k < a.length; k++) s += a[k]! * b[k]!;
  return s;
}

/** Rows solved between two yields to the event loop (a few ms of work at 64 factors). */
const ROWS_PER_SLICE = 256;

/**
 * One half step: every row of `x` solved against the fixed `y` (the rows of `m` index `x`), yielding to the
 * event loop (`pause`) every {@link ROWS_PER_SLICE} rows, so a serving process is never held for long.
 */
async function halfStep(
  x: Float32Array,
  y: Float32Array,
  m: Csr,
  s: AlsSettings,
  t: CgScratch,
  pause: () => Promise<void>,
): Promise<void> {
  const yty = gram(y, m.cols, s.factors);
  for (let row = 0; row < m.rows; row++) {
    solveRow(x, y, yty, m, row, s, t);
    if (row % ROWS_PER_SLICE === ROWS_PER_SLICE - 1) await pause();
  }
}

/**
 * Trains reader and item vectors on `m` (readers × items, values = interaction weights > 0).
 * @param pause awaited between slices of rows and after each alternation (the caller yields to the event
 *   loop there, and may throw to stop the training); default: nothing.
 */
export async function trainAls(m: Csr, s: AlsSettings, pause: () => Promise<void> = async () => {}): Promise<Factors> {
  const rand = prng(s.seed);
  const f = s.factors;
  const readers = initial(m.rows, f, rand);
  const items = initial(m.cols, f, rand);
  const mt = transpose(m);
  const t: CgScratch = {
    x: new Float64Array(f),
    r: new Float64Array(f),
    p: new Float64Array(f),
    ap: new Float64Array(f),
  };
  for (let it = 0; it < s.iterations; it++) {
    await halfStep(readers, items, m, s, t, pause);
    await halfStep(items, readers, mt, s, t, pause);
    await pause();
  }
  // a last reader step, so the reader vectors answer the final item vectors (as a fold-in would)
  await halfStep(readers, items, m, s, t, pause);
  return { f, readers, items };
}

/**
 * A reader's vector from its interactions against trained item vectors (the user step solved exactly:
 * Cholesky of the f × f system). `entries`: item rows and weights. Null when it has none.
 * @param yty the item vectors' Gram matrix (`gram(items, n, f)`), computed once per model.
 */
export function foldIn(
  items: Float32Array,
  yty: Float64Array,
  entries: readonly { row: number; weight: number }[],
  s: Pick<AlsSettings, 'factors' | 'regularization' | 'alpha'>,
): Float32Array | null {
  if (entries.length === 0) return null;
  const f = s.factors;
  const a = Float64Array.from(yty);
  const b = new Float64Array(f);
  for (let d = 0; d < f; d++) a[d * f + d]! += s.regularization;
  for (const { row, weight } of entries) {
    const c = s.alpha * weight;
    const o = row * f;
    for (let p = 0; p < f; p++) {
      const cyp = c * items[o + p]!;
      b[p]! += items[o + p]! + cyp;
      const ap = p * f;
      for (let q = p; q < f; q++) a[ap + q]! += cyp * items[o + q]!; // the upper half: A is symmetric
    }
  }
  for (let p = 0; p < f; p++) for (let q = 0; q < p; q++) a[p * f + q] = a[q * f + p]!;
  return Float32Array.from(choleskySolve(a, b, f));
}

/**
 * Solves A x = b for a symmetric positive definite A (f × f, row-major), in place on copies.
 * (Golub & Van Loan, "Matrix Computations", §4.2: the Cholesky factorisation.)
 * @throws Error when A is not positive definite (cannot happen with λ > 0).
 */
export function choleskySolve(a: Float64Array, b: Float64Array, f: number): Float64Array {
  const l = new Float64Array(f * f);
  for (let i = 0; i < f; i++) {
    for (let j = 0; j <= i; j++) {
      let s = a[i * f + j]!;
      for (let k = 0; k < j; k++) s -= l[i * f + k]! * l[j * f + k]!;
      if (i === j) {
        if (s <= 0) throw new Error('the system is not positive definite');
        l[i * f + i] = Math.sqrt(s);
      } else l[i * f + j] = s / l[j * f + j]!;
    }
  }
  const y = new Float64Array(f);
  for (let i = 0; i < f; i++) {
    let s = b[i]!;
    for (let k = 0; k < i; k++) s -= l[i * f + k]! * y[k]!;
    y[i] = s / l[i * f + i]!;
  }
  const x = new Float64Array(f);
  for (let i = f - 1; i >= 0; i--) {
    let s = y[i]!;
    for (let k = i + 1; k < f; k++) s -= l[k * f + i]! * x[k]!;
    x[i] = s / l[i * f + i]!;
  }
  return x;
}
