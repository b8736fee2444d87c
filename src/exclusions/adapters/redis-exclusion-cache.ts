/**
 * The exclusions' hot state on Redis (standalone or Cluster): the exclusions design's recent-views LIST per reader
 * (`rv:{u:<reader>}`, LPUSH + LTRIM to N + expiry, with the virtual time of the last view beside it) and
 * a JSON cache of each reader's durable exclusions (`ex:{u:<reader>}`) guarded by a generation counter
 * (`ex:gen:{u:<reader>}`). A reader's keys share one hash tag, so `read` is ONE script on one slot.
 *
 * The parsed copy of each fill, per process. A reader with a full preferences document caches 64 KB of
 * JSON; sending and parsing it on every page cost 1.2 ms p50 of a 0.6 ms `load_more` (bench/preferences.ts).
 * So every fill starts its JSON with an id of its own (`{"fill":"<16 hex>",…}`, still plain JSON: a process
 * of an earlier version parses it as before), this process keeps the documents it parsed or filled by
 * reader (least recently used out past `memoBytes` of JSON), and `read` sends the head it holds: when the
 * cached value still starts with it, the script answers 1 instead of the JSON, and the parsed copy is used.
 * Never stale: a write deletes the value (`exInvalidate`), and a new fill has a new id; the check rides on
 * the read every request makes anyway. A value without the head (written by an earlier version) is parsed
 * every time, as before.
 */
import { randomBytes } from 'node:crypto';
import { assertId } from '../../kernel/ids.js';
import type { DurableExclusions } from '../domain.js';
import type { CachedExclusions, ExclusionCache, ExclusionCacheSettings } from '../ports.js';
import type { RedisClient } from '../../kernel/redis/client.js';
import type { Keys } from '../../kernel/redis/keys.js';
import { LuaScripts } from '../../kernel/redis/lua.js';
import { redisCall } from '../../kernel/redis/errors.js';

/** Parsed fills kept per process when the settings do not say (`FRESHET_EXCLUSION_MEMO_MB`'s default, 64 MB). */
export const DEFAULT_MEMO_BYTES = 64 * 2 ** 20;

/** The exclusions' scripts (src/exclusions/lua/): every one touches the keys of ONE reader. */
export const EXCLUSION_SCRIPTS = new LuaScripts(new URL('../lua/', import.meta.url), [
  'exViews-2',
  'exRead-4',
  'exFill-2',
  'exInvalidate-2',
]);

/** The head of a fill's JSON: `{"fill":"` + 16 hex digits + `",` (27 characters). */
const HEAD = /^\{"fill":"[0-9a-f]{16}",/;

/** Parsed fills kept per process: reader → the head of its cached JSON and the document it holds. */
interface Parsed {
  head: string;
  durable: DurableExclusions;
  /** Length of the JSON (the budget's measure). */
  bytes: number;
}

/** {@link ExclusionCache} on Redis. The client is the caller's (not closed here). */
export class RedisExclusionCache implements ExclusionCache {
  private readonly lua;
  /** Least recently used first (a Map keeps insertion order; a hit moves the entry to the end). */
  private readonly parsed = new Map<string, Parsed>();
  private parsedBytes = 0;

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
    const held = this.parsed.get(readerId);
    const reply = (await this.lua.exRead(
      [k.recentViews(readerId), k.recentViewsAt(readerId), k.exclusionCache(readerId), k.exclusionGeneration(readerId)],
      [Math.floor(nowMs), Math.floor(this.settings.recentViewsTtlMs), held?.head ?? ''],
    )) as [string[], string | number | null, string];
    let durable: DurableExclusions | null;
    if (reply[1] === 1 && held) {
      durable = held.durable;
      this.keep(readerId, held); // most recently used
    } else if (typeof reply[1] === 'string') {
      const { fill: _, ...parsed } = JSON.parse(reply[1]) as DurableExclusions & { fill?: string };
      durable = parsed;
      const head = HEAD.exec(reply[1])?.[0];
      if (head) this.keep(readerId, { head, durable, bytes: reply[1].length });
      else this.dropMemo(readerId);
    } else {
      durable = null;
      this.dropMemo(readerId);
    }
    return { recentViews: [...new Set(reply[0])], durable, generation: String(reply[2]) };
  }

  async fill(readerId: string, generation: string, durable: DurableExclusions): Promise<boolean> {
    assertId(readerId, 'reader id');
    const fill = randomBytes(8).toString('hex');
    const json = JSON.stringify({ fill, ...durable });
    const reply = await this.lua.exFill(
      [this.keys.exclusionCache(readerId), this.keys.exclusionGeneration(readerId)],
      [generation, json, Math.floor(this.settings.durableTtlMs)],
    );
    if (reply === 1) this.keep(readerId, { head: `{"fill":"${fill}",`, durable, bytes: json.length });
    return reply === 1;
  }

  /** Keeps (or refreshes) a reader's parsed fill as the most recently used, within the budget. */
  private keep(readerId: string, p: Parsed): void {
    const budget = this.settings.memoBytes ?? DEFAULT_MEMO_BYTES;
    this.dropMemo(readerId);
    if (p.bytes > budget) return;
    this.parsed.set(readerId, p);
    this.parsedBytes += p.bytes;
    for (const [reader, old] of this.parsed) {
      if (this.parsedBytes <= budget) break;
      this.parsed.delete(reader);
      this.parsedBytes -= old.bytes;
    }
  }

  private dropMemo(readerId: string): void {
    const p = this.parsed.get(readerId);
    if (!p) return;
    this.parsed.delete(readerId);
    this.parsedBytes -= p.bytes;
  }

  async invalidate(readerId: string): Promise<void> {
    assertId(readerId, 'reader id');
    this.dropMemo(readerId);
    await this.lua.exInvalidate(
      [this.keys.exclusionCache(readerId), this.keys.exclusionGeneration(readerId)],
      [Math.floor(2 * this.settings.durableTtlMs + 60_000)],
    );
  }

  async forget(readerId: string): Promise<void> {
    assertId(readerId, 'reader id');
    this.dropMemo(readerId);
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
