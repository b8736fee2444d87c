/**
 * Races of a following-timeline read with fan-out, at the service level on real stores (in-process +
 * PGlite, Redis + PostgreSQL): a store hook runs a publish and its fan-out at an exact point inside a
 * read, so each interleaving is reproduced deterministically.
 * - Late arrival: items published while a page is being read — the newer one already fanned out, the
 *   older one not yet — must not split around the page: `since_id` from the page's top later returns both.
 * - Regeneration of a cold reader's inbox while fan-out runs (before the reader is marked active, and
 *   after the SQL query of the rebuild): the first read is complete and the inbox ends complete.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresContentStore } from '../../src/content/postgres-content-store.js';
import { PostgresSocialGraph } from '../../src/following/adapters/postgres-social-graph.js';
import { PostgresTimelineIndex } from '../../src/following/adapters/postgres-timeline-index.js';
import { migrate } from '../../src/compose/migrations.js';
import { openPostgres, type Sql } from '../../src/kernel/sql/sql.js';
import { MemoryTimelineStore } from '../../src/following/adapters/memory-timeline-store.js';
import { MemoryFanoutQueue } from '../../src/following/adapters/memory-fanout-queue.js';
import { RedisTimelineStore } from '../../src/following/adapters/redis-timeline-store.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { closeRedis, createRedis } from '../../src/kernel/redis/client.js';
import { FanoutWorker } from '../../src/following/fanout-worker.js';
import { FollowingTimeline } from '../../src/following/service.js';
import type { TimelineStore } from '../../src/following/timeline-store.js';
import { silentLogger } from '../../src/kernel/observability.js';
import { noTimelineMetrics } from '../../src/following/timeline-metrics.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniquePrefix, uniqueSchema } from '../support/env.js';
import { deleteByPrefix } from '../support/redis.js';
import { openTestPglite } from '../support/pglite.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 2, 6, 12);
const WINDOW = 7 * DAY;
const ALL = { hi: Infinity, lo: 0, count: 1_000 };

type Hookable = 'readInbox' | 'beginRebuild' | 'completeRebuild';
/** One-shot hooks: `before` runs before the store call, `after` after it (the call's result is kept). */
type Hooks = Partial<Record<Hookable, { before?: () => Promise<void>; after?: () => Promise<void> }>>;

/** A real store with one-shot hooks around some calls (the interleaving points of a read). */
function hooked(inner: TimelineStore, hooks: Hooks): TimelineStore {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      const hook = hooks[prop as Hookable];
      if (!hook || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: unknown[]) => {
        delete hooks[prop as Hookable];
        await hook.before?.();
        const result: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        await hook.after?.();
        return result;
      };
    },
  });
}

for (const kind of ['in-process + PGlite', 'Redis + PostgreSQL'] as const) {
  describe(`following read races (${kind})`, () => {
    let sql: Sql;
    let redis: ReturnType<typeof createRedis> | undefined;
    let store: TimelineStore;
    const prefix = uniquePrefix();
    const schema = uniqueSchema();
    let n = 0;

    const graph = () => new PostgresSocialGraph(sql);
    const index = () => new PostgresTimelineIndex(sql);
    const deps = (s: TimelineStore) => ({
      graph: graph(),
      index: index(),
      store: s,
      queue: new MemoryFanoutQueue(),
      metrics: noTimelineMetrics,
      log: silentLogger,
    });
    const timeline = (s: TimelineStore) =>
      new FollowingTimeline(deps(s), {
        activeWindowMs: WINDOW,
        inboxLength: 800,
        outboxLength: 800,
        followBackfill: 200,
      });
    const worker = (celebrityThreshold = 10_000) =>
      new FanoutWorker(deps(store), {
        activeWindowMs: WINDOW,
        inboxLength: 800,
        outboxLength: 800,
        celebrityThreshold,
        chunkSize: 100,
        staleMs: 60_000,
        sweepEveryMs: 60_000,
      });

    /**
     * Publishes one item by `author` at `nowMs` (and appends it to the outbox, as `publish` does); returns
     * its tid and a function running its fan-out (`celebrityThreshold` 0: the author is pulled).
     */
    async function publish(
      author: string,
      id: string,
      nowMs: number,
    ): Promise<{ tid: number; fanout: (celebrityThreshold?: number) => Promise<void> }> {
      await new PostgresContentStore(sql, { ownsSql: false }).upsertItems(
        [{ id, authorId: author, title: id, text: '', url: null, tags: [], publishedAt: nowMs, popularity: 0 }],
        nowMs,
      );
      const [p] = await index().publish([id], nowMs);
      await store.appendToOutbox(author, p!.tid, 800, 3_600_000);
      const job = { ...p!, nowMs, enqueuedAtMs: Date.now() };
      return {
        tid: p!.tid,
        fanout: async (threshold) => void (await worker(threshold).handle(job, { checkpoint: async () => {} })),
      };
    }

    /** A reader following two fresh authors, with two fanned-out items each; returns their ids. */
    async function world(): Promise<{ r: string; a: string; b: string }> {
      n++;
      const [r, a, b] = [`r${n}`, `a${n}`, `b${n}`];
      await graph().ensureUsers([a, b], NOW);
      await graph().follow(r, a, NOW);
      await graph().follow(r, b, NOW);
      await timeline(store).page(r, { limit: 20 }, NOW); // active, inbox built
      for (const [k, author] of [a, b, a, b].entries())
        await (await publish(author, `${author}_${k}`, NOW + (k + 1) * 1000)).fanout();
      return { r, a, b };
    }

    const truth = async (r: string) => index().timelineTids(r, Infinity, 0, 10_000);

    beforeAll(async () => {
      if (kind === 'Redis + PostgreSQL') {
        sql = await openPostgres(TEST_DATABASE_URL, { schema });
        redis = createRedis({ url: TEST_REDIS_URL });
        store = new RedisTimelineStore(redis, new Keys(prefix));
      } else {
        sql = await openTestPglite();
        store = new MemoryTimelineStore();
      }
      await migrate(sql);
    });
    afterAll(async () => {
      if (redis) {
        await deleteByPrefix(redis, prefix);
        await closeRedis(redis);
        await sql.exec(`DROP SCHEMA ${schema} CASCADE`);
      }
      await sql.close();
    });

    it('items published during a read wait for the next one: a newer item fanned out first never hides an older pending one', async () => {
      const { r, a, b } = await world();
      let older = 0;
      let newer = 0;
      let finishOlder: () => Promise<void> = async () => {};
      const s = hooked(store, {
        readInbox: {
          before: async () => {
            const x = await publish(a, `late_x${n}`, NOW + 10_000); // its fan-out is slow: still pending
            const y = await publish(b, `late_y${n}`, NOW + 10_000);
            await y.fanout(); // already in the reader's inbox when the page is read
            [older, newer, finishOlder] = [x.tid, y.tid, x.fanout];
          },
        },
      });
      const first = await timeline(s).page(r, { limit: 20 }, NOW + 20_000);
      expect(first.items.map((i) => i.tid)).not.toContain(newer);
      expect(first.items).toHaveLength(4);
      expect((await store.readInbox(r, ALL)).tids).toContain(newer);
      const top = first.items[0]!.tid;
      expect((await timeline(store).page(r, { limit: 20, sinceId: top }, NOW + 21_000)).items).toEqual([]); // older still pending
      await finishOlder();
      const poll = await timeline(store).page(r, { limit: 20, sinceId: top }, NOW + 22_000);
      expect(poll.items.map((i) => i.tid)).toEqual([newer, older]);
      expect([...poll.items, ...first.items].map((i) => i.tid)).toEqual(await truth(r));
    });

    it('an author who turns celebrity during a read: its first pulled item comes with the next read, on top', async () => {
      const { r, a } = await world();
      let pulledTid = 0;
      const s = hooked(store, {
        readInbox: {
          before: async () => {
            const x = await publish(a, `celeb${n}`, NOW + 10_000);
            await x.fanout(0); // threshold 0: `a` is a celebrity now; its item is left to be pulled
            pulledTid = x.tid;
          },
        },
      });
      const first = await timeline(s).page(r, { limit: 20 }, NOW + 20_000);
      expect(first.items.map((i) => i.tid)).not.toContain(pulledTid); // above this read's watermark
      expect((await store.readInbox(r, ALL)).tids).not.toContain(pulledTid); // not pushed
      const poll = await timeline(store).page(r, { limit: 20, sinceId: first.items[0]!.tid }, NOW + 21_000);
      expect(poll.items.map((i) => i.tid)).toEqual([pulledTid]); // merged from the outbox
      expect([...poll.items, ...first.items].map((i) => i.tid)).toEqual(await truth(r));
    });

    it('a cold reader rebuilt while fan-outs run: complete first read, complete inbox afterwards', async () => {
      const { r, a, b } = await world();
      const later = NOW + 8 * DAY; // beyond the active window: cold
      const cold = await publish(a, `cold${n}`, later); // pushed: the inbox still exists (the read below rebuilds it anyway)
      await cold.fanout();
      expect((await store.readInbox(r, ALL)).tids).toContain(cold.tid);
      let early = 0;
      let late = 0;
      const s = hooked(store, {
        // after the inbox is marked building, before the reader is marked active: not pushed, but in the SQL query
        beginRebuild: { after: async () => void (early = await publishAndFanout(a, `early${n}`, later + 1_000)) },
        // after the SQL query of the rebuild, before its merge: pushed into the building inbox
        completeRebuild: { before: async () => void (late = await publishAndFanout(b, `latep${n}`, later + 2_000)) },
      });
      async function publishAndFanout(author: string, id: string, at: number): Promise<number> {
        const p = await publish(author, id, at);
        await p.fanout();
        return p.tid;
      }
      const first = await timeline(s).page(r, { limit: 20 }, later + 3_000);
      expect(first.rebuilt).toBe(true);
      const want = await truth(r);
      expect(want.slice(0, 2)).toEqual([late, early]);
      // the read's watermark was taken before both were published: the page is the truth below them
      expect(first.items.map((i) => i.tid)).toEqual(want.filter((t) => t < early));
      expect((await store.readInbox(r, ALL)).tids).toEqual(want); // nothing lost by the rebuild
      const next = await timeline(store).page(r, { limit: 20 }, later + 4_000);
      expect(next.rebuilt).toBe(false);
      expect(next.items.map((i) => i.tid)).toEqual(want);
    });
  });
}
