/**
 * DiscoverEmbeddings: item embeddings and reader embeddings for the discover feed's phase 2 (docs/discover.md).
 *
 * - Items: an item written through `POST /v1/items` may carry its own `embedding` (length = the
 *   configured dimension); otherwise the built-in text embedder computes one (embedding.ts).
 *   Published items' embeddings are written in the same transaction as the items (`storeWithin`, issue
 *   21.3: a refused batch writes no vector; rows orphaned by older versions are swept at open), and items written by other paths
 *   (replays, direct SQL) are caught up by `embedMissing` (`freshet discover embed`; `serve` runs no
 *   catch-up, and `freshet import` embeds as it writes).
 * - Readers: the reader embedding is the time-decayed mean of the items the reader viewed or engaged
 *   with ({@link decayedMean}: half-life configured), as of the session start `t0`, from its newest
 *   `signalLimit` signals. Cached per (reader, t0), so every page of a session ranks phase 2 alike.
 */
import { decayedMean, embedText, normalize, quantize } from './embedding.js';
import type { Item } from '../kernel/items/item.js';
import type { DiscoverIndex, EmbeddingRecord } from './discover-index.js';
import type { SqlTx } from '../kernel/sql/sql.js';
import { checkEmbedding } from '../kernel/items/validate.js';

/** Tunables (config `FRESHET_EMBEDDING_DIM`, `FRESHET_DISCOVER_*`). */
export interface EmbeddingSettings {
  /** Embedding dimension (client embeddings must have exactly this length). */
  dim: number;
  /** Half-life of a signal's weight in the reader embedding, ms. */
  halfLifeMs: number;
  /** Newest signals read per reader embedding. */
  signalLimit: number;
}

/** Weight of a view in the reader embedding; engagements weigh {@link ENGAGEMENT_WEIGHT}. */
export const VIEW_WEIGHT = 1;
/** Weight of an engagement (reply, like, share, a high rating): three views. */
export const ENGAGEMENT_WEIGHT = 3;

/** A reader's query for phase 2: its embedding (unit length). */
export interface ReaderQuery {
  vector: Float32Array;
}

const CACHE_SIZE = 2000;
/** Orphan embedding rows deleted per statement by {@link DiscoverEmbeddings.sweepOrphans}. */
export const ORPHAN_BATCH = 1000;

/** Builds and stores item embeddings; builds reader queries. */
export class DiscoverEmbeddings {
  private readonly readers = new Map<string, ReaderQuery | null>();

  constructor(
    private readonly index: DiscoverIndex,
    readonly settings: EmbeddingSettings,
  ) {}

  /**
   * Builds every item's record: the client's embedding, normalised, or one computed from the text. Pure:
   * call it before writing anything, then {@link store} the result. Client embeddings must have passed
   * the one check of published input first (src/kernel/items/validate.ts: length, finite, normalisable).
   * @param given client embeddings aligned with `items` (undefined = compute from text).
   */
  records(
    items: readonly Pick<Item, 'id' | 'title' | 'text' | 'tags'>[],
    given: readonly (readonly number[] | undefined)[] = [],
  ): EmbeddingRecord[] {
    const { dim } = this.settings;
    return items.map((item, i) => {
      const raw = given[i];
      if (raw !== undefined) return this.record(item.id, normalize(raw), 'client');
      return this.record(item.id, embedText(item, dim), 'text');
    });
  }

  /** Writes records (one transaction) at `nowMs`. */
  async store(records: readonly EmbeddingRecord[], nowMs: number): Promise<void> {
    await this.index.putEmbeddings(records, nowMs);
  }

  /**
   * Writes records at `nowMs` inside `tx`, the transaction that writes their items (the publish use
   * case), so a refused or failed batch writes no vector; call {@link committed} after `tx` commits.
   */
  async storeWithin(tx: SqlTx, records: readonly EmbeddingRecord[], nowMs: number): Promise<void> {
    await this.index.writeEmbeddings(tx, records, nowMs);
  }

  /** Makes records written by a committed {@link storeWithin} searchable in this process at once. */
  async committed(records: readonly EmbeddingRecord[]): Promise<void> {
    await this.index.embeddingsCommitted(records);
  }

  /**
   * Deletes every embedding row whose item does not exist, {@link ORPHAN_BATCH} rows a statement
   * (at open, in the background; left by crashes of versions that wrote vectors and items in two
   * transactions). @returns how many were deleted.
   */
  async sweepOrphans(): Promise<number> {
    let swept = 0;
    for (;;) {
      const n = await this.index.sweepOrphanEmbeddings(ORPHAN_BATCH);
      swept += n;
      if (n < ORPHAN_BATCH) return swept;
    }
  }

  /**
   * Computes text embeddings for live items lacking a current one, `batch` at a time in id order (a
   * keyset: each item is visited at most once per call, so it always ends), until none is left or
   * `maxBatches` ran. Each embedding is stamped with its item's `update_time`, not `nowMs`: an import
   * on another clock (a replay's virtual time) must not leave embeddings that look older than their
   * items. @returns how many were written.
   */
  async embedMissing(nowMs: number, batch = 1000, maxBatches = Infinity): Promise<number> {
    let written = 0;
    let after: string | null = null;
    for (let b = 0; b < maxBatches; b++) {
      const items = await this.index.missingEmbeddings(after, batch);
      if (items.length === 0) break;
      const records = this.records(items).map((r, i) => ({ ...r, itemUpdateMs: items[i]!.updateTime }));
      await this.index.putEmbeddings(records, nowMs);
      written += items.length;
      after = items[items.length - 1]!.id;
      if (items.length < batch) break;
    }
    return written;
  }

  /**
   * The reader's phase-2 query as of `t0`, or null when the reader has no signal with an embedding
   * (phase 2 is then skipped).
   */
  async readerQuery(readerId: string, t0: number): Promise<ReaderQuery | null> {
    const key = `${readerId}\n${t0}`;
    if (this.readers.has(key)) return this.readers.get(key)!;
    const { dim, halfLifeMs, signalLimit } = this.settings;
    // the application's embedding of the reader, when it gave one, else the mean of its signals
    const given = await this.index.readerEmbedding(readerId);
    const vector =
      given?.length === dim
        ? given
        : decayedMean(await this.index.signals(readerId, t0, signalLimit), t0, halfLifeMs, dim);
    const q: ReaderQuery | null = vector ? { vector } : null;
    if (this.readers.size >= CACHE_SIZE) this.readers.delete(this.readers.keys().next().value!);
    this.readers.set(key, q);
    return q;
  }

  /**
   * Gives the reader an embedding of the application's (`dim` numbers; null removes it): phase 2 then
   * searches with it, normalised, instead of the mean of the reader's signals, from its next session.
   * @throws FreshetError INVALID_INPUT (length, a non-finite component, all zeros) — nothing written.
   * @returns whether a given embedding was removed (null).
   */
  async setReaderEmbedding(readerId: string, vector: readonly number[] | null, nowMs: number): Promise<boolean> {
    if (vector !== null) checkEmbedding(vector, 'embedding', this.settings.dim);
    const unit = vector === null ? null : normalize(vector);
    const removed = await this.index.setReaderEmbedding(readerId, unit, nowMs);
    for (const key of [...this.readers.keys()]) if (key.startsWith(`${readerId}\n`)) this.readers.delete(key);
    return removed;
  }

  /** The reader's given embedding (unit length), or null (export). */
  readerEmbedding(readerId: string): Promise<Float32Array | null> {
    return this.index.readerEmbedding(readerId);
  }

  /** Erases a reader's signals and its cached queries (src/use-cases/personal-data.ts). @returns rows removed. */
  async forgetReader(readerId: string): Promise<number> {
    for (const key of [...this.readers.keys()]) if (key.startsWith(`${readerId}\n`)) this.readers.delete(key);
    return this.index.forgetReader(readerId);
  }

  /**
   * After an erase tombstoned items (their embedding rows emptied in the same statement, migration 17):
   * rewrites the in-process index's snapshots without them (`VectorSearch.purge`). @returns generations removed.
   */
  purgeSnapshots(): Promise<number> {
    return this.index.purgeSnapshots();
  }

  /** A reader's retained signals, newest first (export). */
  signalsOf(readerId: string, limit: number) {
    return this.index.signalsOf(readerId, limit);
  }

  /** Records signals (views weigh {@link VIEW_WEIGHT}, engagements {@link ENGAGEMENT_WEIGHT}). */
  async addSignals(
    signals: readonly { readerId: string; itemId: string; atMs: number; weight: number }[],
  ): Promise<void> {
    await this.index.addSignals(signals);
  }

  private record(itemId: string, v: Float32Array, source: EmbeddingRecord['source']): EmbeddingRecord {
    return { itemId, vector: quantize(v), source };
  }
}

/** View verdicts that are a reader really looking at an item (the hot-ranking design's suspicious kinds are not). */
const SIGNAL_VERDICTS = new Set(['counted', 'repeat', 'expired']);

/**
 * Whether a view's verdict is the reader really looking at the item (`counted`, `repeat`, `expired`): it is
 * a reader signal and a recent view. `budget` and `flagged` are suspicious traffic; `unknown` a deleted item.
 */
export function isLook(verdict: string): boolean {
  return SIGNAL_VERDICTS.has(verdict);
}

/**
 * The reader signals of recorded views: one per view whose verdict is `counted`, `repeat` or
 * `expired` (a real look at the item), weight {@link VIEW_WEIGHT}, at the view's time.
 */
export function viewSignals(
  views: readonly { itemId: string; visitorId: string; nowMs: number }[],
  verdicts: readonly { verdict: string }[],
): { readerId: string; itemId: string; atMs: number; weight: number }[] {
  const out: { readerId: string; itemId: string; atMs: number; weight: number }[] = [];
  views.forEach((v, i) => {
    if (isLook(verdicts[i]?.verdict ?? ''))
      out.push({ readerId: v.visitorId, itemId: v.itemId, atMs: v.nowMs, weight: VIEW_WEIGHT });
  });
  return out;
}
