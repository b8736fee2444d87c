/**
 * One publish path for every edge (src/use-cases/verbs.ts): items imported with `freshet import hn` —
 * with no server running, or through a running one — reach the following timeline of a reader who
 * follows their author, and have embeddings for discover; and a publish that fails after its items
 * were committed is retried, or completed by the fan-out sweep, so no committed item stays invisible.
 */
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/compose/config.js';
import { openFreshet, type Freshet } from '../../src/compose/open.js';
import { buildApp } from '../../src/server/app.js';
import { runImport } from '../../src/cli/import.js';
import { SERVICE_KEY, startTestApp, item, T0, type TestApp } from '../support/app.js';
import { seedPgliteDataDir } from '../support/pglite.js';

const HN = fileURLToPath(new URL('../../../shared/data/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz', import.meta.url));
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Writes rows [from, to) of the real HN sample (with its header) to a temp CSV; returns its path and authors. */
function hnSlice(from: number, to: number): { path: string; authors: Map<string, string[]> } {
  const lines = gunzipSync(readFileSync(HN)).toString('utf8').split('\n');
  const rows = lines.slice(1 + from, 1 + to);
  const dir = mkdtempSync(join(tmpdir(), 'freshet-hn-slice-'));
  dirs.push(dir);
  const path = join(dir, 'slice.csv');
  writeFileSync(path, `${[lines[0], ...rows].join('\n')}\n`);
  // id,title,url,num_points,num_comments,author,... — the simple rows are enough to find authors
  const authors = new Map<string, string[]>();
  for (const row of rows) {
    const m = /^(\d+),/.exec(row);
    const cols = row.split(',');
    const author = cols.at(-3);
    if (m && author) authors.set(author, [...(authors.get(author) ?? []), `hn_${m[1]!}`]);
  }
  return { path, authors };
}

function embeddedConfig(dataDir: string) {
  return loadConfig({
    LOG_LEVEL: 'silent',
    FRESHET_DATA_DIR: dataDir,
    FRESHET_SERVICE_KEY: SERVICE_KEY,
    FRESHET_SECRET: 'publish-secret-0123456789abcdef',
    FRESHET_SEEN_CAPACITY_PER_DAY: '10000',
  });
}

async function timelineIds(_f: Freshet, app: Awaited<ReturnType<typeof buildApp>>, reader: string): Promise<string[]> {
  const res = await app.inject({
    method: 'GET',
    url: '/v1/feeds/following?limit=100',
    headers: { authorization: `Bearer ${SERVICE_KEY}`, 'x-freshet-reader': reader },
  });
  expect(res.statusCode).toBe(200);
  return (res.json() as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
}

/** Polls `check` until it holds or `ms` of wall time pass (fan-out runs in the background). */
async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe('freshet import hn publishes to every feed (embedded default)', () => {
  it('items imported with no server running, then served: a new follower sees them and they have embeddings', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'freshet-import-'));
    dirs.push(dataDir);
    seedPgliteDataDir(dataDir); // a migrated database: the bootstrap of an empty folder is import-hn.test.ts's case
    const config = embeddedConfig(dataDir);
    const slice = hnSlice(0, 60);
    const summary = await runImport('hn', slice.path, config, { progress: false, out: () => {}, warn: () => {} });
    expect(summary.target).toContain('PGlite');
    expect(summary.inserted).toBeGreaterThan(50);

    const f = await openFreshet(config, { defaultMetrics: false });
    const app = await buildApp(f);
    try {
      const [author, ids] = [...slice.authors].find(([, v]) => v.length >= 1)!;
      const follow = await app.inject({
        method: 'PUT',
        url: `/v1/users/reader_1/following/${author}`,
        headers: { authorization: `Bearer ${SERVICE_KEY}` },
      });
      expect(follow.statusCode).toBe(200);
      expect(await timelineIds(f, app, 'reader_1')).toEqual(expect.arrayContaining(ids));
      expect(await f.discover.embeddings['index'].missingEmbeddings(null, 10)).toEqual([]);

      // the same server keeps running: a second import goes through its API and fans out to the follower
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      writeFileSync(
        join(dataDir, 'server.json'),
        JSON.stringify({ pid: process.pid, host: '127.0.0.1', port: Number(new URL(address).port) }),
      );
      const later = hnSlice(60, 160);
      const [author2, ids2] = [...later.authors].find(([a]) => !slice.authors.has(a))!;
      const second = await runImport('hn', later.path, config, { progress: false, out: () => {}, warn: () => {} });
      expect(second.target).toContain('running server');
      const follow2 = await app.inject({
        method: 'PUT',
        url: `/v1/users/reader_1/following/${author2}`,
        headers: { authorization: `Bearer ${SERVICE_KEY}` },
      });
      expect(follow2.statusCode).toBe(200);
      expect(
        await eventually(
          async () => (await timelineIds(f, app, 'reader_1')).filter((id) => ids2.includes(id)).length === ids2.length,
        ),
      ).toBe(true);
      expect(await f.discover.embeddings['index'].missingEmbeddings(null, 10)).toEqual([]);
    } finally {
      await app.close();
    }
  }, 120_000); // two PGlite opens and two imports on a shared 2-core machine
});

/**
 * An app where reader_9 follows author_1 and the timeline's publish step fails while `failing()` says
 * so (an injected PostgreSQL outage after the content commit); `fn` runs on it, the app closes after.
 */
async function withFailingPublish(failing: () => boolean, fn: (t: TestApp) => Promise<void>): Promise<void> {
  const t = await startTestApp();
  try {
    await t.f.following.graph.ensureUsers(['reader_9', 'author_1'], T0);
    await t.f.useCases.follow('reader_9', 'author_1', T0);
    const timeline = t.f.following.timeline;
    const publish = timeline.publish.bind(timeline);
    timeline.publish = async (ids, now) =>
      failing() ? Promise.reject(new Error('injected: PostgreSQL went away')) : publish(ids, now);
    await fn(t);
  } finally {
    await t.close();
  }
}

const postItem = (t: TestApp, id: string) =>
  t.app.inject({
    method: 'POST',
    url: '/v1/items',
    headers: { authorization: `Bearer ${SERVICE_KEY}` },
    payload: [item(id, 1000)],
  });

describe('a publish that fails after the commit is never lost', () => {
  it('fails once: retried inside the request, the follower sees the item', async () => {
    let failures = 1;
    await withFailingPublish(
      () => failures-- > 0,
      async (t) => {
        const res = await postItem(t, 'once');
        expect(res.statusCode).toBe(200);
        expect(failures).toBe(-1); // failed once, then ran again
        expect(await t.f.following.index.tidsOf(['once'])).not.toEqual([null]);
        expect(await eventually(async () => (await timelineIds(t.f, t.app, 'reader_9')).includes('once'))).toBe(true);
      },
    );
  });

  it('fails every attempt: the request still answers 200, and the fan-out sweep publishes the item', async () => {
    let broken = true;
    await withFailingPublish(
      () => broken,
      async (t) => {
        const res = await postItem(t, 'stuck');
        expect(res.statusCode).toBe(200);
        expect(await t.f.following.index.tidsOf(['stuck'])).toEqual([null]); // committed, not yet published
        broken = false;
        expect(await t.f.following.worker.sweep()).toBeGreaterThanOrEqual(1);
        expect(await t.f.following.index.tidsOf(['stuck'])).not.toEqual([null]);
        expect(await eventually(async () => (await timelineIds(t.f, t.app, 'reader_9')).includes('stuck'))).toBe(true);
      },
    );
  });
});
