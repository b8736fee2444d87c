/**
 * Restarts of the embedded default (PGlite in a data folder + in-process stores): items survive in
 * PGlite, and the seen filters survive through their snapshot, so a reader is not served again what
 * it saw before the restart.
 */
import { hourlyItems } from '../support/items.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { T0, embeddedDataDir } from '../support/app.js';

const { dataDir, open } = embeddedDataDir();

describe('embedded default across a restart', () => {
  it('keeps items and impressions: the same reader gets new items, another reader the same top items', async () => {
    const first = await open();
    const items = hourlyItems('r', 12, T0);
    await first.content.upsertItems(items, T0);
    const before = (await first.forYou.page('alice', 'refresh', 3, T0)).items.map((i) => i.id);
    await first.close();
    expect(existsSync(join(dataDir, 'seen-filters.bin'))).toBe(true);

    const second = await open();
    try {
      const after = (await second.forYou.page('alice', 'refresh', 3, T0 + 1000)).items.map((i) => i.id);
      expect(after).toHaveLength(3);
      expect(after.filter((id) => before.includes(id))).toEqual([]);
      const other = (await second.forYou.page('bob', 'refresh', 3, T0 + 1000)).items.map((i) => i.id);
      expect(other).toEqual(before);
    } finally {
      await second.close();
    }
  });
});
