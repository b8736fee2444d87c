/**
 * The hot counters (docs/hot.md) on Redis (standalone or Cluster): per shard, the hot-ranking design's keys
 * (`counter:views:<id>`, `hll:uv:<id>`, `hot:score`, `meta:article:<id>`) plus rate-limit marks,
 * per-minute budgets, suspicious counters and checkpoint marks, all under the shard's hash tag
 * (`keys.hot(shard)`, e.g. `fs:{hot}:hot:score`). An item's shard is MurmurHash3(id) mod shards.
 *
 * Round trips: `view` is ONE `EVALSHA` (lua/hotView-9.lua, atomic). Batch operations group ids by shard and
 * send one script per shard and chunk; `top` reads each shard's ZSET and merges. Time is the caller's
 * `nowMs` (virtual time works).
 */
import { randomUUID } from 'node:crypto';
import { assertId } from '../../kernel/ids.js';
import { budgetMinute, noSuspicious, type SuspiciousCounts, type ViewVerdict } from '../domain.js';
import type {
  CounterSnapshot,
  HotCounters,
  HotRules,
  ItemCounters,
  RankedEntry,
  RescoreResult,
  ViewInput,
  ViewResult,
} from '../hot-counters.js';
import { byRank } from '../hot-counters.js';
import { Keys, type HotShardKeys } from '../../kernel/redis/keys.js';
import { deleteMatching, type RedisClient } from '../../kernel/redis/client.js';
import { redisCall } from '../../kernel/redis/errors.js';
import { LuaScripts, type ScriptArg } from '../../kernel/redis/lua.js';

/** The hot ranking's scripts (src/hot/lua/; the hot-ranking design's score is lua/includes/hot-score.lua, once). */
export const HOT_SCRIPTS = new LuaScripts(new URL('../lua/', import.meta.url), [
  'hotView-9',
  'hotRescore-1+3N',
  'hotCounters-1+4N',
  'hotSnapshot-1+4N',
  'hotBeginCheckpoint-2',
  'hotRegister-N',
  'hotForget-1+4N',
  'hotRestore-5+5N',
  'hotSeal-2',
]);

/** hotView-9's verdict codes (its header lists the same). */
export const VIEW_CODES: ReadonlyMap<number, ViewVerdict> = new Map([
  [1, 'counted'],
  [2, 'repeat'],
  [3, 'budget'],
  [4, 'flagged'],
  [5, 'expired'],
  [-1, 'unknown'],
]);

/** Items per script call in batch operations (keeps each call well under a millisecond of Redis time). */
const CHUNK = 200;

/** {@link HotCounters} over Redis. Does not own the client: `close()` leaves it open. */
export class RedisHotCounters implements HotCounters {
  readonly shards: number;
  private readonly shardKeys: HotShardKeys[];
  private readonly scoreArgs: string[];
  private readonly lua;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly rules: HotRules,
  ) {
    this.shards = keys.hotShards;
    this.shardKeys = Array.from({ length: this.shards }, (_, s) => keys.hot(s));
    const p = rules.params;
    this.scoreArgs = [p.alpha, p.beta, p.base, p.gamma].map(String);
    this.lua = HOT_SCRIPTS.on(redis);
  }

  async forgetVisitor(visitorId: string): Promise<number> {
    assertId(visitorId, 'visitor id');
    const p = this.keys.prefix;
    // ids hold no glob character ([A-Za-z0-9_.-]), so the patterns match exactly these families
    const marks = await redisCall(deleteMatching(this.redis, `${p}{*}:ratelimit:*:${visitorId}`));
    const budgets = await redisCall(deleteMatching(this.redis, `${p}{*}:budget:${visitorId}:*`));
    return marks + budgets;
  }

  shardOf(itemId: string): number {
    return this.keys.hotShard(assertId(itemId, 'item id'));
  }

  async register(
    items: readonly { itemId: string; publishedAtMs: number }[],
    opts: { onlyExisting?: boolean } = {},
  ): Promise<void> {
    const byId = new Map(items.map((it) => [assertId(it.itemId, 'item id'), Math.floor(it.publishedAtMs / 1000)]));
    await this.eachShardChunk([...byId.keys()], (k, ids) =>
      this.lua.hotRegister(
        ids.map((id) => k.meta(id)),
        [opts.onlyExisting ? '1' : '0', ...ids.map((id) => byId.get(id)!)],
      ),
    );
  }

  /** One EVALSHA (hotView-9). @throws FreshetError `INVALID_ID`; Redis errors propagate. */
  async view(v: ViewInput): Promise<ViewResult> {
    const id = assertId(v.itemId, 'item id');
    const visitor = assertId(v.visitorId, 'visitor id');
    const k = this.shardKeys[this.keys.hotShard(id)]!;
    const r = this.rules;
    const reply = (await this.lua.hotView(
      [
        k.views(id),
        k.uv(id),
        k.score(),
        k.meta(id),
        k.rateMark(id, visitor),
        k.budget(visitor, budgetMinute(v.nowMs)),
        k.suspicious(id),
        k.suspiciousTotal(),
        k.dirty(),
      ],
      [
        id,
        visitor,
        v.nowMs,
        ...this.scoreArgs,
        r.rateWindowMs,
        r.visitorBudgetPerMinute,
        v.flagged ? '1' : '0',
        r.retentionMs,
      ],
    )) as [number, number, number, string];
    const verdict = HOT_SCRIPTS.decode('hotView', reply[0], VIEW_CODES);
    return { verdict, pv: reply[1], uv: reply[2], score: Number(reply[3]) };
  }

  /** The shards' tops read at once (one pipeline, or each master in parallel on a Cluster), merged. */
  async top(n: number): Promise<RankedEntry[]> {
    if (n <= 0) return [];
    const tops = await Promise.all(
      this.shardKeys.map((k) => redisCall(this.redis.zrevrange(k.score(), 0, n - 1, 'WITHSCORES'))),
    );
    const all: RankedEntry[] = [];
    for (const flat of tops)
      for (let i = 0; i < flat.length; i += 2) all.push({ itemId: flat[i]!, score: Number(flat[i + 1]) });
    if (this.shards > 1) all.sort(byRank);
    return all.slice(0, n);
  }

  async counters(itemIds: readonly string[]): Promise<ItemCounters[]> {
    const out = new Map<string, ItemCounters>();
    await this.eachShardChunk(
      itemIds.map((id) => assertId(id, 'item id')),
      async (k, ids) => {
        const flat = (await this.lua.hotCounters([k.score(), ...ids.flatMap((id) => itemKeys(k, id))], ids)) as (
          | number
          | string
        )[];
        ids.forEach((itemId, i) => {
          const [pub, pv, uv, score, repeat, budget, flagged] = flat.slice(7 * i, 7 * i + 7) as [
            number,
            number,
            number,
            string,
            number,
            number,
            number,
          ];
          out.set(itemId, {
            itemId,
            publishedAtMs: pub < 0 ? null : pub * 1000,
            pv,
            uv,
            score: score === '' ? null : Number(score),
            suspicious: { repeat, budget, flagged },
          });
        });
      },
    );
    return itemIds.map((id) => out.get(id)!);
  }

  /** Every shard at once (each one's chunks in order), summed. */
  async rescore(nowMs: number): Promise<RescoreResult> {
    const parts = await Promise.all(this.shardKeys.map((k) => this.rescoreShard(k, nowMs)));
    return parts.reduce((a, b) => ({
      rescored: a.rescored + b.rescored,
      dropped: a.dropped + b.dropped,
      trimmed: a.trimmed + b.trimmed,
    }));
  }

  private async rescoreShard(k: HotShardKeys, nowMs: number): Promise<RescoreResult> {
    const result: RescoreResult = { rescored: 0, dropped: 0, trimmed: 0 };
    const ids = await redisCall(this.redis.zrange(k.score(), 0, -1));
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      const keys = [k.score(), ...chunk.flatMap((id) => [k.views(id), k.uv(id), k.meta(id)])];
      const [rescored, dropped] = (await this.lua.hotRescore(keys, [nowMs, ...this.scoreArgs, ...chunk])) as [
        number,
        number,
      ];
      result.rescored += rescored;
      result.dropped += dropped;
    }
    result.trimmed = await redisCall(this.redis.zremrangebyrank(k.score(), 0, -(this.rules.cap + 1)));
    return result;
  }

  async suspiciousTotals(): Promise<SuspiciousCounts> {
    const totals = noSuspicious();
    const shards = await Promise.all(
      this.shardKeys.map((k) => redisCall(this.redis.hmget(k.suspiciousTotal(), 'repeat', 'budget', 'flagged'))),
    );
    for (const [repeat, budget, flagged] of shards) {
      totals.repeat += Number(repeat ?? 0);
      totals.budget += Number(budget ?? 0);
      totals.flagged += Number(flagged ?? 0);
    }
    return totals;
  }

  async forget(itemIds: readonly string[]): Promise<void> {
    await this.eachShardChunk(
      itemIds.map((id) => assertId(id, 'item id')),
      (k, ids) => this.lua.hotForget([k.score(), ...ids.flatMap((id) => itemKeys(k, id))], ids),
    );
  }

  async beginCheckpoint(): Promise<string[]> {
    const perShard = await Promise.all(
      this.shardKeys.map((k) => this.lua.hotBeginCheckpoint([k.dirty(), k.inflight()], []) as Promise<string[]>),
    );
    return perShard.flat();
  }

  async snapshot(itemIds: readonly string[]): Promise<{ snapshots: CounterSnapshot[]; lost: number[] }> {
    const snapshots: CounterSnapshot[] = [];
    const lost = new Set<number>();
    await this.eachShardChunk(
      itemIds.map((id) => assertId(id, 'item id')),
      async (k, ids, shard) => {
        if (lost.has(shard)) return;
        const reply = (await this.lua.hotSnapshot.buffer([k.epoch(), ...ids.flatMap((id) => itemKeys(k, id))], [])) as (
          | number
          | Buffer
        )[];
        if (reply[0] === 0) return void lost.add(shard);
        ids.forEach((itemId, i) => {
          const [pub, pv, uv, hll, repeat, budget, flagged] = reply.slice(1 + 7 * i, 8 + 7 * i) as [
            number,
            number,
            number,
            Buffer,
            number,
            number,
            number,
          ];
          // copy the HLL: reply Buffers may share memory the parser reuses
          if (pub >= 0)
            snapshots.push({
              itemId,
              publishedAtMs: pub * 1000,
              pv,
              uv,
              hll: Buffer.from(hll),
              suspicious: { repeat, budget, flagged },
            });
        });
      },
    );
    return { snapshots, lost: [...lost].sort((a, b) => a - b) };
  }

  async endCheckpoint(itemIds: readonly string[]): Promise<void> {
    await this.eachShardChunk([...itemIds], (k, ids) => redisCall(this.redis.srem(k.inflight(), ...ids)));
  }

  async lostShards(): Promise<number[]> {
    const present = await Promise.all(this.shardKeys.map((k) => redisCall(this.redis.exists(k.epoch()))));
    return present.flatMap((n, s) => (n === 0 ? [s] : []));
  }

  async restore(snapshots: readonly CounterSnapshot[], nowMs: number, shards: readonly number[]): Promise<number> {
    const lost = new Set(await this.lostShards());
    const wanted = shards.filter((s) => lost.has(s));
    const byShard = new Map<number, CounterSnapshot[]>(wanted.map((s) => [s, []]));
    for (const snap of snapshots) byShard.get(this.keys.hotShard(assertId(snap.itemId, 'item id')))?.push(snap);
    let restored = 0;
    for (const [shard, snaps] of byShard) {
      const k = this.shardKeys[shard]!;
      for (let i = 0; i < snaps.length; i += CHUNK / 2) {
        const chunk = snaps.slice(i, i + CHUNK / 2);
        const added = (await this.lua.hotRestore(restoreKeys(k, chunk), [
          nowMs,
          ...this.scoreArgs,
          ...chunk.flatMap(restoreArgs),
        ])) as number;
        if (added < 0) break; // another process sealed this shard meanwhile
        restored += added;
      }
    }
    return restored;
  }

  async seal(shards: readonly number[]): Promise<void> {
    for (const shard of shards) {
      const k = this.shardKeys[shard];
      if (k) await this.lua.hotSeal([k.epoch(), k.restored()], [randomUUID()]);
    }
  }

  /**
   * The recorded layout when it is not this one, else the hot-ranking design's one `{hot}` shard of earlier versions
   * when any of its shard-wide keys is there (this layout has more shards); else null.
   */
  async priorLayout(): Promise<HotCounters | null> {
    const text = await redisCall(this.redis.get(this.keys.hotLayout()));
    const recorded = text !== null && /^[0-9]{1,4}$/.test(text) ? Number(text) : null;
    if (recorded !== null && recorded >= 1 && recorded !== this.shards) return this.withShards(recorded);
    if (this.shards === 1) return null;
    const legacy = this.withShards(1);
    return (await legacy.holdsState()) ? legacy : null;
  }

  async adoptLayout(): Promise<void> {
    await redisCall(this.redis.set(this.keys.hotLayout(), String(this.shards)));
  }

  async retire(): Promise<void> {
    for (const k of this.shardKeys) await redisCall(this.redis.del(k.epoch()));
  }

  async purge(): Promise<void> {
    for (const k of this.shardKeys) {
      const [ranked, dirty, inflight, restored] = await Promise.all([
        redisCall(this.redis.zrange(k.score(), 0, -1)),
        redisCall(this.redis.smembers(k.dirty())),
        redisCall(this.redis.smembers(k.inflight())),
        redisCall(this.redis.smembers(k.restored())),
      ]);
      const ids = [...new Set([...ranked, ...dirty, ...inflight, ...restored])];
      for (let i = 0; i < ids.length; i += CHUNK) {
        const chunk = ids.slice(i, i + CHUNK);
        await this.lua.hotForget([k.score(), ...chunk.flatMap((id) => itemKeys(k, id))], chunk);
      }
      // the shard's own keys share its hash tag: one DEL, one slot
      await redisCall(this.redis.del(k.score(), k.suspiciousTotal(), k.dirty(), k.inflight(), k.restored(), k.epoch()));
    }
  }

  /** Nothing to release: the client belongs to whoever created it. */
  async close(): Promise<void> {}

  /** The same store seen through a layout of `shards` shards. */
  private withShards(shards: number): RedisHotCounters {
    return new RedisHotCounters(this.redis, new Keys(this.keys.prefix, this.keys.seenShards, shards), this.rules);
  }

  /** Whether any shard of this layout has a ranking, an epoch or checkpoint marks. */
  private async holdsState(): Promise<boolean> {
    const counts = await Promise.all(
      this.shardKeys.map((k) => redisCall(this.redis.exists(k.epoch(), k.score(), k.dirty(), k.inflight()))),
    );
    return counts.some((n) => n > 0);
  }

  /** Calls `fn` once per shard and chunk of `ids` (ids grouped by shard, order kept within a shard). */
  private async eachShardChunk(
    ids: readonly string[],
    fn: (k: HotShardKeys, chunk: string[], shard: number) => Promise<unknown>,
  ): Promise<void> {
    const byShard = new Map<number, string[]>();
    for (const id of new Set(ids)) {
      const s = this.keys.hotShard(id);
      const list = byShard.get(s);
      if (list) list.push(id);
      else byShard.set(s, [id]);
    }
    for (const [shard, list] of byShard) {
      for (let i = 0; i < list.length; i += CHUNK) await fn(this.shardKeys[shard]!, list.slice(i, i + CHUNK), shard);
    }
  }
}

/** counter:views, hll:uv, meta:article, suspicious of one item (the per-item keys of most scripts). */
function itemKeys(k: HotShardKeys, id: string): string[] {
  return [k.views(id), k.uv(id), k.meta(id), k.suspicious(id)];
}

function restoreKeys(k: HotShardKeys, snaps: readonly CounterSnapshot[]): string[] {
  const head = [k.score(), k.suspiciousTotal(), k.dirty(), k.restored(), k.epoch()];
  return head.concat(
    snaps.flatMap((s) => [
      k.views(s.itemId),
      k.uv(s.itemId),
      k.uvRestore(s.itemId),
      k.meta(s.itemId),
      k.suspicious(s.itemId),
    ]),
  );
}

function restoreArgs(s: CounterSnapshot): ScriptArg[] {
  const { repeat, budget, flagged } = s.suspicious;
  return [s.itemId, Math.floor(s.publishedAtMs / 1000), s.pv, s.hll.length > 0 ? s.hll : '', repeat, budget, flagged];
}
