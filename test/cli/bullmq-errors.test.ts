/**
 * BullMQ connection errors (issue 10.9): a fan-out queue whose Redis refuses connections logs one line
 * through the logger, rate-limited, and BullMQ prints no multi-line stacks to stderr.
 */
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BullFanoutQueue } from '../../src/following/adapters/bullmq-fanout-queue.js';

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

afterEach(() => vi.restoreAllMocks());

describe('fan-out queue on an unreachable Redis', () => {
  it('logs one line per interval through the logger, and nothing on stderr', async () => {
    const port = await closedPort();
    const stderr = vi.spyOn(console, 'error');
    const logged: { obj: object; msg: string }[] = [];
    const clients: Redis[] = [];
    let errors = 0;
    const queue = new BullFanoutQueue({
      connect: () => {
        const c = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: null, retryStrategy: () => 20 });
        c.on('error', () => errors++);
        clients.push(c);
        return c;
      },
      prefix: 'fst-unreachable',
      log: { warn: (obj, msg) => logged.push({ obj, msg }) },
    });
    const consumer = queue.consume(async () => undefined);
    await vi.waitFor(() => expect(errors).toBeGreaterThanOrEqual(6), { timeout: 10_000, interval: 20 });
    expect(logged).toHaveLength(1); // several refused reconnects, one line within BULL_ERROR_LOG_MS
    expect(logged[0]!.msg).toBe('fan-out queue: redis connection error (retrying)');
    expect(logged[0]!.obj).toMatchObject({ code: 'ECONNREFUSED' });
    expect(stderr).not.toHaveBeenCalled();
    await consumer.close(true);
    for (const c of clients) c.disconnect();
  });
});
