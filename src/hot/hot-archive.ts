/**
 * HotArchive port: where the hot counters are checkpointed and archived (PostgreSQL is the truth,
 * docs/architecture.md "Where state lives"), so a lost Redis — or a restarted in-process store — can be rebuilt.
 *
 * Contract (test/contracts/hot-archive.contract.ts, against PGlite and a PostgreSQL server):
 * - `save` upserts one row per item (the latest snapshot wins), in one transaction; with
 *   `archive: true` the rows are also marked archived at `nowMs` (their counters left Redis). With
 *   `keepNewer: true` (the checkpoint of a prior shard layout, src/hot/maintenance.ts) a stored row is
 *   only replaced when none of its counts (PV, repeat, budget, flagged) is above the snapshot's and it is
 *   not archived: a snapshot that an instance of the new layout has already gone past never lowers it.
 * - `live(afterId, limit)` pages through the rows not archived, of items that exist and are not
 *   deleted, ordered by id: the first `limit` with id > `afterId` (null: from the start).
 * - `expired(cutoffMs, limit)` returns ids of rows not archived whose item was published before
 *   `cutoffMs`, oldest first.
 * - `get(ids)` returns the stored rows (archived or not) of those ids, in order, skipping unknown ones.
 */
import type { CounterSnapshot } from './hot-counters.js';

/** A stored checkpoint row. */
export interface ArchivedCounters extends CounterSnapshot {
  /** When this row was last written, epoch ms. */
  checkpointedAtMs: number;
  /** When the counters were archived (removed from the hot store), epoch ms; null while live. */
  archivedAtMs: number | null;
}

export interface HotArchive {
  /** Upserts snapshots (see the contract). */
  save(
    snapshots: readonly CounterSnapshot[],
    nowMs: number,
    opts?: { archive?: boolean; keepNewer?: boolean },
  ): Promise<void>;
  /** One page of the live (not archived) rows of live items, by id, after `afterId`. */
  live(afterId: string | null, limit: number): Promise<CounterSnapshot[]>;
  /** Ids of live rows of items published before `cutoffMs`, oldest first, at most `limit`. */
  expired(cutoffMs: number, limit: number): Promise<string[]>;
  /** Stored rows of `itemIds`. */
  get(itemIds: readonly string[]): Promise<ArchivedCounters[]>;
}
