/**
 * InteractionStore port: what readers did with items, as the learning room keeps it — one row per
 * (reader, item) holding which kinds of positive signal the reader gave (a counted view, a like, a
 * reply, a share) and when the last one came. The co-engagement neighbours, the factor model and the
 * engine's own popularity are all computed from it (docs/learning.md).
 *
 * A pair's weight is the sum of its kinds' weights ({@link KIND_WEIGHTS}): a view and a like of one item
 * weigh 1 + 3 = 4, and a second view of it adds nothing (a reader is one unique visitor of an item). A
 * "not interested" or an engagement taken back removes kinds; a pair with none left is a tombstone
 * (weight 0) that the change feed still carries, so the background builder drops it, and retention
 * deletes later.
 */

/** The kinds of positive signal, as bits of a pair's `kinds`. */
export const SIGNAL_KINDS = ['view', 'like', 'reply', 'share'] as const;

/** One kind of positive signal. */
export type SignalKind = (typeof SIGNAL_KINDS)[number];

/**
 * Weight of each kind: a view 1, an engagement 3 — the weights the discover feed gives a view and an
 * engagement in a reader's embedding (src/discover/embeddings.ts `VIEW_WEIGHT`, `ENGAGEMENT_WEIGHT`), so
 * one signal weighs the same in every learner.
 */
export const KIND_WEIGHTS: Readonly<Record<SignalKind, number>> = { view: 1, like: 3, reply: 3, share: 3 };

/** The bit of a kind in `kinds`. */
export function kindBit(kind: SignalKind): number {
  return 1 << SIGNAL_KINDS.indexOf(kind);
}

/** The weight of a `kinds` bit set: the sum of its kinds' weights (0 for none). */
export function interactionWeight(kinds: number): number {
  let w = 0;
  SIGNAL_KINDS.forEach((k, bit) => {
    if (kinds & (1 << bit)) w += KIND_WEIGHTS[k];
  });
  return w;
}

/** A signal to record: `kind` given by `readerId` to `itemId` at `atMs` (epoch ms). */
export interface Signal {
  readerId: string;
  itemId: string;
  kind: SignalKind;
  atMs: number;
}

/** A pair as stored: its kinds (bits of {@link SIGNAL_KINDS}; 0: a tombstone) and last signal time. */
export interface InteractionRow {
  readerId: string;
  itemId: string;
  kinds: number;
  /** Epoch ms of the last signal. */
  atMs: number;
}

/**
 * Contract (test/contracts/interaction-store.contract.ts): rows are upserts by (reader, item); ids are
 * validated by the caller (kernel/ids.ts). Store failures throw FreshetError `STORE_UNAVAILABLE`.
 */
export interface InteractionStore {
  /** Adds signals (kinds OR-ed in, `atMs` the later of both). Duplicates in one call are fine. */
  add(signals: readonly Signal[]): Promise<void>;
  /** Takes kinds back (an engagement undone: its kind; "not interested": every kind). @returns pairs changed. */
  remove(readerId: string, itemId: string, kinds: number): Promise<number>;
  /**
   * The reader's pairs with a positive weight, newest first, at most `limit` (what a reader's
   * recommendations start from).
   */
  history(readerId: string, limit: number): Promise<InteractionRow[]>;
  /**
   * Every pair changed by a write the watermark `since` did not see (null: every pair), page by page
   * through `apply`, tombstones included. @returns rows read.
   */
  changes(since: string | null, apply: (rows: InteractionRow[]) => void | Promise<void>): Promise<number>;
  /** The watermark to keep after a read of `changes` that starts now. */
  watermark(): Promise<string>;
  /**
   * How many erases ran (a counter with no ids): a builder that sees it move reloads everything, so
   * an erased reader leaves every learned table without the store keeping who it was.
   */
  erasures(): Promise<number>;
  /** Erases a reader's pairs (no tombstone: nothing of it stays) and counts an erasure. @returns rows removed. */
  eraseReader(readerId: string): Promise<number>;
  /** A reader's pairs for an export, newest first. */
  exportReader(readerId: string, limit: number): Promise<InteractionRow[]>;
  /**
   * One bounded retention step: at most `limit` pairs whose last signal is older than `beforeMs` become
   * tombstones, and at most `limit` tombstones older than `tombstonesBeforeMs` are deleted (default 5,000).
   * @returns [tombstoned, deleted]: the pass is over when both are below `limit`.
   */
  expire(beforeMs: number, tombstonesBeforeMs: number, limit?: number): Promise<[number, number]>;
}
