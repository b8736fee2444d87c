/**
 * HotMaintenance: what keeps the hot ranking honest between views — rescoring, checkpoints to
 * PostgreSQL, archiving of old items, and the rebuild after a loss.
 *
 * - **Rescoring** (`rescore`): the hot-ranking design's script only re-evaluates an item's score when it is viewed, so
 *   an item that stopped getting views would keep the score of its last view forever and sit above
 *   fresher items. The pass recomputes every ranked score at `now` from the counters, then trims each
 *   shard to the `cap` best (`ZREMRANGEBYRANK hot:score 0 -(cap+1)`).
 * - **Checkpoint** (`checkpoint`): the items viewed since the last checkpoint (dirty marks) are read
 *   (PV, UV, the HLL itself, suspicious counts) and upserted into `hot_counters`; their marks are
 *   cleared only once written. What a loss can take is therefore what was counted since the last
 *   complete checkpoint: one checkpoint interval.
 * - **Archive** (`archive`): items published longer ago than the retention get a final checkpoint
 *   marked archived, then leave the hot store (the hot-ranking design: "Redis 中保留最近 90 天的活动数据"). The
 *   pass runs at the caller's `nowMs` — the wall clock on a server — so a replay of old data on a
 *   running server would lose its ranking within one checkpoint interval; retention 0
 *   (`KEEP_FOREVER`) archives nothing.
 * - **Recover** (`recover`): shards that lost their state (a flushed or replaced Redis, a restarted
 *   in-process store, a fresh deployment) get the checkpointed counters ADDED to whatever they counted
 *   since the loss, page by page, then are sealed. Checkpoints refuse to read a lost shard (its counters
 *   are partial), so a loss never overwrites a good checkpoint.
 * - **Re-shard** (part of `recover`, at start and before every checkpoint): when the store still holds
 *   counters under a prior shard layout (`HotCounters.priorLayout`: the hot-ranking design's one `{hot}` shard of
 *   earlier versions, or another `FRESHET_HOT_SHARDS`), they move through PostgreSQL — (1) a last
 *   checkpoint of the prior layout (its dirty and in-flight items: what was counted since its previous
 *   checkpoint), saved with `keepNewer` so a late one never lowers a row; (2) `retire`: its epochs go,
 *   so no checkpoint reads it again; (3) this layout's shards, all lost, are restored from the
 *   checkpoints as after any loss, and the prior layout's counters of each restored page are forgotten;
 *   (4) `purge` of its shard-wide keys; (5) `adoptLayout`. Each step is idempotent and safe beside the
 *   same steps in another process, so a crash anywhere is finished by the next start or checkpoint.
 *   Nothing is counted twice: the restore ADDS each checkpointed item once to what this layout counted
 *   since it started. What the prior layout counts after its retirement is not moved: stop the
 *   processes of the earlier version or shard count before starting the new ones.
 * One task runs at a time per process (a simple queue); several processes may run them concurrently
 * (each store operation is safe for that).
 */
import type { HotArchive } from './hot-archive.js';
import type { HotCounters, RescoreResult } from './hot-counters.js';
import type { HotMetrics } from './hot-metrics.js';
import type { Logger } from '../kernel/observability.js';
import { retentionCutoff } from './domain.js';

/** Items per checkpoint read / database write, and per page of a restore. */
export const CHECKPOINT_BATCH = 500;

/** Ports of the maintenance tasks. */
export interface HotMaintenanceDeps {
  counters: HotCounters;
  archive: HotArchive;
  metrics: HotMetrics;
  log: Logger;
}

/** What one checkpoint did. */
export interface CheckpointResult {
  /** Item rows written. */
  saved: number;
  /** Shards found lost (recovered before the next checkpoint). */
  lost: number[];
}

/** What one recovery did. */
export interface RecoverResult {
  shards: number[];
  restored: number;
}

/** Rescoring, checkpoints, archiving and recovery of the hot counters (see the module doc). */
export class HotMaintenance {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly deps: HotMaintenanceDeps,
    /** `retentionMs`: 0 = keep forever (no archive pass). */
    private readonly settings: { retentionMs: number },
  ) {}

  /** Recomputes every ranked score at `nowMs`, then trims the rankings. */
  rescore(nowMs: number): Promise<RescoreResult> {
    return this.serial(async () => {
      const t0 = performance.now();
      const r = await this.deps.counters.rescore(nowMs);
      this.deps.metrics.rescored(r.rescored, r.trimmed, performance.now() - t0);
      return r;
    });
  }

  /** Writes the counters of every item viewed since the last checkpoint (recovering lost shards first). */
  checkpoint(nowMs: number): Promise<CheckpointResult> {
    return this.serial(() => this.checkpointNow(nowMs));
  }

  /** Checkpoints, then archives items published before `nowMs − retention` (none when it is 0). @returns items archived. */
  archive(nowMs: number): Promise<number> {
    return this.serial(async () => {
      const { lost } = await this.checkpointNow(nowMs);
      if (lost.length > 0) return 0;
      return this.archiveNow(nowMs);
    });
  }

  /** Restores lost shards from the checkpoints (nothing when none is lost). */
  recover(nowMs: number): Promise<RecoverResult> {
    return this.serial(() => this.recoverNow(nowMs));
  }

  /** Waits for the running and queued tasks. */
  async idle(): Promise<void> {
    await this.queue.catch(() => undefined);
  }

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.catch(() => undefined).then(task);
    this.queue = run;
    return run;
  }

  private async checkpointNow(nowMs: number): Promise<CheckpointResult> {
    const { counters, archive, metrics } = this.deps;
    try {
      if ((await counters.lostShards()).length > 0 || (await counters.priorLayout()) !== null)
        await this.recoverNow(nowMs);
      const ids = await counters.beginCheckpoint();
      let saved = 0;
      const lost = new Set<number>();
      for (let i = 0; i < ids.length; i += CHECKPOINT_BATCH) {
        const chunk = ids.slice(i, i + CHECKPOINT_BATCH);
        const snap = await counters.snapshot(chunk);
        await archive.save(snap.snapshots, nowMs);
        saved += snap.snapshots.length;
        snap.lost.forEach((s) => lost.add(s));
        // ids of a lost shard stay in flight; the others (written, or gone from the store) are done
        await counters.endCheckpoint(lost.size === 0 ? chunk : chunk.filter((id) => !lost.has(counters.shardOf(id))));
      }
      metrics.checkpointed(saved, lost.size === 0, nowMs);
      if (lost.size > 0)
        this.deps.log.warn(
          { shards: [...lost] },
          'hot counters: shards lost their state; they are rebuilt before the next checkpoint',
        );
      return { saved, lost: [...lost] };
    } catch (err) {
      metrics.checkpointed(0, false, nowMs);
      throw err;
    }
  }

  private async archiveNow(nowMs: number): Promise<number> {
    const { counters, archive, metrics } = this.deps;
    const cutoff = retentionCutoff(nowMs, this.settings.retentionMs);
    if (cutoff === null) return 0; // KEEP_FOREVER
    let archived = 0;
    for (;;) {
      const ids = await archive.expired(cutoff, CHECKPOINT_BATCH);
      if (ids.length === 0) break;
      const snap = await counters.snapshot(ids);
      if (snap.lost.length > 0) break;
      const fresh = new Set(snap.snapshots.map((s) => s.itemId));
      const stale = (await archive.get(ids.filter((id) => !fresh.has(id)))).map(
        ({ checkpointedAtMs: _c, archivedAtMs: _a, ...s }) => s,
      );
      await archive.save([...snap.snapshots, ...stale], nowMs, { archive: true });
      await counters.forget(ids);
      archived += ids.length;
    }
    metrics.archived(archived);
    if (archived > 0) this.deps.log.info({ archived, cutoff: new Date(cutoff).toISOString() }, 'hot counters archived');
    return archived;
  }

  private async recoverNow(nowMs: number): Promise<RecoverResult> {
    const { counters } = this.deps;
    const prior = await counters.priorLayout();
    if (prior) await this.retirePrior(prior, nowMs);
    const shards = await counters.lostShards();
    if (shards.length === 0 && !prior) return { shards, restored: 0 };
    const restored = await this.restorePages(shards, prior, nowMs);
    if (prior) await prior.purge();
    if (shards.length > 0) {
      await counters.seal(shards);
      await counters.rescore(nowMs);
    }
    await counters.adoptLayout();
    this.deps.log.info(
      { shards, restored, ...(prior ? { from: `${prior.shards} shard(s)`, to: `${counters.shards}` } : {}) },
      prior ? 'hot counters moved to a new shard layout' : 'hot counters restored from the checkpoint',
    );
    return { shards, restored };
  }

  /**
   * Steps 1–2 of a re-shard (module doc): the prior layout's last checkpoint, then its retirement.
   * Items of its shards that are already retired or lost are left to their last checkpoint.
   */
  private async retirePrior(prior: HotCounters, nowMs: number): Promise<void> {
    const ids = await prior.beginCheckpoint();
    for (let i = 0; i < ids.length; i += CHECKPOINT_BATCH) {
      const snap = await prior.snapshot(ids.slice(i, i + CHECKPOINT_BATCH));
      await this.deps.archive.save(snap.snapshots, nowMs, { keepNewer: true });
    }
    await prior.retire();
  }

  /**
   * Pages through the live checkpoints once: restores each page into the lost `shards` and forgets
   * its items from the prior layout. @returns items restored.
   */
  private async restorePages(shards: number[], prior: HotCounters | null, nowMs: number): Promise<number> {
    const { counters, archive } = this.deps;
    let restored = 0;
    let after: string | null = null;
    for (;;) {
      const page = await archive.live(after, CHECKPOINT_BATCH);
      if (page.length === 0) break;
      if (shards.length > 0) restored += await counters.restore(page, nowMs, shards);
      if (prior) await prior.forget(page.map((s) => s.itemId));
      after = page[page.length - 1]!.itemId;
    }
    return restored;
  }
}
