/**
 * The fan-out worker on real stores (Redis + BullMQ + PostgreSQL, and in-process + PGlite): chunking with
 * checkpoints, idempotence, retries that resume, a worker crashing mid-job (BullMQ's stalled-job
 * recovery), a queue that lost its jobs (the PostgreSQL sweep), and celebrities left to be pulled.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresContentStore } from '../../src/content/postgres-content-store.js';
import { PostgresSocialGraph } from '../../src/following/adapters/postgres-social-graph.js';
import { PostgresTimelineIndex } from '../../src/following/adapters/postgres-timeline-index.js';
import { migrate } from '../../src/compose/migrations.js';
import { openPostgres, type Sql } from '../../src/kernel/sql/sql.js';
import { MemoryTimelineStore } from '../../src/following/adapters/memory-timeline-store.js';
import { MemoryFanoutQueue } from '../../src/following/adapters/memory-fanout-queue.js';
import { RedisTimelineStore } from '../../src/following/adapters/redis-timeline-store.js';
import { BullFanoutQueue } from '../../src/following/adapters/bullmq-fanout-queue.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { closeRedis, createRedis } from '../../src/kernel/redis/client.js';
import { FanoutWorker, type FanoutSettings } from '../../src/following/fanout-worker.js';
import type { FanoutJob, FanoutQueue } from '../../src/following/fanout-queue.js';
import type { TimelineStore } from '../../src/following/timeline-store.js';
import { silentLogger } from '../../src/kernel/observability.js';
import { noTimelineMetrics } from '../../src/following/timeline-metrics.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniquePrefix, uniqueSchema } from '../support/env.js';
import { deleteByPrefix } from '../support/redis.js';
import { openTestPglite } from '../support/pglite.js';

const NOW = Date.UTC(2026, 2, 6, 12);
const FOLLOWERS = ['f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7'];
const SETTINGS: FanoutSettings = {
  activeWindowMs: 7 * 86_400_000,
  inboxLength: 800,
  outboxLength: 800,
  celebrityThreshold: 10,
  chunkSize: 2,
  staleMs: 0,
  sweepEveryMs: 60_000,
};
const ALL = { hi: Infinity, lo: 0, count: 100 };

/** A store whose pushes can be made to fail once or hang (a worker dying mid-job). */
function faulty(inner: TimelineStore, plan: { failOn?: number; hangOn?: number }): TimelineStore {
  let pushes = 0;
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'pushToInboxes') return Reflect.get(target, prop, receiver) as unknown;
      return async (...args: Parameters<TimelineStore['pushToInboxes']>) => {
        pushes++;
        if (pushes === plan.failOn) throw new Error('injected failure');
        if (pushes === plan.hangOn) await new Promise(() => undefined);
        return target.pushToInboxes(...args);
      };
    },
  });
}

for (const kind of ['in-process', 'redis'] as const) {
  describe(`FanoutWorker (${kind})`, () => {
    let sql: Sql;
    let redis: ReturnType<typeof createRedis> | undefined;
    const prefix = uniquePrefix();
    const schema = uniqueSchema();
    let store: TimelineStore;
    const queues: FanoutQueue[] = [];
    let n = 0;
    const graph = () => new PostgresSocialGraph(sql);
    const index = () => new PostgresTimelineIndex(sql);

    const newQueue = (opts: { lockDurationMs?: number; stalledIntervalMs?: number } = {}): FanoutQueue => {
      const q =
        kind === 'redis'
          ? new BullFanoutQueue({
              connect: () => new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null }),
              prefix: new Keys(`${prefix}q${n}:`).fanoutQueuePrefix(),
              attempts: 5,
              backoffMs: 20,
              ...opts,
            })
          : new MemoryFanoutQueue({ attempts: 5, backoffMs: 5 });
      queues.push(q);
      return q;
    };
    const worker = (q: FanoutQueue, s: TimelineStore = store) =>
      new FanoutWorker(
        { graph: graph(), index: index(), store: s, queue: q, metrics: noTimelineMetrics, log: silentLogger },
        SETTINGS,
      );

    /** A fresh author with 7 active followers with ready inboxes and one published item. */
    async function scenario(): Promise<{ author: string; job: FanoutJob }> {
      n++;
      const author = `a${n}`;
      await graph().ensureUsers([author], NOW);
      for (const f of FOLLOWERS) {
        const reader = `${f}_${n}`;
        await graph().follow(reader, author, NOW);
        await graph().touch(reader, NOW);
        await store.beginRebuild(reader, SETTINGS.activeWindowMs);
        await store.completeRebuild(reader, [], 0, 800, SETTINGS.activeWindowMs);
      }
      await new PostgresContentStore(sql, { ownsSql: false }).upsertItems(
        [{ id: `i${n}`, authorId: author, title: 't', text: '', url: null, tags: [], publishedAt: NOW, popularity: 0 }],
        NOW,
      );
      const [p] = await index().publish([`i${n}`], NOW);
      return { author, job: { ...p!, nowMs: NOW, enqueuedAtMs: Date.now() } };
    }

    const inboxHas = async (tid: number) =>
      Promise.all(
        FOLLOWERS.map(async (f) => (await store.readInbox(`${f}_${n}`, ALL)).tids.filter((t) => t === tid).length),
      );

    beforeAll(async () => {
      if (kind === 'redis') {
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
      for (const q of queues) await q.close();
      if (redis) {
        await deleteByPrefix(redis, prefix);
        await closeRedis(redis);
        await sql.exec(`DROP SCHEMA ${schema} CASCADE`);
      }
      await sql.close();
    });

    it('pushes in chunks with a checkpoint after each full chunk, then clears the pending row', async () => {
      const { job } = await scenario();
      const checkpoints: string[] = [];
      const out = await worker(newQueue()).handle(job, { checkpoint: async (a) => void checkpoints.push(a) });
      expect(out).toEqual({ deliveries: 7, pulled: false });
      expect(checkpoints).toEqual([`f2_${n}`, `f4_${n}`, `f6_${n}`]);
      expect(await inboxHas(job.tid)).toEqual([1, 1, 1, 1, 1, 1, 1]);
      expect(await index().watermark()).toBe(job.tid + 1); // nothing pending
    });

    it('is idempotent: running a job again (or from a checkpoint) changes nothing', async () => {
      const { job } = await scenario();
      const w = worker(newQueue());
      await w.handle(job, { checkpoint: async () => {} });
      await w.handle(job, { checkpoint: async () => {} });
      await w.handle({ ...job, after: `f3_${n}` }, { checkpoint: async () => {} });
      expect(await inboxHas(job.tid)).toEqual([1, 1, 1, 1, 1, 1, 1]);
    });

    it('a failed attempt is retried from its checkpoint and delivers everything once', async () => {
      const { job } = await scenario();
      const q = newQueue();
      const running = worker(q, faulty(store, { failOn: 2 })).start(1);
      await q.enqueue([job]);
      await q.idle(20_000);
      await running.stop();
      expect(await inboxHas(job.tid)).toEqual([1, 1, 1, 1, 1, 1, 1]);
      expect(await index().watermark()).toBe(job.tid + 1); // nothing pending
    });

    it('a lost queue is refilled from PostgreSQL by the sweep (crash between publish and enqueue)', async () => {
      const { job } = await scenario();
      const q = newQueue();
      const w = worker(q);
      expect(await w.sweep()).toBe(1); // the pending row is found and enqueued
      const running = w.start(1);
      await q.idle(20_000);
      await running.stop();
      expect(await inboxHas(job.tid)).toEqual([1, 1, 1, 1, 1, 1, 1]);
      expect(await index().pendingBefore(Date.now() + 1000, 10)).toEqual([]);
    });

    it("pushes into every inbox that exists, whatever the job's time says of its reader (no trusted inbox misses an item)", async () => {
      // The followers read at NOW (inboxes ready); the job carries a time past the active window (a publisher
      // whose clock runs ahead, or a read's last-active write landing after the job read the graph). A read
      // at NOW + 1 min trusts those inboxes, so the job must have pushed into them.
      const { job } = await scenario();
      const late = { ...job, nowMs: NOW + SETTINGS.activeWindowMs + 60_000 };
      const out = await worker(newQueue()).handle(late, { checkpoint: async () => {} });
      expect(out).toEqual({ deliveries: 7, pulled: false });
      expect(await inboxHas(job.tid)).toEqual([1, 1, 1, 1, 1, 1, 1]);
    });

    it('a follower who never read (no inbox) gets no push; its first read rebuilds from PostgreSQL', async () => {
      const { author, job } = await scenario();
      await graph().follow(`never_${n}`, author, NOW);
      const out = await worker(newQueue()).handle(job, { checkpoint: async () => {} });
      expect(out).toEqual({ deliveries: 7, pulled: false });
      expect((await store.readInbox(`never_${n}`, ALL)).state).toBe('missing');
    });

    it('a celebrity item is not pushed: the author gets a pull tid and the outbox holds it', async () => {
      n++;
      const author = `star${n}`;
      await graph().ensureUsers([author], NOW);
      for (let i = 0; i < 11; i++) await graph().follow(`fan${i}_${n}`, author, NOW);
      await new PostgresContentStore(sql, { ownsSql: false }).upsertItems(
        [{ id: `s${n}`, authorId: author, title: 't', text: '', url: null, tags: [], publishedAt: NOW, popularity: 0 }],
        NOW,
      );
      const [p] = await index().publish([`s${n}`], NOW);
      const out = await worker(newQueue()).handle(
        { ...p!, nowMs: NOW, enqueuedAtMs: Date.now() },
        { checkpoint: async () => {} },
      );
      expect(out).toEqual({ deliveries: 0, pulled: true });
      expect((await graph().authorInfo(author)).pullTid).toBe(p!.tid);
      expect((await store.readOutboxes([author], ALL))[0]!.tids).toEqual([p!.tid]);
    });

    if (kind === 'redis') {
      it('a worker that dies mid-job loses its lock; another worker runs the job again and nothing is lost', async () => {
        const { job } = await scenario();
        const q = newQueue({ lockDurationMs: 600, stalledIntervalMs: 300 });
        const dying = worker(q, faulty(store, { hangOn: 2 })).start(1);
        await q.enqueue([job]);
        await expect.poll(async () => (await inboxHas(job.tid)).reduce((a, b) => a + b, 0), { timeout: 5_000 }).toBe(2); // first chunk done
        await dying.stop(true); // the process "crashes": no lock renewal from now on
        const healthy = worker(q).start(1);
        await q.idle(20_000);
        await healthy.stop();
        expect(await inboxHas(job.tid)).toEqual([1, 1, 1, 1, 1, 1, 1]);
        expect(await index().watermark()).toBe(job.tid + 1); // nothing pending
      });
    }
  });
}
