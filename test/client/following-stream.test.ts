/**
 * `GET /v1/feeds/following/stream` (Server-Sent Events) on a loopback port, read with the client's
 * `following.stream()`: a published item reaches a connected follower within 1 s (a deadline, not a
 * sleep); heartbeats keep a silent stream on one connection past the client's idle timeout; the raw
 * `?since_id=` query starts after that id (and `Last-Event-ID` wins over it); a reconnect with `Last-Event-ID` — by hand or the client's own after the server ends the
 * connection — misses nothing and repeats nothing; a non-follower and a reader who blocked the author
 * get nothing of it; auth answers as the timeline's; the per-reader and per-process limits answer
 * 429 / 42902; a consumer that stops reading is dropped. On both store pairs; and across two server
 * processes' worth of Freshet on one Redis + PostgreSQL (the worker in one, the stream in the other).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  FreshetClient,
  type FreshetClientError,
  parseSse,
  type SseMessage,
  type StreamEvent,
} from '../../src/client/index.js';
import { loadConfig } from '../../src/compose/config.js';
import { openFreshet, type Freshet } from '../../src/compose/open.js';
import { ManualClock } from '../../src/kernel/clock.js';
import { openPostgres } from '../../src/kernel/sql/sql.js';
import { SERVICE_KEY, T0, startTestApp, type TestApp } from '../support/app.js';
import { TEST_DATABASE_URL } from '../support/env.js';
import { withWorker } from '../support/following.js';

const ENV = {
  FRESHET_STREAM_HEARTBEAT_S: '0.2',
  FRESHET_STREAM_MAX_PER_READER: '2',
  FRESHET_STREAM_MAX_CONNECTIONS: '6',
  FRESHET_STREAM_DRAIN_TIMEOUT_S: '0.5',
  FRESHET_STREAM_REPLAY_MAX: '20',
};

async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const a = t.app.server.address();
  return `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
}

/** Rejects when `p` does not settle within `ms`. */
function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    p,
    new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms)),
    ),
  ]).finally(() => clearTimeout(timer));
}

/** Polls `check` until true (a deadline, no fixed sleep). */
async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** An open stream (connecting at once: an async generator starts at its first `next()`): `next()` the next event within a deadline, `close()` aborts it. */
function open(client: FreshetClient, opts: { sinceId?: string; idleTimeoutMs?: number } = {}) {
  const ctl = new AbortController();
  const it = client.following.stream({ ...opts, signal: ctl.signal })[Symbol.asyncIterator]();
  const ahead = () => {
    const p = it.next();
    p.catch(() => {}); // an abort at close() rejects the read ahead
    return p;
  };
  let pending = ahead();
  return {
    next: async (ms = 5_000): Promise<StreamEvent> => {
      const r = await within(ms, pending, 'stream event');
      if (r.done) throw new Error('stream ended');
      pending = ahead();
      return r.value;
    },
    close: () => ctl.abort(),
  };
}

const ids = (events: StreamEvent[]) =>
  events.map((e) =>
    e.type === 'item' ? e.item.id : e.type === 'reset' ? `reset:${e.timeline_id}` : `notifications:${e.unread_count}`,
  );

describe.each([
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis (pub/sub)', hot: 'redis', db: 'postgres' },
] as const)('following stream on $name', ({ hot, db }) => {
  let t: TestApp;
  let url: string;
  let svc: FreshetClient;
  let n = 0;
  /** Publishes `count` items by `author` now (virtual) in one request, returning their ids. */
  const publishMany = async (author: string, count: number, extra: { text?: string } = {}): Promise<string[]> => {
    const batch = Array.from({ length: count }, () => `${author}_${++n}`);
    await svc.items.publish(
      batch.map((id) => ({
        id,
        author_id: author,
        title: id,
        published_at: Math.floor(t.clock.now() / 1000),
        ...extra,
      })),
    );
    return batch;
  };
  /** Publishes one item by `author`, returning its id. */
  const publish = async (author: string): Promise<string> => (await publishMany(author, 1))[0]!;
  const reader = async (id: string) =>
    new FreshetClient({ baseUrl: url, token: await t.token(id), retry: { attempts: 1 } });

  beforeAll(async () => {
    t = withWorker(await startTestApp({ hot, db, env: ENV }));
    url = await listen(t);
    svc = new FreshetClient({ baseUrl: url, serviceKey: SERVICE_KEY, now: () => t.clock.now() });
    for (const u of ['au', 'mk', 'big', 'r', 'nf', 'bl', 'slow']) await svc.users.register(u);
    for (const [u, a] of [
      ['r', 'au'],
      ['bl', 'au'],
      ['nf', 'mk'],
      ['bl', 'mk'],
      ['slow', 'big'],
    ] as const)
      await svc.follows.follow(u, a);
    await svc.blocks.block('bl', 'au');
  });
  afterAll(async () => t?.close());
  // a stream closed by the client ends on the server a moment later: start each test from none open, so
  // "open" below means this test's stream
  beforeEach(() => until(() => t.f.following.stream.size === 0, 'earlier streams closed'));

  it("announces a change of the reader's notifications on its open stream: the unread count and the newest group", async () => {
    const client = await reader('mk');
    const stream = open(client);
    try {
      await until(() => t.f.following.stream.openFor('mk') === 1, 'stream open');
      const liked = await publish('mk');
      await svc.as('nf').engagements.record({ item_id: liked, kind: 'like' });
      let ev = await stream.next();
      while (ev.type !== 'notifications') ev = await stream.next(); // mk's own new item may come first
      expect(ev.latest).toMatchObject({ type: 'like', item_id: liked, actors: ['nf'], actor_count: 1, read: false });
      expect(ev.unread_count).toBe((await svc.as('mk').notifications.page()).unread_count);
    } finally {
      stream.close();
    }
  });

  it('delivers a published item to a connected follower within 1 s', async () => {
    const s = open(await reader('r'));
    try {
      await until(() => t.f.following.stream.openFor('r') === 1, 'stream open');
      const id = await publish('au');
      const started = Date.now(); // from the publish's answer: delivery is fan-out + signal + the stream's read
      const ev = await s.next(1_000);
      expect(ev).toMatchObject({ type: 'item', item: { id, author_id: 'au' } });
      expect(Date.now() - started).toBeLessThan(1_000);
      if (ev.type === 'item') expect(ev.timeline_id).toBe(ev.item.timeline_id);
    } finally {
      s.close();
    }
  });

  it("heartbeats keep a silent stream on one connection past the client's idle timeout", async () => {
    // what the client's fetch sees: connections to the stream, and `: heartbeat` comments on them
    let connects = 0;
    let beats = 0;
    const counting: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input).includes('/v1/feeds/following/stream') || !res.body) return res;
      connects++;
      const decoder = new TextDecoder();
      const counted = res.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, out) {
            beats += (decoder.decode(chunk, { stream: true }).match(/^: heartbeat$/gm) ?? []).length;
            out.enqueue(chunk);
          },
        }),
      );
      return new Response(counted, { status: res.status, headers: res.headers });
    };
    const client = new FreshetClient({
      baseUrl: url,
      token: await t.token('r'),
      retry: { attempts: 1 },
      fetch: counting,
    });
    const s = open(client, { idleTimeoutMs: 600 });
    try {
      // FRESHET_STREAM_HEARTBEAT_S = 0.2: five heartbeats span more than the 0.6 s idle timeout
      await until(() => beats >= 5, 'five heartbeats');
      expect(connects).toBe(1);
      expect(t.f.following.stream.openFor('r')).toBe(1);
      const id = await publish('au');
      expect(ids([await s.next()])).toEqual([id]);
      expect(connects).toBe(1);
    } finally {
      s.close();
    }
  });

  it('the raw ?since_id= query starts the stream after that timeline id; Last-Event-ID wins over it', async () => {
    const published = [await publish('au'), await publish('au'), await publish('au')];
    await t.f.following.queue.idle(20_000);
    const top = (await svc.as('r').following.page({ limit: 3 })).items;
    expect(top.map((i) => i.id)).toEqual([...published].reverse());
    const tid = (id: string) => top.find((i) => i.id === id)!.timeline_id;
    const token = await t.token('r');
    /** The first `n` messages of a stream opened with `fetch` (not the client, which sends only Last-Event-ID). */
    const read = async (query: string, headers: Record<string, string>, n: number): Promise<SseMessage[]> => {
      const ctl = new AbortController();
      const got: SseMessage[] = [];
      try {
        const res = await fetch(`${url}/v1/feeds/following/stream${query}`, {
          headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers },
          signal: ctl.signal,
        });
        expect([res.status, res.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
        for await (const m of parseSse(res.body!)) if (got.push(m) === n) break;
      } finally {
        ctl.abort();
      }
      return got;
    };
    const entries = (ms: SseMessage[]) =>
      ms.map((m) => [m.event, m.id, (JSON.parse(m.data) as { item: { id: string } }).item.id]);
    const [a, b, c] = published as [string, string, string];
    expect(entries(await within(5_000, read(`?since_id=${tid(a)}`, {}, 2), 'since_id'))).toEqual([
      ['item', tid(b), b],
      ['item', tid(c), c],
    ]);
    expect(
      entries(await within(5_000, read(`?since_id=${tid(a)}`, { 'last-event-id': tid(b) }, 1), 'Last-Event-ID')),
    ).toEqual([['item', tid(c), c]]);
  });

  it('a reconnect with Last-Event-ID gets what was missed, in order, then live entries — no gap, no repeat', async () => {
    const client = await reader('r');
    const first = open(client);
    await until(() => t.f.following.stream.openFor('r') === 1, 'stream open');
    const a = await publish('au');
    const got = await first.next();
    first.close();
    await until(() => t.f.following.stream.openFor('r') === 0, 'stream closed');
    const missed = [await publish('au'), await publish('au')];
    await t.f.following.queue.idle(20_000);
    const again = open(client, { sinceId: got.type === 'item' ? got.timeline_id : undefined });
    try {
      expect(ids([got])).toEqual([a]);
      expect(ids([await again.next(), await again.next()])).toEqual(missed);
      const live = await publish('au');
      expect(ids([await again.next()])).toEqual([live]);
    } finally {
      again.close();
    }
  });

  it('a reconnect that missed more than FRESHET_STREAM_REPLAY_MAX entries gets a reset to the newest, then live entries', async () => {
    const missed = await publishMany('au', 21);
    await t.f.following.queue.idle(20_000);
    const newest = (await svc.as('r').following.page({ limit: 1 })).items[0]!;
    expect(missed).toContain(newest.id); // within one batch, tids follow published_at, then id
    const s = open(await reader('r'), { sinceId: '1' });
    try {
      expect(await s.next()).toEqual({ type: 'reset', timeline_id: newest.timeline_id });
      const live = await publish('au');
      expect(ids([await s.next()])).toEqual([live]);
    } finally {
      s.close();
    }
  });

  it('the client reconnects by itself when the server ends the stream, resuming after the last id', async () => {
    const s = open(await reader('r'));
    try {
      await until(() => t.f.following.stream.openFor('r') === 1, 'stream open');
      const a = await publish('au');
      expect(ids([await s.next()])).toEqual([a]);
      await t.f.following.stream.close(); // as a server shutting down: every session ends
      const b = await publish('au');
      const c = await publish('au');
      expect(ids([await s.next(), await s.next()])).toEqual([b, c]);
    } finally {
      s.close();
    }
  });

  it('a non-follower and a reader who blocked the author get nothing of it', async () => {
    const nf = open(await reader('nf'));
    const bl = open(await reader('bl'));
    try {
      await until(
        () => t.f.following.stream.openFor('nf') === 1 && t.f.following.stream.openFor('bl') === 1,
        'streams open',
      );
      await publish('au');
      const marker = await publish('mk'); // published after: entries come oldest first, so au's would come before it
      expect(ids([await nf.next()])).toEqual([marker]);
      expect(ids([await bl.next()])).toEqual([marker]);
    } finally {
      nf.close();
      bl.close();
    }
  });

  it('answers as the timeline does before streaming: 401, 403, 400', async () => {
    const raw = (headers: Record<string, string>, query = '') =>
      fetch(`${url}/v1/feeds/following/stream${query}`, { headers });
    const codes = async (res: Response) => [res.status, ((await res.json()) as { code: number }).code];
    expect(await codes(await raw({}))).toEqual([401, 40101]);
    expect(await codes(await raw({ authorization: `Bearer ${await t.token('r')}`, 'x-freshet-reader': 'nf' }))).toEqual(
      [403, 40301],
    );
    expect(await codes(await raw({ authorization: `Bearer ${SERVICE_KEY}` }))).toEqual([400, 40001]);
    expect(
      await codes(await raw({ authorization: `Bearer ${SERVICE_KEY}`, 'x-freshet-reader': 'r' }, '?since_id=x')),
    ).toEqual([400, 40001]);
  });

  it('limits open streams per reader and per process (429 / 42902)', async () => {
    const streams = [open(await reader('r')), open(await reader('r'))];
    try {
      await until(() => t.f.following.stream.openFor('r') === 2, 'two streams open');
      const third = (await reader('r')).following.stream()[Symbol.asyncIterator]();
      const err = await third.next().catch((e: unknown) => e as FreshetClientError);
      expect(err).toMatchObject({ status: 429, code: 42902 });
      for (const u of ['nf', 'bl', 'au', 'mk']) streams.push(open(await reader(u)));
      await until(() => t.f.following.stream.size === 6, 'six streams open');
      const seventh = await (await reader('slow')).following
        .stream()
        [Symbol.asyncIterator]()
        .next()
        .catch((e: unknown) => e as FreshetClientError);
      expect(seventh).toMatchObject({
        status: 429,
        code: 42902,
        msg: expect.stringContaining('FRESHET_STREAM_MAX_CONNECTIONS'),
      });
    } finally {
      streams.forEach((s) => s.close());
    }
  });

  it('drops a consumer that stops reading instead of buffering for it', async () => {
    const port = new URL(url).port;
    const socket = connect(Number(port), '127.0.0.1');
    const token = await t.token('slow');
    socket.write(
      `GET /v1/feeds/following/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`,
    );
    socket.pause(); // never read: the server's writes back up
    try {
      await until(() => t.f.following.stream.openFor('slow') === 1, 'slow stream open');
      const droppedBefore = t.f.following.stream.ended.slow;
      const text = 'x'.repeat(100_000);
      // batches of 5 (under the replay bound of 20, so each catch-up writes items, not a reset) of ~100 KB items
      for (let batch = 0; batch < 40 && t.f.following.stream.ended.slow === droppedBefore; batch++) {
        await publishMany('big', 5, { text });
        await t.f.following.queue.idle(20_000);
      }
      await until(() => t.f.following.stream.ended.slow > droppedBefore, 'slow consumer dropped', 15_000);
      expect(t.f.following.stream.openFor('slow')).toBe(0);
      expect(await t.f.metrics.registry.getSingleMetricAsString('freshet_stream_ended_total')).toMatch(
        /freshet_stream_ended_total\{reason="slow"\} [1-9]/,
      );
    } finally {
      socket.destroy();
    }
  });
});

describe('two Freshet processes on one Redis + PostgreSQL: the worker in one, the stream in the other', () => {
  let t: TestApp;
  let other: Freshet;
  let url: string;
  const otherDataDir = mkdtempSync(join(tmpdir(), 'freshet-other-'));
  beforeAll(async () => {
    t = await startTestApp({ hot: 'redis', db: 'postgres', env: ENV }); // runs no fan-out worker
    url = await listen(t);
    const sql = await openPostgres(TEST_DATABASE_URL, { schema: t.schema! });
    other = await openFreshet(
      loadConfig({
        ...ENV,
        LOG_LEVEL: 'silent',
        FRESHET_DATA_DIR: otherDataDir,
        FRESHET_SERVICE_KEY: SERVICE_KEY,
        FRESHET_SECRET: 'test-secret-0123456789abcdef',
        FRESHET_KEY_PREFIX: t.config.keyPrefix,
        FRESHET_REDIS_URL: t.config.redisUrl!,
      }),
      { clock: new ManualClock(T0), sql, defaultMetrics: false },
    );
    other.following.startWorker(1);
  });
  afterAll(async () => {
    await other?.close();
    await t?.close();
    rmSync(otherDataDir, { recursive: true, force: true });
  });

  it('an item published and fanned out by the other process reaches the stream within 1 s', async () => {
    await other.following.graph.ensureUsers(['x_reader', 'x_author'], T0);
    await other.following.timeline.follow('x_reader', 'x_author', T0);
    const s = open(new FreshetClient({ baseUrl: url, token: await t.token('x_reader') }));
    try {
      await until(() => t.f.following.stream.openFor('x_reader') === 1, 'stream open');
      await other.useCases.publishItems(
        [
          {
            id: 'x1',
            authorId: 'x_author',
            title: 'x1',
            text: '',
            url: null,
            tags: [],
            publishedAt: T0,
            popularity: 0,
          },
        ],
        T0,
      );
      const started = Date.now();
      expect(ids([await s.next(1_000)])).toEqual(['x1']);
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      s.close();
    }
  });
});
