/**
 * The HotCounters port contract (src/hot/hot-counters.ts), one suite run against every adapter:
 * a test file adopts it through test/support/contract.ts. Time is virtual throughout.
 */
import { describe, expect, it } from 'vitest';
import { HOUR_MS, MINUTE_MS, DAY_MS } from '../../src/kernel/clock.js';
import { HyperLogLog } from '../../src/hot/hll.js';
import { DEFAULT_HOT_PARAMS, hotScore, hoursSincePublish } from '../../src/hot/domain.js';
import type { CounterSnapshot, HotCounters, HotRules } from '../../src/hot/hot-counters.js';

/** What a factory hands the contract: a fresh, empty store with its own keys. */
export interface HotCountersHarness {
  counters: HotCounters;
  /** Simulates losing the store's state (Redis: every key deleted; in-process: a new instance). */
  lose(): Promise<HotCounters>;
}

export type HotCountersFactory = (rules: HotRules) => Promise<HotCountersHarness>;

/** 2026-03-06 12:00 UTC. */
export const T0 = Date.UTC(2026, 2, 6, 12);
export const WINDOW = 10 * MINUTE_MS;
export const RULES: HotRules = {
  params: { ...DEFAULT_HOT_PARAMS },
  rateWindowMs: WINDOW,
  visitorBudgetPerMinute: 1000,
  retentionMs: 90 * DAY_MS,
  cap: 1000,
};

/** The expected score of note 2 for an item published at `pubMs`, seen at `nowMs`. */
export function expectedScore(pv: number, uv: number, nowMs: number, pubMs: number, p = RULES.params): number {
  return hotScore(pv, uv, hoursSincePublish(nowMs, pubMs), p);
}

/** Relative closeness (C `pow` and V8's `Math.pow` may differ in the last bits). */
export function expectClose(actual: number, expected: number): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(Math.abs(expected) * 1e-12 + 1e-300);
}

/** Marks a fresh store's shards restored (what the service does on start). */
export async function makeHealthy(c: HotCounters, now = T0): Promise<void> {
  const lost = await c.lostShards();
  await c.restore([], now, lost);
  await c.seal(lost);
}

async function withHarness(
  factory: HotCountersFactory,
  rules: Partial<HotRules>,
  body: (h: HotCountersHarness, c: HotCounters) => Promise<void>,
) {
  const h = await factory({ ...RULES, ...rules });
  try {
    await body(h, h.counters);
  } finally {
    await h.counters.close();
  }
}

/** `n` item ids `<tag><i>` that all live on one shard (budgets and caps are per shard). */
export function sameShardIds(c: HotCounters, tag: string, n: number): string[] {
  const shard = c.shardOf(`${tag}0`);
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) if (c.shardOf(`${tag}${i}`) === shard) out.push(`${tag}${i}`);
  return out;
}

const view = (c: HotCounters, itemId: string, visitorId: string, nowMs: number, flagged = false) =>
  c.view({ itemId, visitorId, nowMs, flagged });

/** Registers the contract's tests under `describe(\`HotCounters contract: ${name}\`)`. */
export function hotCountersContract(name: string, factory: HotCountersFactory): void {
  describe(`HotCounters contract: ${name}`, () => {
    const PUB = T0 - 2 * HOUR_MS;

    it("counts a view: PV and UV + 1, note 2's score at now, ranked", async () => {
      await withHarness(factory, {}, async (_h, c) => {
        await c.register([{ itemId: 'a1', publishedAtMs: PUB }]);
        const r = await view(c, 'a1', 'v1', T0);
        expect(r).toMatchObject({ verdict: 'counted', pv: 1, uv: 1 });
        expectClose(r.score, expectedScore(1, 1, T0, PUB)); // (1 + 1.2) / (2 + 2)^1.5 = 0.275
        expectClose(r.score, 2.2 / 8);
        const [row] = await c.counters(['a1']);
        expect(row).toMatchObject({
          itemId: 'a1',
          publishedAtMs: PUB,
          pv: 1,
          uv: 1,
          suspicious: { repeat: 0, budget: 0, flagged: 0 },
        });
        expectClose(row!.score!, r.score);
        expect(await c.top(10)).toEqual([{ itemId: 'a1', score: row!.score }]);
      });
    });

    it('an unregistered item is unknown and nothing is written', async () => {
      await withHarness(factory, {}, async (_h, c) => {
        expect(await view(c, 'ghost', 'v1', T0)).toEqual({ verdict: 'unknown', pv: 0, uv: 0, score: 0 });
        expect(await c.counters(['ghost'])).toEqual([
          {
            itemId: 'ghost',
            publishedAtMs: null,
            pv: 0,
            uv: 0,
            score: null,
            suspicious: { repeat: 0, budget: 0, flagged: 0 },
          },
        ]);
        expect(await c.top(10)).toEqual([]);
        expect(await c.beginCheckpoint()).toEqual([]);
      });
    });

    it('rate limit: a repeat within [t, t + window) is not counted; at t + window it counts', async () => {
      await withHarness(factory, {}, async (_h, c) => {
        await c.register([
          { itemId: 'a1', publishedAtMs: PUB },
          { itemId: 'a2', publishedAtMs: PUB },
        ]);
        expect((await view(c, 'a1', 'v1', T0)).verdict).toBe('counted');
        expect(await view(c, 'a1', 'v1', T0 + WINDOW - 1)).toMatchObject({ verdict: 'repeat', pv: 1, uv: 1 });
        expect((await view(c, 'a1', 'v2', T0 + 1)).verdict).toBe('counted'); // another visitor
        expect((await view(c, 'a2', 'v1', T0 + 2)).verdict).toBe('counted'); // another item
        expect(await view(c, 'a1', 'v1', T0 + WINDOW)).toMatchObject({ verdict: 'counted', pv: 3, uv: 2 });
        // the window restarts at the view that counted
        expect((await view(c, 'a1', 'v1', T0 + 2 * WINDOW - 1)).verdict).toBe('repeat');
        expect((await view(c, 'a1', 'v1', T0 + 2 * WINDOW)).verdict).toBe('counted');
        // a view stamped before the last counted one (out of order) is a repeat
        expect((await view(c, 'a1', 'v1', T0)).verdict).toBe('repeat');
        const [a1] = await c.counters(['a1']);
        expect(a1).toMatchObject({ pv: 4, uv: 2, suspicious: { repeat: 3, budget: 0, flagged: 0 } });
        expect(await c.suspiciousTotals()).toEqual({ repeat: 3, budget: 0, flagged: 0 });
      });
    });

    it('budget: views beyond the per-minute budget (per shard) are isolated; the next minute counts again', async () => {
      await withHarness(factory, { visitorBudgetPerMinute: 3 }, async (_h, c) => {
        const items = sameShardIds(c, 'b', 5);
        const [, , , b4, b5] = items as [string, string, string, string, string];
        await c.register(items.map((itemId) => ({ itemId, publishedAtMs: PUB })));
        const minute = Math.floor(T0 / MINUTE_MS) * MINUTE_MS;
        const verdicts = [];
        for (const [i, id] of items.entries()) verdicts.push((await view(c, id, 'bot', minute + i * 1000)).verdict);
        expect(verdicts).toEqual(['counted', 'counted', 'counted', 'budget', 'budget']);
        expect((await view(c, items[0]!, 'human', minute + 5000)).verdict).toBe('counted'); // budgets are per visitor
        // a view over budget set no rate-limit mark: b4 counts in the next minute
        expect((await view(c, b4, 'bot', minute + MINUTE_MS)).verdict).toBe('counted');
        const rows = await c.counters([b4, b5]);
        expect(rows.map((r) => [r.pv, r.suspicious.budget])).toEqual([
          [1, 1],
          [0, 1],
        ]);
        expect(await c.suspiciousTotals()).toEqual({ repeat: 0, budget: 2, flagged: 0 });
      });
    });

    it('flagged views are isolated and consume no budget', async () => {
      await withHarness(factory, { visitorBudgetPerMinute: 2 }, async (_h, c) => {
        await c.register([
          { itemId: 'f1', publishedAtMs: PUB },
          { itemId: 'f2', publishedAtMs: PUB },
        ]);
        for (let i = 0; i < 5; i++) expect((await view(c, 'f1', 'v1', T0 + i, true)).verdict).toBe('flagged');
        expect((await view(c, 'f1', 'v1', T0 + 10)).verdict).toBe('counted');
        expect((await view(c, 'f2', 'v1', T0 + 11)).verdict).toBe('counted');
        const [f1] = await c.counters(['f1']);
        expect(f1).toMatchObject({ pv: 1, uv: 1, suspicious: { flagged: 5, budget: 0, repeat: 0 } });
        expect(await c.suspiciousTotals()).toEqual({ repeat: 0, budget: 0, flagged: 5 });
      });
    });

    it('an item older than the retention is expired and nothing changes', async () => {
      await withHarness(factory, { retentionMs: 10 * DAY_MS }, async (_h, c) => {
        await c.register([
          { itemId: 'old', publishedAtMs: T0 - 10 * DAY_MS - 1000 },
          { itemId: 'edge', publishedAtMs: T0 - 10 * DAY_MS },
        ]);
        expect(await view(c, 'old', 'v1', T0)).toMatchObject({ verdict: 'expired', pv: 0 });
        expect((await view(c, 'edge', 'v1', T0)).verdict).toBe('counted');
        expect(await c.suspiciousTotals()).toEqual({ repeat: 0, budget: 0, flagged: 0 });
        expect((await c.top(10)).map((e) => e.itemId)).toEqual(['edge']);
      });
    });

    it('UV is the HyperLogLog estimate of the distinct visitors (Redis PFCOUNT, bit for bit)', async () => {
      await withHarness(factory, {}, async (_h, c) => {
        await c.register([{ itemId: 'u1', publishedAtMs: PUB }]);
        const hll = new HyperLogLog();
        let last = 0;
        for (let i = 0; i < 3000; i++) {
          const visitor = `v${i % 2500}`; // 500 repeats, in a later window
          hll.add(visitor);
          last = (await view(c, 'u1', visitor, T0 + (i < 2500 ? 0 : WINDOW))).uv;
        }
        expect(last).toBe(hll.count());
        expect(Math.abs(last - 2500) / 2500).toBeLessThan(0.03);
        expect((await c.counters(['u1']))[0]!.pv).toBe(3000);
      });
    });

    it('decays over virtual time: rescoring recomputes every score at now, so a stale item sinks', async () => {
      await withHarness(factory, {}, async (_h, c) => {
        await c.register([
          { itemId: 'early', publishedAtMs: T0 - 30 * HOUR_MS },
          { itemId: 'fresh', publishedAtMs: T0 - HOUR_MS },
        ]);
        for (let i = 0; i < 40; i++) await view(c, 'early', `v${i}`, T0 - 28 * HOUR_MS); // popular, 2 h old then
        for (let i = 0; i < 5; i++) await view(c, 'fresh', `v${i}`, T0);
        // early's stored score is still the one of its last view, 28 hours ago
        expect((await c.top(2)).map((e) => e.itemId)).toEqual(['early', 'fresh']);
        expect(await c.rescore(T0)).toEqual({ rescored: 2, dropped: 0, trimmed: 0 });
        const top = await c.top(2);
        expect(top.map((e) => e.itemId)).toEqual(['fresh', 'early']);
        expectClose(top[1]!.score, expectedScore(40, 40, T0, T0 - 30 * HOUR_MS));
        expectClose(top[0]!.score, expectedScore(5, 5, T0, T0 - HOUR_MS));
        // a day later both have decayed by note 2's law (and with ages alike, PV wins again)
        await c.rescore(T0 + DAY_MS);
        const later = new Map((await c.top(2)).map((e) => [e.itemId, e.score]));
        expectClose(later.get('fresh')!, expectedScore(5, 5, T0 + DAY_MS, T0 - HOUR_MS));
        expectClose(later.get('early')!, expectedScore(40, 40, T0 + DAY_MS, T0 - 30 * HOUR_MS));
        expect(later.get('fresh')!).toBeLessThan(top[0]!.score);
      });
    });

    it('trims each ranking to the cap after rescoring, keeping the best; drops forgotten items', async () => {
      await withHarness(factory, { cap: 5 }, async (_h, c) => {
        const ids = sameShardIds(c, 't', 8); // the cap holds per shard
        await c.register(ids.map((itemId) => ({ itemId, publishedAtMs: PUB })));
        for (const [i, id] of ids.entries()) for (let v = 0; v <= i; v++) await view(c, id, `v${v}`, T0);
        expect(await c.top(100)).toHaveLength(8);
        await c.forget([ids[7]!]); // leaves the ranking at once
        expect(await c.top(100)).toHaveLength(7);
        const r = await c.rescore(T0);
        expect(r).toEqual({ rescored: 7, dropped: 0, trimmed: 2 });
        expect((await c.top(100)).map((e) => e.itemId)).toEqual([6, 5, 4, 3, 2].map((i) => ids[i]));
        // a trimmed item comes back with its full counters on its next view
        expect(await view(c, ids[0]!, 'v9', T0)).toMatchObject({ verdict: 'counted', pv: 2, uv: 2 });
        expect((await c.top(100)).map((e) => e.itemId)).toContain(ids[0]);
        expect(await c.counters([ids[7]!])).toMatchObject([{ publishedAtMs: null, pv: 0 }]);
      });
    });

    it('orders ties like a Redis ZSET (score desc, then id desc)', async () => {
      await withHarness(factory, {}, async (_h, c) => {
        await c.register(['x_b', 'x_a', 'x_c'].map((itemId) => ({ itemId, publishedAtMs: PUB })));
        for (const id of ['x_b', 'x_a', 'x_c']) await view(c, id, 'v1', T0);
        expect((await c.top(3)).map((e) => e.itemId)).toEqual(['x_c', 'x_b', 'x_a']);
        expect((await c.top(2)).map((e) => e.itemId)).toEqual(['x_c', 'x_b']);
      });
    });

    it('register with onlyExisting updates known items only', async () => {
      await withHarness(factory, {}, async (_h, c) => {
        await c.register([{ itemId: 'r1', publishedAtMs: PUB }]);
        await c.register(
          [
            { itemId: 'r1', publishedAtMs: PUB - HOUR_MS },
            { itemId: 'r2', publishedAtMs: PUB },
          ],
          { onlyExisting: true },
        );
        expect((await c.counters(['r1', 'r2'])).map((r) => r.publishedAtMs)).toEqual([PUB - HOUR_MS, null]);
      });
    });

    it('never loses an increment under concurrent views', async () => {
      await withHarness(factory, {}, async (_h, c) => {
        await c.register([{ itemId: 'c1', publishedAtMs: PUB }]);
        const results = await Promise.all(Array.from({ length: 600 }, (_, i) => view(c, 'c1', `v${i % 400}`, T0)));
        const counted = results.filter((r) => r.verdict === 'counted').length;
        expect(counted).toBe(400);
        expect(results.filter((r) => r.verdict === 'repeat')).toHaveLength(200);
        expect(new Set(results.filter((r) => r.verdict === 'counted').map((r) => r.pv)).size).toBe(400); // each saw its own increment
        expect((await c.counters(['c1']))[0]).toMatchObject({ pv: 400, suspicious: { repeat: 200 } });
      });
    });

    it('checkpoint marks: begin returns every viewed item; only ended ids are cleared', async () => {
      await withHarness(factory, {}, async (_h, c) => {
        await makeHealthy(c);
        await c.register(['k1', 'k2', 'k3'].map((itemId) => ({ itemId, publishedAtMs: PUB })));
        await view(c, 'k1', 'v1', T0);
        await view(c, 'k2', 'v1', T0, true); // suspicious views are checkpointed too
        expect((await c.beginCheckpoint()).sort()).toEqual(['k1', 'k2']);
        await view(c, 'k3', 'v1', T0); // during the checkpoint
        const { snapshots, lost } = await c.snapshot(['k1', 'k2']);
        expect(lost).toEqual([]);
        expect(snapshots.map((s) => [s.itemId, s.pv, s.uv, s.suspicious.flagged])).toEqual([
          ['k1', 1, 1, 0],
          ['k2', 0, 0, 1],
        ]);
        expect(HyperLogLog.fromRedis(snapshots[0]!.hll).count()).toBe(1);
        expect(snapshots[1]!.hll.length).toBe(0);
        await c.endCheckpoint(['k1']); // k2's write "failed"
        expect((await c.beginCheckpoint()).sort()).toEqual(['k2', 'k3']);
        await c.endCheckpoint(['k2', 'k3']);
        expect(await c.beginCheckpoint()).toEqual([]);
      });
    });

    it('after a loss, restore ADDS the checkpoint to what was counted since, once; then the shard is sealed', async () => {
      await withHarness(factory, {}, async (h, c0) => {
        await makeHealthy(c0);
        await c0.register(['L1', 'L2'].map((itemId) => ({ itemId, publishedAtMs: PUB })));
        for (let i = 0; i < 30; i++) await view(c0, 'L1', `v${i}`, T0);
        await view(c0, 'L2', 'v1', T0, true);
        const { snapshots } = await c0.snapshot(await c0.beginCheckpoint());
        const c = await h.lose();
        expect((await c.lostShards()).length).toBe(c.shards);
        expect(await c.snapshot(['L1'])).toMatchObject({ snapshots: [], lost: [c.shardOf('L1')] });
        // views keep being counted while the shard is lost
        await c.register([{ itemId: 'L1', publishedAtMs: PUB }]);
        for (let i = 20; i < 40; i++) await view(c, 'L1', `v${i}`, T0 + HOUR_MS);
        const lost = await c.lostShards();
        expect(await c.restore(snapshots, T0 + HOUR_MS, lost)).toBe(2);
        expect(await c.restore(snapshots, T0 + HOUR_MS, lost)).toBe(0); // a second pass adds nothing
        await c.seal(lost);
        expect(await c.lostShards()).toEqual([]);
        expect(await c.restore(snapshots, T0 + HOUR_MS, lost)).toBe(0);
        const union = new HyperLogLog();
        for (let i = 0; i < 40; i++) union.add(`v${i}`);
        const [l1, l2] = await c.counters(['L1', 'L2']);
        expect(l1).toMatchObject({ pv: 50, uv: union.count(), publishedAtMs: PUB });
        expect(l2).toMatchObject({ pv: 0, suspicious: { flagged: 1 }, score: null });
        expect(await c.suspiciousTotals()).toEqual({ repeat: 0, budget: 0, flagged: 1 });
        expectClose(l1!.score!, expectedScore(50, union.count(), T0 + HOUR_MS, PUB));
        expect((await c.beginCheckpoint()).sort()).toEqual(['L1', 'L2']); // restored items are checkpointed again
      });
    });

    it('rejects invalid ids before writing anything', async () => {
      await withHarness(factory, {}, async (_h, c) => {
        await c.register([{ itemId: 'ok', publishedAtMs: PUB }]);
        await expect(view(c, 'a:b', 'v1', T0)).rejects.toMatchObject({ code: 40002 });
        await expect(view(c, 'ok', '{x}', T0)).rejects.toMatchObject({ code: 40002 });
        await expect(
          c.register([
            { itemId: 'ok2', publishedAtMs: PUB },
            { itemId: 'bad id', publishedAtMs: PUB },
          ]),
        ).rejects.toMatchObject({ code: 40002 });
        expect((await c.counters(['ok', 'ok2'])).map((r) => [r.pv, r.publishedAtMs])).toEqual([
          [0, PUB],
          [0, null],
        ]);
        await expect(c.counters(['x}'])).rejects.toMatchObject({ code: 40002 });
        const bad: CounterSnapshot = {
          itemId: 'no:pe',
          publishedAtMs: PUB,
          pv: 1,
          uv: 1,
          hll: Buffer.alloc(0),
          suspicious: { repeat: 0, budget: 0, flagged: 0 },
        };
        await expect(c.restore([bad], T0, await c.lostShards())).rejects.toMatchObject({ code: 40002 });
      });
    });
  });
}
