/**
 * Measuring and printing helpers shared by every benchmark in bench/.
 *
 * - {@link summarize}: median, p99 (nearest rank), mean, min, max of latency samples in ms.
 * - {@link timeLoop}: one caller, back to back — a warm-up, then up to N iterations or T seconds,
 *   whichever ends first (every benchmark is bounded in time).
 * - {@link closedLoop}: C callers, each starting its next request when its previous one answered
 *   (a closed loop: the offered load adapts to the server, as real clients with one connection do).
 * - {@link printTable} and the `fmt*` helpers print compact, aligned tables; {@link timingRow} puts
 *   a figure next to its target and its ratio against a baseline measured in the same run.
 *
 * Benchmarks print figures; nothing here asserts.
 */
import { performance } from 'node:perf_hooks';

/** Latency figures of one measured operation, in milliseconds. */
export interface Summary {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
  /** Wall time the loop ran (ms), warm-up excluded. */
  elapsedMs: number;
}

/** How long a loop runs: `warmup` unmeasured calls, then until `iterations` or `seconds` is reached. */
export interface LoopOptions {
  warmup?: number;
  iterations: number;
  seconds: number;
}

/** Nearest-rank percentile (q in [0, 1]) of ascending `sorted` samples; NaN when empty. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1]!;
}

/** Summary of samples (ms); `elapsedMs` defaults to their sum (right for a sequential loop). */
export function summarize(samples: readonly number[], elapsedMs?: number): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const total = sorted.reduce((s, x) => s + x, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    mean: sorted.length ? total / sorted.length : NaN,
    min: sorted[0] ?? NaN,
    max: sorted[sorted.length - 1] ?? NaN,
    elapsedMs: elapsedMs ?? total,
  };
}

/** Operations per second of a summary's loop. */
export function throughput(s: Summary): number {
  return s.elapsedMs > 0 ? (s.n * 1000) / s.elapsedMs : NaN;
}

/** Runs `fn` back to back and summarizes the latency of each call; `i` counts from 0 after warm-up. */
export async function timeLoop(fn: (i: number) => unknown, opts: LoopOptions): Promise<Summary> {
  for (let i = 0; i < (opts.warmup ?? 0); i++) await fn(-1 - i);
  const samples: number[] = [];
  const start = performance.now();
  const deadline = start + opts.seconds * 1000;
  for (let i = 0; i < opts.iterations && performance.now() < deadline; i++) {
    const t = performance.now();
    await fn(i);
    samples.push(performance.now() - t);
  }
  return summarize(samples, performance.now() - start);
}

/** Returned by a {@link closedLoop} callback: this worker has nothing left to do (no sample taken). */
export const STOP: unique symbol = Symbol('stop');

/**
 * `concurrency` workers call `fn(worker, i)` in a closed loop until `iterations` calls in all or
 * `seconds` have passed, or `fn` returns {@link STOP}; each worker first makes `warmup` unmeasured
 * calls (with i = -1, -2, …).
 */
export async function closedLoop(
  fn: (worker: number, i: number) => Promise<unknown>,
  opts: LoopOptions & { concurrency: number },
): Promise<Summary> {
  const workers = Array.from({ length: opts.concurrency }, (_, w) => w);
  await Promise.all(
    workers.map(async (w) => {
      for (let i = 0; i < (opts.warmup ?? 0); i++) await fn(w, -1 - i);
    }),
  );
  const samples: number[] = [];
  const start = performance.now();
  const deadline = start + opts.seconds * 1000;
  let issued = 0;
  await Promise.all(
    workers.map(async (w) => {
      for (let i = 0; issued < opts.iterations && performance.now() < deadline; i++) {
        issued++;
        const t = performance.now();
        if ((await fn(w, i)) === STOP) break;
        samples.push(performance.now() - t);
      }
    }),
  );
  return summarize(samples, performance.now() - start);
}

/** Milliseconds with a precision that suits their size (`0.214`, `3.41`, `29.6`). */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 1) return ms.toFixed(3);
  if (ms < 10) return ms.toFixed(2);
  return ms.toFixed(1);
}

/** A rate as a percentage with enough digits for small rates (`0.143 %`, `6.85 %`). */
export function fmtPct(rate: number): string {
  if (!Number.isFinite(rate)) return '–';
  const pct = rate * 100;
  return `${pct < 1 ? pct.toFixed(3) : pct.toFixed(2)} %`;
}

/** `value / base` as `×12.3` (`–` when either is missing). */
export function fmtRatio(value: number, base: number): string {
  if (!(Number.isFinite(value) && Number.isFinite(base) && base > 0)) return '–';
  const r = value / base;
  return `×${r < 10 ? r.toFixed(2) : r.toFixed(1)}`;
}

/** Integers with thin grouping (`1,000,000`). */
export function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** `≤ 1 ms ✓` when `value` meets an upper-bound `target` (ms), `≤ 1 ms ✗` when not. */
export function fmtTarget(value: number, target: number | undefined): string {
  if (target === undefined) return '';
  return `≤ ${target} ms ${value <= target ? '✓' : '✗'}`;
}

/** Latency targets of one row (upper bounds, ms). */
export interface Targets {
  p50?: number;
  p99?: number;
}

/** Header of tables made of {@link timingRow}s. */
export const TIMING_COLUMNS = [
  'what',
  'n',
  'p50 ms',
  'p99 ms',
  'target p50',
  'target p99',
  'p50 vs base',
  'p99 vs base',
];

/**
 * One row of a timing table: a summary, its targets, and its ratios against `base` (same run);
 * `extra` cells go after the {@link TIMING_COLUMNS}.
 */
export function timingRow(
  what: string,
  s: Summary,
  targets: Targets = {},
  base?: Summary,
  ...extra: string[]
): string[] {
  return [
    what,
    fmtInt(s.n),
    fmtMs(s.p50),
    fmtMs(s.p99),
    fmtTarget(s.p50, targets.p50),
    fmtTarget(s.p99, targets.p99),
    base ? fmtRatio(s.p50, base.p50) : '',
    base ? fmtRatio(s.p99, base.p99) : '',
    ...extra,
  ];
}

/**
 * Prints `rows` under `columns` as an aligned table with a title; numeric-looking cells are
 * right-aligned. Columns that are empty in every row are left out.
 */
export function printTable(title: string, columns: readonly string[], rows: readonly (readonly string[])[]): void {
  const keep = columns.map((_, c) => rows.some((r) => (r[c] ?? '') !== ''));
  const cols = columns.filter((_, c) => keep[c]);
  const body = rows.map((r) => columns.map((_, c) => r[c] ?? '').filter((_, c) => keep[c]));
  const widths = cols.map((h, c) => Math.max(h.length, ...body.map((r) => r[c]!.length)));
  const numeric = (s: string) => /^[×≤~]?[-\d.,]+( ?[%a-zµ/]+)?( [✓✗])?$/.test(s);
  const line = (cells: readonly string[]) =>
    '  ' +
    cells
      .map((s, c) => (numeric(s) ? s.padStart(widths[c]!) : s.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd();
  console.log(`\n${title}`);
  console.log(line(cols));
  console.log(`  ${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const r of body) console.log(line(r));
}

/** Prints indented notes under a table. */
export function printNotes(...notes: string[]): void {
  for (const n of notes) console.log(`  · ${n}`);
}
