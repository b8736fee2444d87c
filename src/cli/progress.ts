/**
 * Progress of a long CLI command, on stderr, so stdout keeps only the report (never minutes
 * of silence, also without a terminal):
 * - stderr is a terminal → a cli-progress bar redrawn in place;
 * - otherwise (CI, `| tee`, a log file) → one plain line every `intervalMs` (default 5 s), printed from a
 *   timer as well as on updates, so a step that updates nothing for a while still shows the command is
 *   alive: `import hn: 42% | 8500 items, 0 skipped | 12 s`.
 * Nothing is printed for a command that finishes within the first interval.
 */
import { Presets, SingleBar } from 'cli-progress';

/** Seconds between plain progress lines when stderr is not a terminal (ms). */
export const PROGRESS_INTERVAL_MS = 5_000;

/** Options of {@link Progress}. */
export interface ProgressOptions {
  /** What runs, e.g. `import hn`. */
  label: string;
  /** The value at 100 %; 0 when unknown (only the detail and the time are shown). */
  total: number;
  /** Show `value/total` (counts of things); false shows only the percentage (bytes of a file). */
  counts?: boolean;
  /** Draw a bar (default: stderr is a terminal). */
  tty?: boolean;
  /** Between plain lines, ms (default {@link PROGRESS_INTERVAL_MS}). */
  intervalMs?: number;
  /** The clock, ms (default `performance.now`); tests pass their own. */
  now?: () => number;
  /** Print plain lines from a timer too (default true); tests turn it off and drive {@link Progress.tick}. */
  timer?: boolean;
  /** Where plain lines go (default stderr). */
  write?: (line: string) => void;
}

/** A progress display; call {@link Progress.stop} when the work ends (or fails). */
export class Progress {
  private value = 0;
  private total: number;
  private detail = '';
  private readonly startedAt: number;
  private lastLineAt: number;
  private readonly bar: SingleBar | null;
  private readonly interval: ReturnType<typeof setInterval> | null = null;
  private readonly now: () => number;
  private readonly intervalMs: number;
  private readonly write: (line: string) => void;

  constructor(private readonly opts: ProgressOptions) {
    this.now = opts.now ?? (() => performance.now());
    this.intervalMs = opts.intervalMs ?? PROGRESS_INTERVAL_MS;
    this.write = opts.write ?? ((line) => process.stderr.write(`${line}\n`));
    this.startedAt = this.lastLineAt = this.now();
    this.total = opts.total;
    if (opts.tty ?? Boolean(process.stderr.isTTY)) {
      const amount = opts.counts ? '{value}/{total}' : '{percentage}%';
      this.bar = new SingleBar(
        {
          stream: process.stderr,
          format: `${opts.label} [{bar}] ${amount} | {detail} | {eta_formatted}`,
          hideCursor: true,
        },
        Presets.shades_classic,
      );
      this.bar.start(Math.max(opts.total, 1), 0, { detail: '' });
    } else {
      this.bar = null;
      if (opts.timer !== false) {
        this.interval = setInterval(() => this.tick(), this.intervalMs);
        this.interval.unref();
      }
    }
  }

  /** Sets how far the work is (`value` of `total`) and what to show beside it. */
  update(value: number, detail?: string): void {
    this.value = value;
    if (detail !== undefined) this.detail = detail;
    this.bar?.update(value, { detail: this.detail });
    this.tick();
  }

  /** Sets the value at 100 % (known only once the work started, e.g. a file's size). */
  setTotal(total: number): void {
    if (total === this.total) return;
    this.total = total;
    this.bar?.setTotal(Math.max(total, 1));
  }

  /** Adds `n` to the value. */
  increment(n = 1, detail?: string): void {
    this.update(this.value + n, detail);
  }

  /** Prints a plain line when the interval has passed since the last one (no-op with a bar). */
  tick(): void {
    if (this.bar) return;
    const t = this.now();
    if (t - this.lastLineAt < this.intervalMs) return;
    this.lastLineAt = t;
    this.write(this.line());
  }

  /** The plain line for the current state. */
  line(): string {
    const { label, counts } = this.opts;
    const total = this.total;
    const parts: string[] = [];
    if (total > 0) {
      const pct = `${Math.min(100, Math.floor((this.value / total) * 100))}%`;
      parts.push(counts ? `${this.value}/${total} (${pct})` : pct);
    }
    if (this.detail) parts.push(this.detail);
    parts.push(`${Math.round((this.now() - this.startedAt) / 1000)} s`);
    return `${label}: ${parts.join(' | ')}`;
  }

  /** Ends the display (idempotent). */
  stop(): void {
    if (this.interval) clearInterval(this.interval);
    this.bar?.stop();
  }
}
