/**
 * The embedded default keeps note 3's per-reader seen filters across a restart (their snapshot in the
 * data folder), so a feed on the `per_reader` strategy does not repeat itself after one.
 */
import { hourlyItems } from '../support/items.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../src/kernel/clock.js';
import { T0, embeddedDataDir } from '../support/app.js';

const { dataDir, open } = embeddedDataDir({
  FRESHET_READER_SEEN_CAPACITY: '1000',
  FRESHET_FOR_YOU_SEEN: 'per_reader',
});

describe('per-reader seen filters across a restart of the embedded default', () => {
  it('remembers what a reader was shown, and the for-you feed on per_reader does not repeat it', async () => {
    const first = await open();
    const items = hourlyItems('p', 8, T0);
    await first.content.upsertItems(items, T0);
    const before = (await first.forYou.page('alice', 'refresh', 3, T0)).items.map((i) => i.id);
    expect(await first.readerSeen.seen('alice', before, T0)).toEqual([true, true, true]);
    await first.close();
    expect(existsSync(join(dataDir, 'reader-seen-filters.bin'))).toBe(true);

    const second = await open();
    try {
      expect(await second.readerSeen.seen('alice', before, T0 + HOUR_MS)).toEqual([true, true, true]);
      const after = (await second.forYou.page('alice', 'refresh', 8, T0 + HOUR_MS)).items.map((i) => i.id);
      expect(after).toHaveLength(5);
      for (const id of before) expect(after).not.toContain(id);
    } finally {
      await second.close();
    }
  });
});
