/**
 * The embedded default keeps note 3's per-reader seen filters across a restart (their snapshot in the
 * data folder), so a feed on the `per_reader` strategy does not repeat itself after one.
 */
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openFreshet } from '../src/container.js';
import { HOUR_MS, ManualClock } from '../src/domain/clock.js';
import { T0 } from './support/app.js';

const dataDir = mkdtempSync(join(tmpdir(), 'freshet-rsf-restart-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const config = loadConfig({
  LOG_LEVEL: 'silent',
  FRESHET_DATA_DIR: dataDir,
  FRESHET_SERVICE_KEY: 'restart-service-key-0123456789',
  FRESHET_SECRET: 'restart-secret-0123456789abcdef',
  FRESHET_SEEN_CAPACITY_PER_DAY: '10000',
  FRESHET_READER_SEEN_CAPACITY: '1000',
  FRESHET_FOR_YOU_SEEN: 'per_reader',
});
const open = () => openFreshet(config, { clock: new ManualClock(T0), defaultMetrics: false });

describe('per-reader seen filters across a restart of the embedded default', () => {
  it('remembers what a reader was shown, and the for-you feed on per_reader does not repeat it', async () => {
    const first = await open();
    const items = Array.from({ length: 8 }, (_, i) => ({
      id: `p_${i}`, authorId: 'a', title: `t ${i}`, text: '', url: null, tags: [], publishedAt: T0 - i * HOUR_MS, popularity: 8 - i,
    }));
    await first.content.upsertItems(items, T0);
    const before = (await first.forYou.serve('alice', 'refresh', 3, T0)).items.map((i) => i.id);
    expect(await first.readerSeen.seen('alice', before, T0)).toEqual([true, true, true]);
    await first.close();
    expect(existsSync(join(dataDir, 'reader-seen-filters.bin'))).toBe(true);

    const second = await open();
    try {
      expect(await second.readerSeen.seen('alice', before, T0 + HOUR_MS)).toEqual([true, true, true]);
      const after = (await second.forYou.serve('alice', 'refresh', 8, T0 + HOUR_MS)).items.map((i) => i.id);
      expect(after).toHaveLength(5);
      for (const id of before) expect(after).not.toContain(id);
    } finally {
      await second.close();
    }
  });
});
