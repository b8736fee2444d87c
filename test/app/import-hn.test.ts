/**
 * The HN importer: the row mapping on a small fixture written here, the whole real sample
 * (`<repo>/../shared/data/hn/…`, read in place, never copied), and `runImport` end to end into a
 * PGlite data folder (idempotent) and through a running server's `/v1/items` (chosen by server.json).
 */
import { createServer, type IncomingMessage } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureSecrets, loadConfig } from '../../src/compose/config.js';
import type { ItemInput } from '../../src/kernel/items/content-store.js';
import { parseHn, sanitizeAuthor, type SkippedRow } from '../../src/cli/import-hn.js';
import { liveServer, runImport } from '../../src/cli/import.js';
import { openPglite } from '../../src/kernel/sql/sql.js';
import { dataFile } from '../support/env.js';

const REAL_FILE = dataFile('hn/hn_posts_2015-09_to_2016-09_sample.csv.gz');
const HEADER = 'id,title,url,num_points,num_comments,author,created_at,created_at_unix';
const FIXTURE = [
  HEADER,
  '101,Plain post,https://www.example.com/a?b=1,34,23,mjn,2015-09-06T06:03:00,1441533780',
  '102,"Commas, ""quotes"", and more",http://blog.example.org/x,0,1,some.one-2,2015-09-06T07:25:00,1441538700',
  '103,Ask HN: How do you pass on your work?,,6,3,PascLeRasc,2016-09-26T01:17:00,1474867020',
  '104,Show HN: A thing,https://GitHub.com/u/r,12,2,bad user!name,2016-09-26T01:24:00,1474867440',
  '105,points are not a number,https://x.example,lots,1,a,2016-09-26T01:24:00,1474867440',
  '106,too few fields,https://x.example,1',
  '107,No author,not a url,3,1,,2016-09-26T01:24:00,1474867440',
  '101,duplicate of the first row,,1,1,a,2016-09-26T01:24:00,1474867440',
  '',
].join('\n');

const tmp = mkdtempSync(join(tmpdir(), 'freshet-import-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function writeFixture(name: string, text: string, gzip = true): string {
  const path = join(tmp, name);
  writeFileSync(path, gzip ? gzipSync(text) : text);
  return path;
}

async function parseAll(
  file: string,
  batchSize?: number,
): Promise<{ items: ItemInput[]; skipped: SkippedRow[]; batches: number }> {
  const items: ItemInput[] = [];
  const skipped: SkippedRow[] = [];
  let batches = 0;
  for await (const b of parseHn(file, { batchSize })) {
    items.push(...b.items);
    skipped.push(...b.skipped);
    batches++;
  }
  return { items, skipped, batches };
}

describe('parseHn on a fixture', () => {
  const file = writeFixture('fixture.csv.gz', FIXTURE);

  it('maps rows to items: ids, authors, urls, tags, times in ms, points', async () => {
    const { items } = await parseAll(file);
    expect(items.map((i) => i.id)).toEqual(['hn_101', 'hn_102', 'hn_103', 'hn_104', 'hn_107']);
    expect(items[0]).toEqual({
      id: 'hn_101',
      authorId: 'mjn',
      title: 'Plain post',
      text: '',
      url: 'https://www.example.com/a?b=1',
      tags: ['example.com'],
      publishedAt: 1441533780 * 1000,
      popularity: 34,
      lang: 'en',
    });
    expect(items[1]).toMatchObject({
      title: 'Commas, "quotes", and more',
      authorId: 'some.one-2',
      popularity: 0,
      lang: 'en',
      tags: ['blog.example.org'],
    });
    expect(items[2]).toMatchObject({ url: null, tags: ['ask'], publishedAt: 1474867020000 });
    expect(items[3]).toMatchObject({ authorId: 'bad_user_name', tags: ['show', 'github.com'] });
    expect(items[4]).toMatchObject({ authorId: 'hn_anon', url: null, tags: [] });
  });

  it('counts and explains invalid rows without stopping', async () => {
    const { skipped } = await parseAll(file);
    expect(skipped.map((s) => s.line)).toEqual([6, 7, 9]);
    expect(skipped[0]!.reason).toMatch(/num_points/);
    expect(skipped[1]!.reason).toMatch(/4 fields, expected 8/);
    expect(skipped[2]!.reason).toMatch(/duplicate id hn_101 \(first on line 2\)/);
  });

  it('refuses the rows the one item check refuses, with the reason it gives the library and the HTTP API', async () => {
    const header = 'id,title,url,num_points,num_comments,author,created_at,created_at_unix';
    const future = Math.floor(Date.now() / 1000) + 7 * 86_400;
    const rows = [
      `201,${'x'.repeat(1001)},,1,0,a,9/6/2015 10:03,1441533780`,
      `202,Long url,https://e.com/${'a'.repeat(2040)},1,0,a,9/6/2015 10:03,1441533780`,
      `203,From the future,,1,0,a,9/6/2015 10:03,${future}`,
      `204,Fine,,1,0,a,9/6/2015 10:03,1441533780`,
    ];
    const { items, skipped } = await parseAll(writeFixture('refused.csv.gz', `${[header, ...rows].join('\n')}\n`));
    expect(items.map((i) => i.id)).toEqual(['hn_204']);
    expect(skipped.map((s) => [s.line, s.reason.split(' ')[0]])).toEqual([
      [2, 'title'],
      [3, 'url'],
      [4, 'publishedAt'],
    ]);
    expect(skipped[0]!.reason).toMatch(/^title must be at most 1000 characters/);
  });

  it('yields batches of the asked size and reads plain CSV too', async () => {
    const { items, batches } = await parseAll(file, 2);
    expect(items).toHaveLength(5);
    expect(batches).toBe(3);
    const plain = await parseAll(writeFixture('fixture.csv', FIXTURE, false));
    expect(plain.items).toEqual(items);
  });

  it('rejects a file whose header lacks a needed column, or that is not gzip', async () => {
    await expect(parseAll(writeFixture('bad-header.csv.gz', 'id,title\n1,x\n'))).rejects.toThrow(/header lacks url/);
    await expect(parseAll(writeFixture('not-gzip.csv.gz', FIXTURE, false))).rejects.toThrow();
  });

  it('sanitizes author names to the id pattern', () => {
    expect(sanitizeAuthor('  ')).toBe('hn_anon');
    expect(sanitizeAuthor('jörg:{x}')).toBe('j_rg__x_');
    expect(sanitizeAuthor('a'.repeat(80))).toHaveLength(64);
  });
});

describe('parseHn on the real HN sample', () => {
  it('reads 20,100 posts with unique ids, all published 2015-09-06..2016-09-27', async () => {
    const { items, skipped } = await parseAll(REAL_FILE);
    expect(skipped).toEqual([]);
    expect(items).toHaveLength(20_100);
    expect(new Set(items.map((i) => i.id)).size).toBe(20_100);
    const from = Date.UTC(2015, 8, 6);
    const to = Date.UTC(2016, 8, 27);
    expect(items.every((i) => i.publishedAt >= from && i.publishedAt < to)).toBe(true);
    expect(items.filter((i) => i.url === null)).toHaveLength(2_440);
    expect(items.filter((i) => i.tags.includes('ask'))).toHaveLength(1_744);
    expect(items.filter((i) => i.tags.includes('show'))).toHaveLength(1_162);
  });
});

describe('runImport', () => {
  const fixture = writeFixture('run.csv.gz', FIXTURE);

  it('writes directly into a PGlite data folder, idempotently', async () => {
    const dataDir = join(tmp, 'direct');
    const config = loadConfig({ FRESHET_DATA_DIR: dataDir });
    const lines: string[] = [];
    const opts = { progress: false, out: (l: string) => lines.push(l), warn: () => {} };
    const first = await runImport('hn', fixture, config, opts);
    expect(first).toMatchObject({ items: 5, inserted: 5, updated: 0, skipped: 3 });
    expect(first.target).toBe(`PGlite ${join(dataDir, 'pgdata')}`);
    const second = await runImport('hn', fixture, config, opts);
    expect(second).toMatchObject({ items: 5, inserted: 0, updated: 5, skipped: 3 });
    expect(lines[1]).toMatch(/^imported 5 items from hn \(0 inserted, 5 updated, 3 skipped\) in \d+\.\ds into PGlite /);
    // text embeddings written with the items (discover feed), current for their last write
    const sql = await openPglite(join(dataDir, 'pgdata'));
    try {
      expect(
        await sql.query(
          `SELECT count(*)::int AS n FROM item_embeddings e JOIN items i ON i.id = e.item_id AND e.update_time = i.update_time`,
        ),
      ).toEqual([{ n: 5 }]);
    } finally {
      await sql.close();
    }
  });

  /** A stand-in for a Freshet server that accepts `key`: /healthz, the key probe and POST /v1/items. */
  async function fakeServer(key: string) {
    const received: { auth: string | undefined; body: Record<string, unknown>[] }[] = [];
    const server = createServer((req: IncomingMessage, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        const authorized = req.headers.authorization === `Bearer ${key}`;
        if (req.url === '/healthz')
          return void res.end(JSON.stringify({ code: 0, msg: 'success', data: { status: 'ok' } }));
        if (!authorized)
          return void res.writeHead(401).end(JSON.stringify({ code: 40101, msg: 'unauthenticated', data: null }));
        if (req.method === 'GET')
          return void res.writeHead(404).end(JSON.stringify({ code: 40401, msg: 'no item', data: null }));
        const body = JSON.parse(text) as Record<string, unknown>[];
        received.push({ auth: req.headers.authorization, body });
        res.end(JSON.stringify({ code: 0, msg: 'success', data: { inserted: body.length, updated: 0 } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    return { received, port, close: () => new Promise((resolve) => server.close(resolve)) };
  }

  it('posts batches to the running server named by server.json, with the service key', async () => {
    const dataDir = join(tmp, 'http');
    const config = ensureSecrets(loadConfig({ FRESHET_DATA_DIR: dataDir })).config;
    const { received, port, close } = await fakeServer(config.serviceKey!);
    try {
      writeFileSync(join(dataDir, 'server.json'), JSON.stringify({ pid: process.pid, host: '127.0.0.1', port }));
      expect(liveServer(dataDir)).toEqual({ pid: process.pid, host: '127.0.0.1', port });
      const summary = await runImport('hn', fixture, config, {
        progress: false,
        batchSize: 3,
        out: () => {},
        warn: () => {},
      });
      expect(summary).toMatchObject({
        items: 5,
        inserted: 5,
        target: `http://127.0.0.1:${port} (running server, found by ${join(dataDir, 'server.json')} (pid ${process.pid}))`,
      });
      expect(received.map((r) => r.body.length)).toEqual([3, 2]);
      expect(received.every((r) => r.auth === `Bearer ${config.serviceKey}`)).toBe(true);
      expect(received[0]!.body[0]).toEqual({
        id: 'hn_101',
        author_id: 'mjn',
        title: 'Plain post',
        text: '',
        url: 'https://www.example.com/a?b=1',
        tags: ['example.com'],
        published_at: 1441533780,
        popularity: 34,
        lang: 'en',
      });
    } finally {
      await close();
    }
  });

  it('says the service key does not match, and which variable sets it, when --url names a server with another key', async () => {
    const config = ensureSecrets(loadConfig({ FRESHET_DATA_DIR: join(tmp, 'otherkey') })).config;
    const { received, port, close } = await fakeServer('another-key-of-20-chars');
    try {
      const run = runImport('hn', fixture, config, {
        url: `http://127.0.0.1:${port}`,
        progress: false,
        out: () => {},
        warn: () => {},
      });
      await expect(run).rejects.toThrow(
        /does not accept this command's service key \(401\).*secrets\.json.*Set FRESHET_SERVICE_KEY/,
      );
      expect(received).toEqual([]);
    } finally {
      await close();
    }
  });

  it('a truncated gzip names the file and line, says exactly what was committed and that a re-run resumes', async () => {
    const full = readFileSync(REAL_FILE);
    const truncated = join(tmp, 'hn_truncated.csv.gz');
    writeFileSync(truncated, full.subarray(0, Math.floor(full.length * 0.4)));
    const config = ensureSecrets(loadConfig({ FRESHET_DATA_DIR: join(tmp, 'truncated') })).config;
    const { received, port, close } = await fakeServer(config.serviceKey!);
    try {
      let message = '';
      await runImport('hn', truncated, config, {
        url: `http://127.0.0.1:${port}`,
        batchSize: 1000,
        progress: false,
        out: () => {},
        warn: () => {},
      }).catch((err: Error) => (message = err.message));
      const m =
        /^import stopped: (\S+): the gzip data ends early \(the file is truncated or still being written\) after line (\d+)\. committed before it: (\d+) items of lines 2–(\d+) .*; nothing after line \4\. The import is idempotent \(upsert by id\): .*run the same command again/.exec(
          message,
        );
      expect(m, message).not.toBeNull();
      const [, file, readLine, committed, committedLine] = m!;
      expect(file).toBe(truncated);
      const sent = received.reduce((n, r) => n + r.body.length, 0);
      expect(Number(committed)).toBe(sent); // exactly what the server acknowledged
      expect(sent).toBeGreaterThan(0);
      expect(sent % 1000).toBe(0); // whole batches only: the rows read after the last batch were not sent
      expect(Number(committedLine)).toBeLessThanOrEqual(Number(readLine));
      // the real sample has one row per line and no skipped rows: lines 2..L are exactly the committed items
      expect(Number(committedLine) - 1).toBe(sent);
    } finally {
      await close();
    }
  });

  it('ignores a server.json whose process is gone', () => {
    const dataDir = join(tmp, 'stale');
    const config = ensureSecrets(loadConfig({ FRESHET_DATA_DIR: dataDir })).config;
    writeFileSync(
      join(config.dataDir, 'server.json'),
      JSON.stringify({ pid: 2 ** 22 + 12345, host: '127.0.0.1', port: 9 }),
    );
    expect(liveServer(dataDir)).toBeNull();
  });

  it('rejects an unknown format', async () => {
    await expect(runImport('nope', fixture, loadConfig({ FRESHET_DATA_DIR: join(tmp, 'x') }))).rejects.toThrow(
      /unknown import format "nope"/,
    );
  });
});
