/**
 * The HotCounters contract on the in-process adapter and on standalone Redis with 1 and 4 shards,
 * plus what only Redis has: note 2's key layout with 1 shard, one slot per view script.
 */
import { describe, expect, it } from 'vitest';
import { RedisHotCounters } from '../../src/hot/adapters/redis-hot-counters.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { deleteByPrefix, fileRedis } from '../support/redis.js';
import { adopt, memory, redisEngine } from '../support/contract.js';
import { memoryHotCounters, redisHotCounters, shardsLabel } from '../support/adapters.js';
import { RULES, T0, hotCountersContract } from '../contracts/hot-counters.contract.js';

const file = fileRedis();
const { redis, commands, nextPrefix } = file;
const engine = redisEngine(file);

adopt(hotCountersContract, memory, memoryHotCounters);
for (const shards of [1, 4])
  adopt(hotCountersContract, engine, redisHotCounters(shards), `redis, ${shardsLabel(shards)}`);

describe('Redis layout of the hot counters', () => {
  it("with 1 shard, the keys are note 2's under `<prefix>{hot}:`", async () => {
    const prefix = nextPrefix();
    const c = new RedisHotCounters(redis, new Keys(prefix), RULES);
    await c.register([{ itemId: '12345', publishedAtMs: T0 - 3_600_000 }]);
    await c.view({ itemId: '12345', visitorId: 'u_1', nowMs: T0 });
    const base = `${prefix}{hot}:`;
    expect(await redis.get(`${base}counter:views:12345`)).toBe('1');
    expect(await redis.pfcount(`${base}hll:uv:12345`)).toBe(1);
    expect(await redis.hget(`${base}meta:article:12345`, 'publishedAt')).toBe(String((T0 - 3_600_000) / 1000));
    const [member, score] = await redis.zrevrange(`${base}hot:score`, 0, -1, 'WITHSCORES');
    expect(member).toBe('12345');
    expect(Number(score)).toBeCloseTo((1 + 1.2) / 3 ** 1.5, 14);
    await deleteByPrefix(redis, prefix);
  });

  it('no item id can collide with a shard-wide key (ids hold no `:`)', async () => {
    const prefix = nextPrefix();
    const c = new RedisHotCounters(redis, new Keys(prefix), RULES);
    const odd = ['total', 'totals', 'dirty', 'epoch', 'restored', 'score', 'checkpoint'];
    await c.register(odd.map((itemId) => ({ itemId, publishedAtMs: T0 })));
    for (const itemId of odd) await c.view({ itemId, visitorId: 'bot', nowMs: T0, flagged: true });
    for (const itemId of odd) await c.view({ itemId, visitorId: 'v1', nowMs: T0 });
    expect(await c.suspiciousTotals()).toEqual({ repeat: 0, budget: 0, flagged: odd.length });
    expect((await c.counters(odd)).map((r) => [r.pv, r.suspicious.flagged])).toEqual(odd.map(() => [1, 1]));
    expect((await c.beginCheckpoint()).sort()).toEqual([...odd].sort());
    await deleteByPrefix(redis, prefix);
  });

  it('a view is one round trip, and every key it touches hashes to one slot', async () => {
    const prefix = nextPrefix();
    const keys = new Keys(prefix, 1, 8);
    const c = new RedisHotCounters(redis, keys, RULES);
    await c.register([{ itemId: 'it_1', publishedAtMs: T0 }]);
    await c.view({ itemId: 'it_1', visitorId: 'warm', nowMs: T0 }); // loads the script
    const before = commands();
    await c.view({ itemId: 'it_1', visitorId: 'u_1', nowMs: T0 });
    expect(commands() - before).toBe(1);
    const k = keys.hot(keys.hotShard('it_1'));
    const touched = [
      k.views('it_1'),
      k.uv('it_1'),
      k.score(),
      k.meta('it_1'),
      k.rateMark('it_1', 'u_1'),
      k.budget('u_1', 1),
      k.suspicious('it_1'),
      k.suspiciousTotal(),
      k.dirty(),
      k.inflight(),
      k.epoch(),
      k.restored(),
      k.uvRestore('it_1'),
    ];
    const slots = await Promise.all(touched.map((key) => redis.call('CLUSTER', 'KEYSLOT', key).catch(() => null)));
    if (slots.every((s) => s === null)) {
      // standalone without cluster support for KEYSLOT: check the hash tags instead
      expect(new Set(touched.map((key) => /\{[^}]*\}/.exec(key)?.[0])).size).toBe(1);
    } else expect(new Set(slots).size).toBe(1);
    const shardsUsed = new Set(Array.from({ length: 200 }, (_, i) => keys.hotShard(`item_${i}`)));
    expect(shardsUsed.size).toBe(8);
    await deleteByPrefix(redis, prefix);
  });
});
