/**
 * A following stream ends with its socket, in every interleaving (issue 21.2): 200 clients of one
 * reader open `GET /v1/feeds/following/stream` on a loopback port and drop the connection at random
 * points — with the request, while the handler reads the cursor, just after the head, after the first
 * frames — and then the server holds no stream, and the reader opens its full per-reader quota (one more
 * is refused with 429 / 42902). Before the fix, a socket closed while the handler awaited the cursor left
 * a session that never ended: its reader was locked out until a restart. On both store pairs.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prng } from '../../src/kernel/prng.js';
import { startTestApp, type TestApp, type TestAppOptions } from '../support/app.js';

const ABORTS = 200;
const PER_READER = 4;

/** Polls `check` until true (a deadline, no fixed sleep). */
async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Sends the stream request on a raw socket; resolves with the socket once connected and written. */
function openRaw(port: number, token: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => {
      s.write(
        `GET /v1/feeds/following/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`,
      );
      resolve(s);
    });
    s.on('error', reject);
  });
}

/** The status line of a stream request that stays open: resolves once the head arrived. */
function statusOf(s: Socket): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    s.on('data', (b: Buffer) => {
      text += b.toString();
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (m && text.includes('\r\n\r\n')) resolve(Number(m[1]));
    });
    s.on('error', reject);
  });
}

const PAIRS: [string, TestAppOptions][] = [
  ['the embedded default', { db: 'pglite', hot: 'memory' }],
  ['PostgreSQL + Redis', { db: 'postgres', hot: 'redis' }],
];

describe.each(PAIRS)('following streams end with their socket, on %s', (_name, opts) => {
  let t: TestApp;
  let port = 0;
  beforeAll(async () => {
    // 200 openings of one reader in seconds: its budget of the other routes (FRESHET_RATE_READER_OTHER)
    // would refuse most of them; the point here is what each leaves behind
    t = await startTestApp({
      ...opts,
      env: { FRESHET_STREAM_MAX_PER_READER: String(PER_READER), FRESHET_RATE_READER_OTHER: '0' },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const a = t.app.server.address();
    port = typeof a === 'object' && a ? a.port : 0;
  });
  afterAll(async () => t?.close());

  it(`${ABORTS} streams dropped at random points leave none behind; then the reader opens its full quota`, async () => {
    const token = await t.token('r1');
    const hub = t.f.following.stream;
    const rand = prng(21);
    // in waves of 20 at once, so the server is busy enough for closes to land inside the handler's awaits
    for (let wave = 0; wave < ABORTS / 20; wave++) {
      await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const s = await openRaw(port, token);
          const point = (wave * 20 + i) % 4;
          if (point === 0)
            s.destroy(); // with the request
          else if (point === 1) await new Promise((r) => setImmediate(r)).then(() => s.destroy());
          else if (point === 2) await new Promise((r) => setTimeout(r, Math.floor(rand() * 5))).then(() => s.destroy());
          else {
            await statusOf(s).catch(() => 0); // after the head (or a 429 while the quota is held)
            s.destroy();
          }
        }),
      );
    }
    await until(() => hub.size === 0, `every dropped stream ended (open: ${hub.size})`);
    expect(hub.openFor('r1')).toBe(0);

    const held: Socket[] = [];
    try {
      for (let i = 0; i < PER_READER; i++) {
        const s = await openRaw(port, token);
        held.push(s);
        expect(await statusOf(s), `stream ${i + 1} of ${PER_READER}`).toBe(200);
      }
      const extra = await openRaw(port, token);
      held.push(extra);
      expect(await statusOf(extra), 'one past the quota').toBe(429);
    } finally {
      for (const s of held) s.destroy();
    }
    await until(() => hub.size === 0, 'the held streams ended with their sockets');
  });
});
