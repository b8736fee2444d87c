/**
 * A bounded slice of `freshet simulate discover` on the embedded stores (in-memory PGlite + in-process
 * stores): the newest 1,500 HN posts, 25 MIND sessions and 3 MovieLens readers, 8 pages of 20 each.
 * The replay must end (its catch-up embedding once looped for ever when the items were written on a
 * later virtual time than the embeddings), serve no item twice to a reader, and reach every phase.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { runSimulateDiscover } from '../src/cli/simulate-discover.js';

const DATA = '../shared/data';

describe('simulate discover (real-data slice)', () => {
  it('ends, serves no duplicates, and pages hold items of every phase', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'freshet-simdisc-'));
    try {
      const config = loadConfig({ LOG_LEVEL: 'silent', FRESHET_DATA_DIR: dataDir, FRESHET_SERVICE_KEY: 'k'.repeat(20), FRESHET_SECRET: 's'.repeat(20) });
      const lines: string[] = [];
      const r = await runSimulateDiscover(config, {
        hnPath: `${DATA}/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz`,
        behaviorsPath: `${DATA}/mind/MINDsmall_train_sample_behaviors.tsv.gz`,
        ratingsPath: `${DATA}/movielens/ml-latest-small/ratings.csv.gz`,
        items: 1_500,
        sessions: 25,
        movielensReaders: 3,
        pages: 8,
        limit: 20,
        out: (t) => lines.push(t),
      });
      expect(r.items).toBe(1_500);
      expect(r.readers.movielens).toBe(3);
      expect(r.sessions).toBe(28);
      expect(r.signals).toBeGreaterThan(0);
      expect(r.served).toBeGreaterThan(0);
      expect(r.duplicates).toBe(0);
      expect(r.exitCode).toBe(0);
      for (const source of ['followed', 'discovery', 'newest'] as const) expect(r.pagesWith[source], source).toBeGreaterThan(0);
      expect(lines.join('\n')).toContain('duplicates served           0');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
