/**
 * The steps of `freshet evaluate` that drive the engine (docs/evaluation.md "Protocol"), through the
 * library's use cases on virtual time:
 * - **publish**: every catalog item at one instant (equal time decay: relevance alone orders), popularity 0,
 *   an author of its own (so no author cap binds), its title and tags from the items file or a neutral title;
 * - **replay signals**: each reader's train ratings, oldest first, as a view and/or engagements, the i-th of
 *   every reader at `replayFrom + i × spacing`, the spacing being what keeps a visitor within the hot
 *   ranking's per-minute budget — every view's verdict is counted, so refused ones are reported;
 * - **settle**: what a running server's background work would have done by the read time (text embeddings
 *   caught up, the discover index caught up, the hot ranking rescored, the learning room's neighbours,
 *   popularity and factor model built, the for-you fill pool built);
 * - **read pages**: each evaluated reader's first page of `k` of each feed at the read time.
 */
import { MINUTE_MS } from '../../kernel/clock.js';
import type { ViewVerdict } from '../../hot/domain.js';
import type { EngagementKind } from '../../exclusions/domain.js';
import type { EngagementRecord } from '../../exclusions/ports.js';
import type { PublishInput } from '../../kernel/items/validate.js';
import { Progress } from '../progress.js';
import { need, type EvalStep } from './run.js';

/** Items per publish and signals per batch (the HTTP batch limits). */
const BATCH = 1000;
/** Longest wait for the in-process fan-out of the published items, ms. */
const FANOUT_IDLE_MS = 600_000;

/** Engine ids of the file's keys: readers `u_<key>`, items `i_<key>`, their authors `a_<key>`. */
export const readerId = (key: string) => `u_${key}`;
export const itemId = (key: string) => `i_${key}`;
const authorId = (key: string) => `a_${key}`;

/** Publishes the catalog at `times.publishedAt`. */
export const publish: EvalStep = {
  name: 'publish',
  engine: true,
  async run(s) {
    const { f } = need(s.engine, 'the engine', 'open stores');
    const { items } = need(s.ratings, 'the ratings', 'load');
    const at = s.times.publishedAt;
    const progress = new Progress({
      label: 'evaluate: publish',
      total: items.length,
      counts: true,
      tty: s.opts.progress,
    });
    try {
      for (let i = 0; i < items.length; i += BATCH) {
        const batch: PublishInput[] = items.slice(i, i + BATCH).map((key) => {
          const info = s.itemInfo?.get(key);
          return {
            id: itemId(key),
            authorId: authorId(key),
            title: info?.title ?? `Item ${key}`,
            text: '',
            url: null,
            tags: info?.tags ?? [],
            publishedAt: at,
            popularity: 0,
          };
        });
        await f.useCases.publishItems(batch, at);
        progress.update(Math.min(items.length, i + BATCH), 'items');
      }
      // the in-process fan-out worker publishes each item to its author's followers (none here) in the
      // background: done before the replay, so its work is not mixed into the replay's or the pages' time
      if (f.following.inlineWorker) {
        progress.update(items.length, 'fan-out');
        const t0 = performance.now();
        await f.following.queue.idle(FANOUT_IDLE_MS);
        s.counts.fanoutWaitMs = Math.round(performance.now() - t0);
      }
    } finally {
      progress.stop();
    }
    s.counts.published = items.length;
  },
};

/** One replayed train rating: reader and item indices, and when. */
interface Signal {
  u: number;
  j: number;
  atMs: number;
}

/** Sends every reader's train ratings as the configured signals (see the module doc). */
export const replaySignals: EvalStep = {
  name: 'replay signals',
  engine: true,
  async run(s) {
    const { f, clock } = need(s.engine, 'the engine', 'open stores');
    const r = need(s.ratings, 'the ratings', 'load');
    const split = need(s.split, 'the split', 'split');
    const signals = interleaved(
      split.readers.map((x) => x.train),
      s.times.replayFrom,
      s.times.spacingMs,
    );
    const kinds = s.opts.signals.filter((k): k is EngagementKind => k !== 'view');
    const verdicts: Partial<Record<ViewVerdict, number>> = {};
    const engagements = Object.fromEntries(kinds.map((k) => [k, { sent: 0, created: 0 }]));
    const progress = new Progress({
      label: 'evaluate: replay signals',
      total: signals.length,
      counts: true,
      tty: s.opts.progress,
    });
    try {
      for (let i = 0; i < signals.length; i += BATCH) {
        const batch = signals.slice(i, i + BATCH);
        clock.set(batch.at(-1)!.atMs);
        if (s.opts.signals.includes('view')) {
          const views = batch.map((g) => ({
            itemId: itemId(r.items[g.j]!),
            visitorId: readerId(r.readers[g.u]!),
            nowMs: g.atMs,
          }));
          for (const o of await f.useCases.recordViews(views)) verdicts[o.verdict] = (verdicts[o.verdict] ?? 0) + 1;
        }
        for (const kind of kinds) {
          const records: EngagementRecord[] = batch.map((g) => ({
            readerId: readerId(r.readers[g.u]!),
            itemId: itemId(r.items[g.j]!),
            kind,
            nowMs: g.atMs,
          }));
          const created = await f.useCases.recordEngagements(records);
          engagements[kind]!.sent += records.length;
          engagements[kind]!.created += created.filter(Boolean).length;
        }
        progress.update(Math.min(signals.length, i + BATCH), `${verdicts.counted ?? 0} views counted`);
      }
    } finally {
      progress.stop();
    }
    const sent = s.opts.signals.includes('view') ? signals.length : 0;
    s.counts.views = { sent, counted: verdicts.counted ?? 0, notCounted: sent - (verdicts.counted ?? 0), verdicts };
    s.counts.engagements = engagements;
    s.times.readAt = (signals.at(-1)?.atMs ?? s.times.replayFrom) + MINUTE_MS;
  },
};

/**
 * Every reader's i-th train rating at `from + i × spacingMs`, ordered by time then reader: the order the
 * batches are sent in (a visitor's views stay `spacingMs` apart whatever the batching).
 */
export function interleaved(train: readonly (readonly number[])[], from: number, spacingMs: number): Signal[] {
  const out: Signal[] = [];
  const longest = train.reduce((m, t) => Math.max(m, t.length), 0);
  for (let i = 0; i < longest; i++)
    train.forEach((items, u) => {
      if (i < items.length) out.push({ u, j: items[i]!, atMs: from + i * spacingMs });
    });
  return out;
}

/** Brings the background work up to the read time (see the module doc). */
export const settle: EvalStep = {
  name: 'settle',
  engine: true,
  async run(s) {
    const { f, clock } = need(s.engine, 'the engine', 'open stores');
    const at = s.times.readAt;
    clock.set(at);
    const embedded = await f.discover.embeddings.embedMissing(at);
    const rescored = await f.hotMaintenance.rescore(at);
    // the learning room's background work: neighbours built, popularity, factors trained (docs/learning.md)
    const learnT0 = performance.now();
    await f.learn.settle(at);
    s.counts.learnMs = Math.round(performance.now() - learnT0);
    await f.forYouPool.get(at);
    // started, and caught up with every embedding committed (its timed catch-up waits for an idle loop)
    await f.discover.vectors.sync();
    s.counts.settle = { embedded, hotRescored: rescored.rescored };
  },
};

/** Reads each evaluated reader's first page of `k` of each feed at the read time, for-you first. */
export const readPages: EvalStep = {
  name: 'read pages',
  engine: true,
  async run(s) {
    const { f } = need(s.engine, 'the engine', 'open stores');
    const r = need(s.ratings, 'the ratings', 'load');
    const { evaluated } = need(s.split, 'the split', 'split');
    const index = new Map(r.items.map((key, j) => [itemId(key), j]));
    const indexOf = (id: string) => {
      const j = index.get(id);
      if (j === undefined) throw new Error(`evaluate: a feed served ${id}, which the evaluation did not publish`);
      return j;
    };
    const at = s.times.readAt;
    const k = s.opts.k;
    const lists = { 'for-you': [] as number[][], discover: [] as number[][] };
    const ms = { 'for-you': [] as number[], discover: [] as number[] };
    const progress = new Progress({
      label: 'evaluate: read pages',
      total: evaluated.length,
      counts: true,
      tty: s.opts.progress,
    });
    try {
      for (const u of evaluated) {
        const reader = readerId(r.readers[u]!);
        let t0 = performance.now();
        const forYou = await f.forYou.page(reader, 'refresh', k, at);
        ms['for-you'].push(performance.now() - t0);
        t0 = performance.now();
        const discover = await f.discover.feed.page(reader, k, undefined, at);
        ms.discover.push(performance.now() - t0);
        lists['for-you'].push(forYou.items.map((it) => indexOf(it.id)));
        lists.discover.push(discover.items.map((it) => indexOf(it.id)));
        progress.increment();
      }
    } finally {
      progress.stop();
    }
    Object.assign(s.lists, lists);
    Object.assign(s.pageMs, ms);
  },
};
