/**
 * The exclusions' hot state on Redis (standalone or Cluster): note 5's recent-views LIST per reader
 * (`rv:{u:<reader>}`, LPUSH + LTRIM to N + expiry, with the virtual time of the last view beside it) and
 * a JSON cache of each reader's durable exclusions (`ex:{u:<reader>}`) guarded by a generation counter
 * (`ex:gen:{u:<reader>}`). A reader's keys share one hash tag, so `read` is ONE script on one slot.
 */
import { assertId } from '../../kernel/ids.js';
import type { DurableExclusions } from '../domain.js';
import type { CachedExclusions, ExclusionCache, ExclusionCacheSettings } from '../ports.js';
import type { RedisClient } from '../../kernel/redis/client.js';
import type { Keys } from '../../kernel/redis/keys.js';
import { LuaScripts } from '../../kernel/redis/lua.js';
import { redisCall } from '../../kernel/redis/errors.js';

/** The exclusions' scripts (src/exclusions/lua/): every one touches the keys of ONE reader. */
export const EXCLUSION_SCRIPTS = new LuaScripts(new URL('../lua/', import.meta.url), [
  'exViews-2',
  'exRead-4',
  'exFill-2',
  'exInvalidate-2',
]);

/** {@link ExclusionCache} on Redis. The client is the caller's (not closed here). */
export class RedisExclusionCache implements ExclusionCache {
  private readonly lua;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly settings: ExclusionCacheSettings,
  ) {
    this.lua = EXCLUSION_SCRIPTS.on(redis);
  }

  /** One script per reader in the batch, sent together (a Cluster routes each to its reader's slot). */
  async pushViews(views: readonly { readerId: string; itemId: string }[], nowMs: number): Promise<void> {
    const byReader = new Map<string, string[]>();
    for (const { readerId, itemId } of views) {
      assertId(readerId, 'reader id');
      assertId(itemId, 'item id');
      byReader.set(readerId, [...(byReader.get(readerId) ?? []), itemId]);
    }
    const { recentViews, recentViewsTtlMs } = this.settings;
    await Promise.all(
      [...byReader].map(([reader, ids]) =>
        this.lua.exViews(
          [this.keys.recentViews(reader), this.keys.recentViewsAt(reader)],
          [Math.floor(nowMs), recentViews, Math.floor(recentViewsTtlMs), ...ids],
        ),
      ),
    );
  }

  async read(readerId: string, nowMs: number): Promise<CachedExclusions> {
    assertId(readerId, 'reader id');
    const k = this.keys;
    const reply = (await this.lua.exRead(
      [k.recentViews(readerId), k.recentViewsAt(readerId), k.exclusionCache(readerId), k.exclusionGeneration(readerId)],
      [Math.floor(nowMs), Math.floor(this.settings.recentViewsTtlMs)],
    )) as [string[], string | null, string];
    return {
      recentViews: [...new Set(reply[0])],
      durable: reply[1] ? (JSON.parse(reply[1]) as DurableExclusions) : null,
      generation: String(reply[2]),
    };
  }

  async fill(readerId: string, generation: string, durable: DurableExclusions): Promise<boolean> {
    assertId(readerId, 'reader id');
    const reply = await this.lua.exFill(
      [this.keys.exclusionCache(readerId), this.keys.exclusionGeneration(readerId)],
      [generation, JSON.stringify(durable), Math.floor(this.settings.durableTtlMs)],
    );
    return reply === 1;
  }

  async invalidate(readerId: string): Promise<void> {
    assertId(readerId, 'reader id');
    await this.lua.exInvalidate(
      [this.keys.exclusionCache(readerId), this.keys.exclusionGeneration(readerId)],
      [Math.floor(2 * this.settings.durableTtlMs + 60_000)],
    );
  }

  async forget(readerId: string): Promise<void> {
    assertId(readerId, 'reader id');
    const k = this.keys; // one hash tag: one DEL on a Cluster too
    await redisCall(
      this.redis.del(
        k.recentViews(readerId),
        k.recentViewsAt(readerId),
        k.exclusionCache(readerId),
        k.exclusionGeneration(readerId),
      ),
    );
  }

  async close(): Promise<void> {}
}
