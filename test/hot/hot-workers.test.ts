/**
 * The hot ranking's workers and lifecycle: the timers rescore, checkpoint and refresh on their own and
 * stop cleanly; a graceful close writes a final checkpoint, so an embedded server restarted on the
 * same data folder comes back with every count (the in-process counters are restored from PGlite).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/compose/config.js';
import { openFreshet } from '../../src/compose/open.js';
import { HOUR_MS, ManualClock } from '../../src/kernel/clock.js';
import { startHotWorkers } from '../../src/hot/workers.js';
import { silentLogger } from '../../src/kernel/observability.js';
import { seedPgliteDataDir } from '../support/pglite.js';

const T0 = Date.UTC(2026, 2, 6, 12);
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function env(dataDir: string) {
  return loadConfig({
    LOG_LEVEL: 'silent',
    FRESHET_DATA_DIR: dataDir,
    FRESHET_SERVICE_KEY: 'k'.repeat(20),
    FRESHET_SECRET: 's'.repeat(20),
  });
}

async function open(dataDir: string, clock: ManualClock) {
  return openFreshet(env(dataDir), { clock, defaultMetrics: false });
}

describe('hot ranking lifecycle (embedded default)', () => {
  it('workers rescore, checkpoint and refresh on their timers, and stop', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'freshet-hotw-'));
    dirs.push(dir);
    seedPgliteDataDir(dir);
    const clock = new ManualClock(T0);
    const f = await open(dir, clock);
    try {
      await f.content.upsertItems(
        [
          {
            id: 'w1',
            authorId: 'a',
            title: 'w1',
            text: '',
            url: null,
            tags: [],
            publishedAt: T0 - HOUR_MS,
            popularity: 0,
          },
        ],
        T0,
      );
      await f.hot.recordView({ itemId: 'w1', visitorId: 'v1', nowMs: T0 });
      const before = (await f.hotCounters.top(1))[0]!.score;
      clock.advance(10 * HOUR_MS);
      // The workers' interval timers run on a fake timer clock: each tick is due when the test says so.
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      const workers = startHotWorkers(
        f.hot,
        f.hotMaintenance,
        clock,
        { rescoreMs: 20, checkpointMs: 20, cacheRefreshMs: 20 },
        silentLogger,
      );
      expect(vi.getTimerCount()).toBe(3);
      vi.advanceTimersByTime(20); // one tick of each
      await expect.poll(async () => (await f.hotCounters.top(1))[0]!.score, { timeout: 10_000 }).toBeLessThan(before); // rescored at the later time
      await expect.poll(async () => (await f.hotArchive.get(['w1']))[0]?.pv, { timeout: 10_000 }).toBe(1); // checkpointed
      expect((await f.hot.snapshotAt(clock.now())).computedAtMs).toBe(clock.now()); // refreshed
      await workers.stop();
      expect(vi.getTimerCount()).toBe(0); // every timer cleared
      await f.hot.recordView({ itemId: 'w1', visitorId: 'v2', nowMs: clock.now() });
      vi.advanceTimersByTime(60);
      expect((await f.hotArchive.get(['w1']))[0]!.pv).toBe(1); // stopped: no more checkpoints
    } finally {
      vi.useRealTimers();
      await f.close();
    }
  });

  it('a graceful close checkpoints; a restart on the same data folder restores every count', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'freshet-hotw-'));
    dirs.push(dir);
    seedPgliteDataDir(dir);
    const clock = new ManualClock(T0);
    const first = await open(dir, clock);
    await first.content.upsertItems(
      ['r1', 'r2'].map((id) => ({
        id,
        authorId: 'a',
        title: id,
        text: '',
        url: null,
        tags: [],
        publishedAt: T0 - HOUR_MS,
        popularity: 0,
      })),
      T0,
    );
    for (let i = 0; i < 25; i++) await first.hot.recordView({ itemId: 'r1', visitorId: `v${i}`, nowMs: T0 });
    await first.hot.recordView({ itemId: 'r2', visitorId: 'bot', nowMs: T0, flagged: true });
    first.startWorkers();
    await first.close();
    const second = await open(dir, clock);
    try {
      const [r1, r2] = await second.hotCounters.counters(['r1', 'r2']);
      expect(r1).toMatchObject({ pv: 25, uv: 25 });
      expect(r2).toMatchObject({ pv: 0, suspicious: { flagged: 1 } });
      expect((await second.hot.top(72 * HOUR_MS, 10, T0)).entries.map((e) => e.item.id)).toEqual(['r1']);
      expect((await second.hot.recordView({ itemId: 'r1', visitorId: 'v0', nowMs: T0 + HOUR_MS })).pv).toBe(26);
    } finally {
      await second.close();
    }
  });
});
