/**
 * The PostgreSQL side of the seen-filter checkpoints (tables of migration 8, checkpoint-schema.ts): an
 * append-only log of journalled hash pairs per subject, folded now and then into a compacted base.
 * It knows rows and bytes, not Bloom filters: the folding is the caller's (seen-fold.ts, run by seen-checkpointer.ts).
 *
 * Safe with any number of processes: appends are plain inserts (the subject's row is upserted, its
 * expiry and activity only grow); a compaction locks the subject's row (`FOR UPDATE`), so two never
 * fold the same rows, and it deletes exactly the rows it read — a row committed meanwhile stays for
 * the next one (its `seq` may be lower than one already folded: sequences are not commit order).
 * Works the same on PGlite and a PostgreSQL server. Every method may throw FreshetError
 * `STORE_UNAVAILABLE` (database unreachable).
 *
 * Two kinds of rows beside the subjects, in the same table (no log rows, no bitmap): `l:<YYYYMMDD>`,
 * the layout of a rolling day (layout.ts; the first recorded stays, as in Redis), so a process that
 * lost Redis gives the day the layout its checkpoints were written under; and `r-signatures`, every
 * geometry signature of the reader subjects (scalable-bloom.ts), so a reader's checkpoint is found
 * whatever geometry it was written under — kept up by every append.
 */
import type { Sql, SqlTx } from '../kernel/sql/sql.js';

/** One journal taken from Redis, to append. */
export interface CheckpointAppend {
  /** `d:<geometry>:<shard>:<YYYYMMDD>` or `r:<geometry>:<reader>` (seen-checkpointer.ts). */
  subject: string;
  /** Epoch ms from which the subject may be deleted (its filter's end in Redis). */
  expiresAt: number;
  /** The subject's latest activity (a reader's `t`; 0 for a day). */
  atMs: number;
  /** Packed hash pairs, 8 bytes per member, in journal order. */
  pairs: Uint8Array;
}

/** One log row. */
export interface CheckpointLogRow {
  seq: number;
  atMs: number;
  pairs: Uint8Array;
}

/** Everything checkpointed of one subject. */
export interface SubjectCheckpoint {
  subject: string;
  expiresAt: number;
  /** Latest activity over the base and every row. */
  atMs: number;
  /** The compacted base, or null before the first compaction. */
  base: { bitmap: Uint8Array; state: string } | null;
  /** Rows not folded into the base yet, in `seq` order. */
  log: CheckpointLogRow[];
}

/** Sizes of what a subject has checkpointed, bytes. */
export interface SubjectBytes {
  /** Log rows not folded yet. */
  log: number;
  /** The compacted base bitmap (0: none yet). */
  base: number;
}

/** What a compaction stores as the subject's new base. */
export interface FoldedBase {
  bitmap: Uint8Array;
  /** Kind-specific state kept beside the bitmap (a reader's `t|counts`; '' for a day). */
  state: string;
}

/** Rows per INSERT statement (3 parameters each, far below PostgreSQL's 65,535). */
const CHUNK_ROWS = 1000;

/** The row listing the reader subjects' signatures (comma-separated in `state`). */
const SIGNATURES = 'r-signatures';
/** Its expiry: never (epoch ms past year 275,000). */
const NEVER = 2 ** 53 - 1;

/** A rolling day's layout, to record with the day's rows. */
export interface DayLayoutRecord {
  /** `YYYYMMDD`. */
  day: string;
  /** The layout id (layout.ts). */
  layout: string;
  /** When the day's checkpoints expire (epoch ms). */
  expiresAt: number;
}

/** The day-layout row of a day: `l:<YYYYMMDD>`. */
function layoutSubject(day: string): string {
  return `l:${day}`;
}

interface BaseRow {
  subject: string;
  expires_at: number | string;
  at_ms: number | string;
  state: string;
  bitmap: Uint8Array | null;
}

interface LogRow {
  subject: string;
  seq: number | string;
  at_ms: number | string;
  pairs: Uint8Array;
}

/** The checkpoint tables on a migrated `Sql` it does not own. */
export class PostgresSeenCheckpoints {
  constructor(private readonly sql: Sql) {}

  /**
   * Appends the rows in one transaction (subjects upserted first, in subject order, so concurrent
   * appends never deadlock). Rows of one subject are merged into one, in order.
   * @returns the bytes of log rows and base each appended subject now has (what decides a compaction).
   */
  async append(
    rows: readonly CheckpointAppend[],
    records: { days?: readonly DayLayoutRecord[]; signatures?: readonly string[] } = {},
  ): Promise<Map<string, SubjectBytes>> {
    const merged = mergeBySubject(rows);
    if (merged.length === 0) return new Map();
    return this.sql.transaction(async (tx) => {
      await recordDays(tx, records.days ?? []);
      await recordSignatures(tx, records.signatures ?? []);
      for (let start = 0; start < merged.length; start += CHUNK_ROWS) {
        const chunk = merged.slice(start, start + CHUNK_ROWS);
        const params: unknown[] = [];
        const subjects = chunk.map((r) => {
          params.push(r.subject, Math.floor(r.expiresAt), Math.floor(r.atMs));
          const p = params.length;
          return `($${p - 2}::text, $${p - 1}::bigint, $${p}::bigint)`;
        });
        await tx.query(
          `INSERT INTO seen_checkpoints AS c (subject, expires_at, at_ms)
           SELECT * FROM (VALUES ${subjects.join(', ')}) AS v (subject, expires_at, at_ms)
           ON CONFLICT (subject) DO UPDATE SET
             expires_at = GREATEST(c.expires_at, excluded.expires_at), at_ms = GREATEST(c.at_ms, excluded.at_ms)
           WHERE c.expires_at < excluded.expires_at OR c.at_ms < excluded.at_ms`,
          params,
        );
        const logParams: unknown[] = [];
        const logs = chunk.map((r) => {
          logParams.push(r.subject, Math.floor(r.atMs), r.pairs);
          const p = logParams.length;
          return `($${p - 2}::text, $${p - 1}::bigint, $${p}::bytea)`;
        });
        await tx.query(`INSERT INTO seen_checkpoint_log (subject, at_ms, pairs) VALUES ${logs.join(', ')}`, logParams);
      }
      return logBytes(
        tx,
        merged.map((r) => r.subject),
      );
    });
  }

  /** Everything checkpointed of each subject that has any (missing subjects are absent from the map). */
  async load(subjects: readonly string[]): Promise<Map<string, SubjectCheckpoint>> {
    const out = new Map<string, SubjectCheckpoint>();
    if (subjects.length === 0) return out;
    const list = inList(subjects, 1);
    const bases = await this.sql.query<BaseRow>(
      `SELECT subject, expires_at, at_ms, state, bitmap FROM seen_checkpoints WHERE subject IN (${list})`,
      subjects,
    );
    for (const b of bases) out.set(b.subject, toCheckpoint(b));
    if (out.size === 0) return out;
    const logs = await this.sql.query<LogRow>(
      `SELECT subject, seq, at_ms, pairs FROM seen_checkpoint_log WHERE subject IN (${list}) ORDER BY subject, seq`,
      subjects,
    );
    for (const r of logs) out.get(r.subject)?.log.push(toLogRow(r));
    return out;
  }

  /**
   * Folds the subject's log rows into its base, under a lock on the subject's row: `fold` gets
   * everything checkpointed and returns the new base. Does nothing when the subject has no row or
   * no log rows.
   * @returns how many log rows were folded (and deleted).
   */
  async compact(subject: string, fold: (c: SubjectCheckpoint) => FoldedBase): Promise<number> {
    return this.sql.transaction(async (tx) => {
      const [base] = await tx.query<BaseRow>(
        `SELECT subject, expires_at, at_ms, state, bitmap FROM seen_checkpoints WHERE subject = $1 FOR UPDATE`,
        [subject],
      );
      if (!base) return 0;
      const rows = await tx.query<LogRow>(
        `SELECT subject, seq, at_ms, pairs FROM seen_checkpoint_log WHERE subject = $1 ORDER BY seq`,
        [subject],
      );
      if (rows.length === 0) return 0;
      const c = toCheckpoint(base);
      c.log = rows.map(toLogRow);
      const folded = fold(c);
      await tx.query(`UPDATE seen_checkpoints SET bitmap = $2::bytea, state = $3 WHERE subject = $1`, [
        subject,
        folded.bitmap,
        folded.state,
      ]);
      const seqs = c.log.map((r) => r.seq);
      for (let start = 0; start < seqs.length; start += CHUNK_ROWS) {
        const part = seqs.slice(start, start + CHUNK_ROWS);
        await tx.query(
          `DELETE FROM seen_checkpoint_log WHERE subject = $1 AND seq IN (${inList(part, 2, '::bigint')})`,
          [subject, ...part],
        );
      }
      return rows.length;
    });
  }

  /** Which of `subjects` have a checkpoint. */
  async known(subjects: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (let start = 0; start < subjects.length; start += CHUNK_ROWS) {
      const part = subjects.slice(start, start + CHUNK_ROWS);
      const rows = await this.sql.query<{ subject: string }>(
        `SELECT subject FROM seen_checkpoints WHERE subject IN (${inList(part, 1)})`,
        part,
      );
      for (const r of rows) out.add(r.subject);
    }
    return out;
  }

  /** The layouts recorded for rolling days (`YYYYMMDD`) with their checkpoints (days without one are absent). */
  async layoutsOfDays(days: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (days.length === 0) return out;
    const rows = await this.sql.query<{ subject: string; state: string }>(
      `SELECT subject, state FROM seen_checkpoints WHERE subject IN (${inList(days, 1)})`,
      days.map(layoutSubject),
    );
    for (const r of rows) if (r.state) out.set(r.subject.slice(2), r.state);
    return out;
  }

  /** Every geometry signature reader subjects were checkpointed under (the list each append keeps). */
  async readerSignatures(): Promise<string[]> {
    const [row] = await this.sql.query<{ state: string }>(`SELECT state FROM seen_checkpoints WHERE subject = $1`, [
      SIGNATURES,
    ]);
    return row ? row.state.split(',').filter(Boolean) : [];
  }

  /** Which of `subjects` have log rows not folded yet. */
  async withLog(subjects: readonly string[]): Promise<string[]> {
    if (subjects.length === 0) return [];
    return [...(await logBytes(this.sql, subjects)).keys()];
  }

  /** Deletes every subject (and its rows) expired at `nowMs`. @returns how many subjects. */
  async expire(nowMs: number): Promise<number> {
    const rows = await this.sql.query<{ subject: string }>(
      `DELETE FROM seen_checkpoints WHERE expires_at <= $1 RETURNING subject`,
      [Math.floor(nowMs)],
    );
    return rows.length;
  }

  /** Deletes a subject and its rows (a reader forgotten). */
  async forget(subject: string): Promise<void> {
    await this.sql.query(`DELETE FROM seen_checkpoints WHERE subject = $1`, [subject]);
  }
}

/** Records days' layouts; a day that has one keeps it (the first recorded, as in Redis). */
async function recordDays(tx: SqlTx, days: readonly DayLayoutRecord[]): Promise<void> {
  for (let start = 0; start < days.length; start += CHUNK_ROWS) {
    const part = days.slice(start, start + CHUNK_ROWS);
    const params: unknown[] = [];
    const values = part.map((d) => {
      params.push(layoutSubject(d.day), Math.floor(d.expiresAt), d.layout);
      const p = params.length;
      return `($${p - 2}::text, $${p - 1}::bigint, 0::bigint, $${p}::text)`;
    });
    await tx.query(
      `INSERT INTO seen_checkpoints (subject, expires_at, at_ms, state) VALUES ${values.join(', ')}
       ON CONFLICT (subject) DO NOTHING`,
      params,
    );
  }
}

/** Adds signatures to the list (a merge in SQL: concurrent appends of different signatures keep both). */
async function recordSignatures(tx: SqlTx, sigs: readonly string[]): Promise<void> {
  if (sigs.length === 0) return;
  await tx.query(
    `INSERT INTO seen_checkpoints AS c (subject, expires_at, at_ms, state) VALUES ($1::text, $2::bigint, 0, $3::text)
     ON CONFLICT (subject) DO UPDATE SET state = (
       SELECT coalesce(string_agg(DISTINCT x, ',' ORDER BY x), '')
       FROM unnest(string_to_array(c.state || ',' || excluded.state, ',')) AS x WHERE x <> '')`,
    [SIGNATURES, NEVER, sigs.join(',')],
  );
}

/** `$from::text, $from+1::text, …` for `values`. */
function inList(values: readonly unknown[], from: number, cast = '::text'): string {
  return values.map((_, i) => `$${from + i}${cast}`).join(', ');
}

/** Bytes of log rows and of the base per subject (subjects without log rows are absent). */
async function logBytes(q: SqlTx, subjects: readonly string[]): Promise<Map<string, SubjectBytes>> {
  const out = new Map<string, SubjectBytes>();
  for (let start = 0; start < subjects.length; start += CHUNK_ROWS) {
    const part = subjects.slice(start, start + CHUNK_ROWS);
    const rows = await q.query<{ subject: string; log: number | string; base: number | string }>(
      `SELECT l.subject, sum(octet_length(l.pairs))::bigint AS log, coalesce(max(octet_length(c.bitmap)), 0)::bigint AS base
       FROM seen_checkpoint_log l JOIN seen_checkpoints c ON c.subject = l.subject
       WHERE l.subject IN (${inList(part, 1)}) GROUP BY l.subject`,
      part,
    );
    for (const r of rows) out.set(r.subject, { log: Number(r.log), base: Number(r.base) });
  }
  return out;
}

/** Rows of one subject merged (pairs concatenated in order; the latest expiry and activity). */
function mergeBySubject(rows: readonly CheckpointAppend[]): CheckpointAppend[] {
  const by = new Map<string, CheckpointAppend[]>();
  for (const r of rows) {
    if (r.pairs.length === 0) continue;
    const list = by.get(r.subject);
    if (list) list.push(r);
    else by.set(r.subject, [r]);
  }
  const out: CheckpointAppend[] = [];
  for (const [subject, list] of by) {
    out.push({
      subject,
      expiresAt: Math.max(...list.map((r) => r.expiresAt)),
      atMs: Math.max(...list.map((r) => r.atMs)),
      pairs: list.length === 1 ? list[0]!.pairs : Buffer.concat(list.map((r) => r.pairs)),
    });
  }
  return out.sort((a, b) => (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0));
}

function toCheckpoint(b: BaseRow): SubjectCheckpoint {
  return {
    subject: b.subject,
    expiresAt: Number(b.expires_at),
    atMs: Number(b.at_ms),
    base: b.bitmap ? { bitmap: bytes(b.bitmap), state: b.state } : null,
    log: [],
  };
}

function toLogRow(r: LogRow): CheckpointLogRow {
  return { seq: Number(r.seq), atMs: Number(r.at_ms), pairs: bytes(r.pairs) };
}

/** A driver's bytea (a Buffer from `pg`, a Uint8Array from PGlite) as a plain Uint8Array view. */
function bytes(v: Uint8Array): Uint8Array {
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}
