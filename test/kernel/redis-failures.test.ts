/**
 * Redis failures are classified at the adapter (src/kernel/redis/errors.ts), on real servers of the
 * test's own: a Redis out of memory, a read-only replica, a server busy in a script, one that is not
 * there or goes away all make the adapters throw STORE_UNAVAILABLE (HTTP 503, 50301) naming Redis,
 * while a bug of ours (WRONGTYPE on our own key) stays what it is (HTTP 500). Errors queued together
 * on a dead connection are wrapped one by one, never renamed (issue 10: `seenMark-2: feedReplace-1: …`).
 * Readiness (src/observe/store-health.ts) reports a Redis that answers PING but refuses writes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { FreshetError } from '../../src/kernel/errors.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { createRedis, type RedisClient } from '../../src/kernel/redis/client.js';
import { LuaScriptError, outageReason, redisCall, redisFailure, replyCode } from '../../src/kernel/redis/errors.js';
import { probeRedis } from '../../src/observe/store-health.js';
import { sizeWindow } from '../../src/seen/bloom.js';
import { RedisSeenFilter } from '../../src/seen/redis-seen-filter.js';
import { fixedLayout } from '../../src/seen/layout.js';
import { RedisFeedCache } from '../../src/for-you/adapters/redis-feed-cache.js';
import { RedisHotCounters } from '../../src/hot/adapters/redis-hot-counters.js';
import { RedisTimelineStore } from '../../src/following/adapters/redis-timeline-store.js';
import { DEFAULT_HOT_PARAMS } from '../../src/hot/domain.js';
import { DAY_MS } from '../../src/kernel/clock.js';
import { fileRedis } from '../support/redis.js';
import { fillUntilOom, freePort, startRedisServer, type RedisServer } from '../support/redis-server.js';

const NOW = Date.UTC(2026, 2, 6, 12);
const GEOMETRY = sizeWindow(1000, 0.01, 7);
const RULES = {
  params: DEFAULT_HOT_PARAMS,
  rateWindowMs: 600_000,
  visitorBudgetPerMinute: 60,
  retentionMs: 90 * DAY_MS,
  cap: 1000,
};

/** The adapters a request touches, on one client. */
function adapters(redis: RedisClient, prefix = 'fs:') {
  const keys = new Keys(prefix);
  return {
    keys,
    seen: new RedisSeenFilter(redis, keys, fixedLayout(GEOMETRY), { days: 7 }),
    cache: new RedisFeedCache(redis, keys),
    hot: new RedisHotCounters(redis, keys, RULES),
    timeline: new RedisTimelineStore(redis, keys),
  };
}

/** The error `p` rejects with (fails the test when it resolves). */
async function failure(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('expected a failure');
    },
    (err: unknown) => err as Error,
  );
}

function expectUnavailable(err: Error, reason: string): void {
  expect(err).toBeInstanceOf(FreshetError);
  expect(err).toMatchObject({
    name_: 'STORE_UNAVAILABLE',
    code: 50301,
    status: 503,
    message: `Redis unavailable: ${reason}`,
  });
}

const shared = fileRedis();

describe('a Redis out of memory (maxmemory reached under noeviction)', () => {
  let server: RedisServer;
  let redis: RedisClient;
  let a: ReturnType<typeof adapters>;
  beforeAll(async () => {
    server = await startRedisServer(['--maxmemory', '2mb', '--maxmemory-policy', 'noeviction']);
    redis = createRedis({ url: server.url });
    a = adapters(redis);
    await a.hot.register([{ itemId: 'i1', publishedAtMs: NOW - 3_600_000 }]);
    await a.cache.replace('r1', ['a', 'b', 'c'], 60_000);
    await fillUntilOom(server.url, 'junk:');
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it('answers writes — seen mark, view, refresh lease, outbox — with STORE_UNAVAILABLE naming Redis and OOM', async () => {
    expectUnavailable(await failure(a.seen.markSeen('r1', ['i1'], NOW)), 'out of memory (OOM)');
    expectUnavailable(await failure(a.hot.view({ itemId: 'i1', visitorId: 'v1', nowMs: NOW })), 'out of memory (OOM)');
    // (feedReplace-1 is let through: its first write is a DEL, and Redis never stops a script that
    // already wrote, so its RPUSH runs past the limit — Redis 7 scripting, "first write" rule)
    expectUnavailable(await failure(a.cache.acquireLease('r1', 'token', 5_000)), 'out of memory (OOM)');
    expectUnavailable(await failure(a.timeline.appendToOutbox('author1', 42, 100, 3_600_000)), 'out of memory (OOM)');
    const err = await failure(a.seen.markSeen('r1', ['i2'], NOW));
    // a mark's first write, on a day no process touched yet, records the day's layout (src/seen/day-layouts.ts)
    expect((err as FreshetError).details).toMatchObject({ store: 'redis', script: 'seenLayout-N' });
    expect((err.cause as Error).message).toMatch(/^OOM command not allowed/);
  });

  it('still serves reads', async () => {
    expect(await a.seen.seen('r1', ['i1'], NOW)).toEqual([false]);
    expect((await a.hot.counters(['i1']))[0]).toMatchObject({ itemId: 'i1', pv: 0 });
  });

  it('is not ready, although it answers PING; the shared Redis is', async () => {
    expect(await redis.ping()).toBe('PONG');
    expect(await probeRedis(redis, a.keys)).toEqual({ ready: false, reason: 'Redis unavailable: out of memory (OOM)' });
    expect(await probeRedis(shared.redis, new Keys(shared.nextPrefix()))).toEqual({ ready: true, reason: null });
  });
});

describe('a read-only replica, a server busy in a script', () => {
  let primary: RedisServer;
  let replica: RedisServer;
  beforeAll(async () => {
    primary = await startRedisServer();
    replica = await startRedisServer(['--replicaof', '127.0.0.1', String(primary.port)]);
  });
  afterAll(async () => {
    await replica?.stop();
    await primary?.stop();
  });

  it('a write to a replica is STORE_UNAVAILABLE (READONLY), and the replica is not ready', async () => {
    const redis = createRedis({ url: replica.url });
    try {
      const a = adapters(redis);
      expectUnavailable(await failure(a.cache.replace('r1', ['x'], 60_000)), 'a read-only replica answered (READONLY)');
      expectUnavailable(await failure(a.cache.drop('r1')), 'a read-only replica answered (READONLY)');
      expect((await probeRedis(redis, a.keys)).ready).toBe(false);
    } finally {
      redis.disconnect();
    }
  });

  it('a call while another script holds the server past busy-reply-threshold is STORE_UNAVAILABLE (BUSY)', async () => {
    const spinner = new Redis(primary.url);
    const redis = createRedis({ url: primary.url });
    try {
      await spinner.config('SET', 'busy-reply-threshold', '50');
      await redis.ping();
      // a script spinning for 1 s of server time (TIME is allowed in scripts since Redis 5)
      const spin = spinner.eval(
        "local t = redis.call('TIME'); local s = t[1] * 1e6 + t[2]; repeat t = redis.call('TIME') until t[1] * 1e6 + t[2] - s > 1e6; return 1",
        0,
      );
      const a = adapters(redis);
      let err: Error | undefined;
      // poll until the server answers BUSY (no fixed sleep: the spin lasts 1 s)
      for (let i = 0; i < 200 && !err; i++) {
        err = await a.cache.pop('r1', 1).then(
          () => undefined,
          (e: unknown) => e as Error,
        );
      }
      expect(err).toBeDefined();
      expectUnavailable(err!, 'busy running a script (BUSY)');
      expect(await spin).toBe(1);
    } finally {
      spinner.disconnect();
      redis.disconnect();
    }
  });
});

describe('a Redis that is not there, or goes away', () => {
  it('wraps the one error ioredis shares between queued commands in a new error per call, never renaming it', async () => {
    const port = await freePort(); // nothing listens there
    const redis = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, retryStrategy: () => 10 });
    redis.on('error', () => undefined);
    try {
      const a = adapters(redis);
      const errors = await Promise.all([
        failure(a.seen.markSeen('r1', ['i1'], NOW)),
        failure(a.cache.replace('r1', ['x'], 60_000)),
        failure(a.seen.markSeen('r2', ['i1'], NOW)),
        failure(a.cache.drop('r1')),
      ]);
      for (const err of errors) expectUnavailable(err, 'no connection (retries exhausted)');
      // ioredis rejected all four with ONE object; it is each error's cause, and untouched
      const causes = new Set(errors.map((e) => e.cause));
      expect(causes.size).toBe(1);
      const cause = [...causes][0] as Error;
      expect(cause.name).toBe('MaxRetriesPerRequestError');
      expect(cause.message).toMatch(/^Reached the max retries per request limit/);
      // a mark's first command on a day this process has not met reads or records the day's layout
      expect(errors.map((e) => (e as FreshetError).details)).toMatchObject([
        { script: 'seenLayout-N' },
        { script: 'feedReplace-1' },
        { script: 'seenLayout-N' },
        {},
      ]);
    } finally {
      redis.disconnect();
    }
  });

  it('a server that stops: the next call is STORE_UNAVAILABLE, not a hang or a 500', async () => {
    const server = await startRedisServer();
    const redis = createRedis({ url: server.url });
    redis.on('error', () => undefined);
    try {
      const a = adapters(redis);
      await a.cache.replace('r1', ['x'], 60_000);
      await server.stop();
      const err = await failure(a.cache.pop('r1', 1));
      expect(err).toBeInstanceOf(FreshetError);
      expect((err as FreshetError).name_).toBe('STORE_UNAVAILABLE');
      expect(err.message).toMatch(
        /^Redis unavailable: (connection refused|connection closed|no connection \(retries exhausted\))$/,
      );
      expect(await probeRedis(redis, a.keys, 500)).toMatchObject({ ready: false });
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });
});

describe('a bug of ours stays a bug (HTTP 500)', () => {
  it('WRONGTYPE on our own key: a script names itself (LuaScriptError), a plain command keeps its error', async () => {
    const prefix = shared.nextPrefix();
    const a = adapters(shared.redis, prefix);
    await shared.redis.set(a.keys.feedCache('r1'), 'not a list');
    const fromScript = await failure(a.cache.pop('r1', 1));
    expect(fromScript).toBeInstanceOf(LuaScriptError);
    expect(fromScript.message).toMatch(/^feedPop-1: WRONGTYPE/);
    const plain = await failure(redisCall(shared.redis.lpush(a.keys.feedCache('r1'), 'x')));
    expect(plain).not.toBeInstanceOf(FreshetError);
    expect(plain.message).toMatch(/^WRONGTYPE/);
  });

  it('reads the RESP error code, also inside Redis 6.2 script errors; passes typed errors through', () => {
    expect(replyCode("OOM command not allowed when used memory > 'maxmemory'. script: 3f…, on @user_script:12.")).toBe(
      'OOM',
    );
    expect(
      replyCode(
        "ERR Error running script (call to f_3f…): @user_script:12: @user_script: 12: -OOM command not allowed when used memory > 'maxmemory'.",
      ),
    ).toBe('OOM');
    expect(
      replyCode('ERR Error running script (call to f_3f…): @user_script:1: user_script:1: attempt to index global'),
    ).toBe('ERR');
    expect(outageReason({ name: 'ReplyError', message: 'LOADING Redis is loading the dataset in memory' })).toBe(
      'loading its dataset (LOADING)',
    );
    expect(outageReason({ name: 'ReplyError', message: 'CLUSTERDOWN The cluster is down' })).toBe(
      'the cluster is down (CLUSTERDOWN)',
    );
    expect(outageReason({ name: 'ReplyError', message: 'ERR max number of clients reached' })).toBe(
      'too many clients (maxclients)',
    );
    expect(outageReason({ name: 'ReplyError', message: 'BUSYKEY Target key name already exists.' })).toBeNull();
    expect(
      outageReason({
        name: 'ReplyError',
        message: 'WRONGTYPE Operation against a key holding the wrong kind of value',
      }),
    ).toBeNull();
    const typed = new LuaScriptError('x-1', 'boom');
    expect(redisFailure(typed, 'y-2')).toBe(typed);
  });
});
