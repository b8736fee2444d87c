/**
 * Every Redis key Freshet builds comes from this module (docs/architecture.md "Keys"); docs/operations.md "Redis
 * keys" lists the families, with their time to live or bound (src/kernel/redis/key-families.ts).
 *
 * - A reader's keys share the hash tag `{u:<reader>}` so multi-key scripts on them stay in one slot.
 * - The global daily seen filters of the for-you design (`bf:global:YYYYMMDD`) are split into shards by a hash of
 *   the reader ({@link shardOf}), as many as the day's layout names (src/seen/layout.ts); a reader's
 *   day keys of one layout share one hash tag, so the check is one script on one slot:
 *   `<prefix>bf:{<tag>}:20260306`.
 * - Shard hash tags ({@link shardTag}) spread each family's shards evenly over the 16,384 Cluster slots,
 *   and the families apart from each other, so N ≥ 3 shards on a 3-master Cluster reach every master and
 *   the three single-tag families (seen, hot, fan-out queue) sit on three different masters.
 * Ids must already be validated (`assertId`), so no `:`, `{` or `}` can appear inside them.
 */
import calculateSlot from 'cluster-key-slot';
import { murmur3 } from '../hash.js';

/** Hash slots of a Redis Cluster. */
export const CLUSTER_SLOTS = 16_384;
/** Candidate tags tried per shard (`<base>`, `<base>-1`, … `<base>-255`): the nearest slot is ~±32 off. */
const TAG_CANDIDATES = 256;

/**
 * Where each sharded family starts on the slot space, as a fraction of it: the hot ranking at the slot
 * of the hot-ranking design's `{hot}` (so one hot shard keeps the hot-ranking design's keys exactly), the seen filters a third further,
 * the fan-out queue two thirds — on a Cluster whose masters split the slots evenly, the three families
 * with one shard each land on three different masters (on 3 masters: hot on the 2nd, seen on the 3rd,
 * the queue on the 1st).
 */
export const SHARD_PHASES = {
  hot: calculateSlot('hot') / CLUSTER_SLOTS,
  global: (calculateSlot('hot') / CLUSTER_SLOTS + 1 / 3) % 1,
  fanout: (calculateSlot('hot') / CLUSTER_SLOTS + 2 / 3) % 1,
} as const;

/** A sharded key family: `global` (seen filters), `hot` (hot ranking), `fanout` (the BullMQ queue). */
export type ShardFamily = keyof typeof SHARD_PHASES;

const tagCache = new Map<string, string>();

/**
 * The hash tag of shard `shard` (0..shards-1) of a family: shard s aims at slot
 * ((phase + s / shards) mod 1) × 16384, and its tag is, of `<base>`, `<base>-1`, … `<base>-255`
 * (base = the family name with 1 shard, `<family>.<s>` with more — `hot<N>.<s>` for the hot ranking,
 * so no shard of one layout shares its keys with a shard of another and a change of the shard count can
 * move the counters from one layout to the other: src/hot/maintenance.ts), the one whose CRC16 slot is nearest
 * that aim (the first on a tie). Evenly spaced aims put N ≥ M shards on every one of M masters that
 * split the slots evenly (each master's range is at least as long as the spacing, with margin for the
 * ±32 slots of the choice, for N = M and N ≥ 1.25 M; a 3-master Cluster: every N ≥ 3). Computed once
 * per (family, shard, shards): ≤ 256 CRC16s of short strings.
 */
export function shardTag(family: ShardFamily, shard: number, shards: number): string {
  const id = `${family}/${shard}/${shards}`;
  const cached = tagCache.get(id);
  if (cached !== undefined) return cached;
  const aim = Math.round(((SHARD_PHASES[family] + shard / shards) % 1) * CLUSTER_SLOTS) % CLUSTER_SLOTS;
  const base = shards === 1 ? family : family === 'hot' ? `hot${shards}.${shard}` : `${family}.${shard}`;
  let best = base;
  let bestDistance = Infinity;
  for (let k = 0; k < TAG_CANDIDATES && bestDistance > 0; k++) {
    const tag = k === 0 ? base : `${base}-${k}`;
    const d = Math.abs(calculateSlot(tag) - aim);
    const distance = Math.min(d, CLUSTER_SLOTS - d); // the slot space is a ring for spacing purposes
    if (distance < bestDistance) [best, bestDistance] = [tag, distance];
  }
  tagCache.set(id, best);
  return best;
}

/** Sets of readers whose seen-filter journal awaits a checkpoint ({@link Keys.readerSeenDirty}): 16 spread over the slots. */
export const READER_DIRTY_SHARDS = 16;

/** Shard (0..shards-1) of an id: MurmurHash3 of it mod `shards` (0 with one shard), as the seen and hot shards always were. */
export function shardOf(id: string, shards: number): number {
  return shards === 1 ? 0 : murmur3(id) % shards;
}

/**
 * The hash tag of shard `shard` of a rolling seen-filter layout of `shards` shards: aimed like
 * {@link shardTag}'s `global` family (evenly spaced slots from the seen phase), but named
 * `s<shards>.<shard>` (or `s<shards>.<shard>-<k>`, the nearest of 256 candidates), so two layouts
 * of different shard counts never share a key.
 */
export function seenTag(shard: number, shards: number): string {
  const id = `seen/${shard}/${shards}`;
  const cached = tagCache.get(id);
  if (cached !== undefined) return cached;
  const aim = Math.round(((SHARD_PHASES.global + shard / shards) % 1) * CLUSTER_SLOTS) % CLUSTER_SLOTS;
  const base = `s${shards}.${shard}`;
  let best = base;
  let bestDistance = Infinity;
  for (let k = 0; k < TAG_CANDIDATES && bestDistance > 0; k++) {
    const tag = k === 0 ? base : `${base}-${k}`;
    const d = Math.abs(calculateSlot(tag) - aim);
    const distance = Math.min(d, CLUSTER_SLOTS - d);
    if (distance < bestDistance) [best, bestDistance] = [tag, distance];
  }
  tagCache.set(id, best);
  return best;
}

/** Builds keys under one prefix (default `fs:`). */
export class Keys {
  constructor(
    readonly prefix: string,
    /**
     * Unused by the seen filters since 0.2.0: each day's layout carries its own shard count
     * (src/seen/layout.ts) and {@link seenDays} takes it. Kept so callers
     * that pass the hot shard count third keep working.
     */
    readonly seenShards = 1,
    /** Number of hot-ranking shards (≥ 1). */
    readonly hotShards = 1,
  ) {}

  /** Shard (0..hotShards-1) of an item's hot counters (MurmurHash3 of the item id). */
  hotShard(itemId: string): number {
    return this.hotShards === 1 ? 0 : murmur3(itemId) % this.hotShards;
  }

  /** The keys of one hot-ranking shard (see {@link HotShardKeys}). */
  hot(shard: number): HotShardKeys {
    return new HotShardKeys(`${this.prefix}{${shardTag('hot', shard, this.hotShards)}}:`);
  }

  /**
   * The hot ranking's layout: a string holding the shard count whose shards hold the counters (set
   * once they are restored; absent before, which means the hot-ranking design's one `{hot}` shard when its keys
   * exist). One key, no time to live.
   */
  hotLayout(): string {
    return `${this.prefix}hot:layout`;
  }

  /**
   * The keys of shard `shard` of `shards` of a rolling seen-filter day layout (src/seen/layout.ts):
   * `<prefix>bf:{<seenTag(shard, shards)>}:`. The tag names the shard count, so layouts of different
   * shard counts never share a key.
   */
  seenDays(shards: number, shard: number): SeenShardKeys {
    return new SeenShardKeys(`${this.prefix}bf:{${seenTag(shard, shards)}}:`);
  }

  /**
   * The layout of one UTC day of the rolling seen filters (`YYYYMMDD`): a string naming its shard
   * count and bitmap geometry (src/seen/layout.ts), set by the first process that touches the day and
   * never changed; every day key shares the tag `{seen-layout}`, so a window's days are read at once.
   */
  seenLayout(day: string): string {
    return `${this.prefix}bf:{seen-layout}:${day}`;
  }

  /** The reader's for-you page cache (the for-you design's `feed:cache:{agent_id}`), a LIST of item ids. */
  feedCache(readerId: string): string {
    return `${this.prefix}feed:cache:{u:${readerId}}`;
  }

  /** The reader's for-you recall cursor (a string: where its last recall stopped, src/for-you/service.ts). */
  feedCursor(readerId: string): string {
    return `${this.prefix}feed:cursor:{u:${readerId}}`;
  }

  /** The reader's refresh lease (a string holding the holder's token). */
  feedLease(readerId: string): string {
    return `${this.prefix}feed:lease:{u:${readerId}}`;
  }

  /**
   * The reader's following-timeline inbox (the following design's 收件箱): a string of packed 7-byte tids in a ring
   * (src/following/lua/includes/ring.lua; a ZSET of tids in versions before 0.2, converted on first touch).
   */
  inbox(readerId: string): string {
    return `${this.prefix}tl:in:{u:${readerId}}`;
  }

  /** The inbox's state: a HASH `state` (building|ready) and `floor` (a tid); absent = no inbox. */
  inboxMeta(readerId: string): string {
    return `${this.prefix}tl:in:meta:{u:${readerId}}`;
  }

  /** The author's outbox (the following design's 发件箱): packed tids, like {@link inbox}. */
  outbox(authorId: string): string {
    return `${this.prefix}tl:out:{u:${authorId}}`;
  }

  /** The outbox's state: a HASH with its `floor`. */
  outboxMeta(authorId: string): string {
    return `${this.prefix}tl:out:meta:{u:${authorId}}`;
  }

  /**
   * The reader's scalable seen filter of the discover design: sub-filter 0 (the others: {@link readerSeenLevel}).
   */
  readerSeen(readerId: string): string {
    return `${this.prefix}rsf:{u:${readerId}}`;
  }

  /** Sub-filter `level` ≥ 1 of the reader's scalable seen filter (one string per sub-filter). */
  readerSeenLevel(readerId: string, level: number): string {
    return `${this.prefix}rsf:{u:${readerId}}:${level}`;
  }

  /** State of {@link readerSeen}: a HASH `t` (virtual ms of the last activity), `g` (geometry signature), `c` (counts). */
  readerSeenMeta(readerId: string): string {
    return `${this.prefix}rsf:meta:{u:${readerId}}`;
  }

  /**
   * The journal of the reader's scalable filter: the packed hash pairs (8 bytes each) of the members
   * added, in order, taken by the PostgreSQL checkpoint; the reader's TTL.
   */
  readerSeenJournal(readerId: string): string {
    return `${this.prefix}rsf:j:{u:${readerId}}`;
  }

  /** A reader journal taken by a checkpoint and not yet acknowledged. */
  readerSeenJournalTaken(readerId: string): string {
    return `${this.prefix}rsf:j:taken:{u:${readerId}}`;
  }

  /** The lease of the checkpoint holding {@link readerSeenJournalTaken}. */
  readerSeenJournalLease(readerId: string): string {
    return `${this.prefix}rsf:j:lease:{u:${readerId}}`;
  }

  /**
   * Readers whose journal was started since the last checkpoint took the set, in
   * {@link READER_DIRTY_SHARDS} sets (a SET of reader ids each, under the tag of shard `shard` of
   * that many seen shards; the reader TTL). `shard` = `shardOf(reader, READER_DIRTY_SHARDS)`.
   */
  readerSeenDirty(shard: number): string {
    return `${this.seenDays(READER_DIRTY_SHARDS, shard).base}rsf-dirty`;
  }

  /** A dirty-reader set taken by a checkpoint and not yet acknowledged. */
  readerSeenDirtyTaken(shard: number): string {
    return `${this.readerSeenDirty(shard)}:taken`;
  }

  /** The lease of the checkpoint holding {@link readerSeenDirtyTaken}. */
  readerSeenDirtyLease(shard: number): string {
    return `${this.readerSeenDirty(shard)}:lease`;
  }

  /** The reader's recent views (the exclusions design's `user:views:topic:{userId}`): a LIST of item ids, newest first. */
  recentViews(readerId: string): string {
    return `${this.prefix}rv:{u:${readerId}}`;
  }

  /** Virtual ms of the reader's last recorded view (a string beside {@link recentViews}, same slot). */
  recentViewsAt(readerId: string): string {
    return `${this.prefix}rv:at:{u:${readerId}}`;
  }

  /** The reader's cached durable exclusions (a string of JSON; absent = not cached). */
  exclusionCache(readerId: string): string {
    return `${this.prefix}ex:{u:${readerId}}`;
  }

  /** Generation of {@link exclusionCache}: bumped by every invalidation, so a stale fill is refused. */
  exclusionGeneration(readerId: string): string {
    return `${this.prefix}ex:gen:{u:${readerId}}`;
  }

  /**
   * A recipient's grouped notifications (src/notifications/): a ZSET, member = group key, score = the
   * group's newest event id.
   */
  notificationGroups(recipientId: string): string {
    return `${this.prefix}nt:{u:${recipientId}}`;
  }

  /** The data of {@link notificationGroups}: a HASH per group (`count|newest at|actors`) and the view's state. */
  notificationData(recipientId: string): string {
    return `${this.prefix}nt:g:{u:${recipientId}}`;
  }

  /** The pub/sub channel on which a process says a reader moved its following-timeline marker (its id). */
  timelineMarkerSignal(): string {
    return `${this.prefix}tl:markers`;
  }

  /** The pub/sub channel on which a process says a recipient's notifications changed (its id). */
  notificationSignal(): string {
    return `${this.prefix}nt:signal`;
  }

  /** SCAN pattern of every inbox (for memory reports). */
  inboxPattern(): string {
    return `${this.prefix}tl:in:{u:*`;
  }

  /**
   * The readiness probe's key (src/observe/store-health.ts): a short string written with a 10 s time to
   * live. `tag` picks the hash slot (one probe per Cluster master); `{probe}` on a standalone server.
   */
  readyProbe(tag = 'probe'): string {
    return `${this.prefix}ready:{${tag}}`;
  }

  /**
   * Pub/sub channel of the following timeline's watermark moves (src/following/timeline-signal.ts):
   * fan-out workers publish a finished tid, every server's stream hub subscribes. A channel, not a key.
   */
  timelineSignal(): string {
    return `${this.prefix}tl:signal`;
  }

  /**
   * Pub/sub channel of item writes and deletes (src/content/redis-item-changes.ts): every process
   * drops its cached copies of the ids a message names. A channel, not a key.
   */
  itemChanges(): string {
    return `${this.prefix}items:changes`;
  }

  /**
   * A caller's request count of the HTTP edge's rate limit in its current window (src/server/limits.ts):
   * a reader (`{u:<r>}`, its slot) or the service key as a whole; `budget` `other`: a reader's count on the
   * routes outside the feed pages and views (`rl:o:{u:<r>}`, the same slot).
   */
  edgeRate(caller: { readerId: string } | 'service', budget: 'pages' | 'other' = 'pages'): string {
    if (caller === 'service') return `${this.prefix}rl:service`;
    return `${this.prefix}rl:${budget === 'other' ? 'o:' : ''}{u:${caller.readerId}}`;
  }

  /**
   * One bucket of the active-reader estimate (src/observe/active-readers.ts): a HyperLogLog string of the
   * readers active in a 5-minute (`f<n>`) or 1-hour (`c<n>`) bucket, with a time to live just past its
   * window. Every bucket shares the hash tag `{active}`, so one `PFCOUNT` unions a window on a Cluster;
   * at most 39 keys of ≤ 12 KiB whatever the number of readers.
   */
  activeReaders(bucket: string): string {
    return `${this.prefix}active:{active}:${bucket}`;
  }

  /** BullMQ prefix of the fan-out queue: one hash tag ({@link shardTag}), so BullMQ's scripts work on a Cluster. */
  fanoutQueuePrefix(): string {
    return `${this.prefix}{${shardTag('fanout', 0, 1)}}`;
  }
}

/**
 * The keys of one hot-ranking shard (docs/hot.md). Every key of shard s lives under `<prefix>{hot}:` (1
 * shard) or `<prefix>{<shardTag('hot', s, N)>}:` (`hot<N>.<s>` or `hot<N>.<s>-<k>`) — one hash tag, so each
 * script touches one Cluster slot — and beneath
 * it is the hot-ranking design's layout exactly: `counter:views:<id>`, `hll:uv:<id>`, `hot:score`, `meta:article:<id>`
 * (e.g. `fs:{hot}:counter:views:12345`). The rest is Freshet's: rate-limit marks, per-minute budgets,
 * suspicious counters, checkpoint marks and the shard's epoch.
 */
export class HotShardKeys {
  constructor(readonly base: string) {}
  /** PV counter (`INCRBY`). */
  views(itemId: string): string {
    return `${this.base}counter:views:${itemId}`;
  }
  /** Visitors' HyperLogLog (`PFADD` / `PFCOUNT`). */
  uv(itemId: string): string {
    return `${this.base}hll:uv:${itemId}`;
  }
  /** Scratch key for merging a checkpointed HLL into `uv` (deleted by the same script). */
  uvRestore(itemId: string): string {
    return `${this.base}hll:uv:${itemId}:restore`;
  }
  /** The shard's ranking ZSET. */
  score(): string {
    return `${this.base}hot:score`;
  }
  /** Item meta HASH (`publishedAt`, epoch seconds). */
  meta(itemId: string): string {
    return `${this.base}meta:article:${itemId}`;
  }
  /** Rate-limit mark of one visitor on one item (`SET NX PX`, value = virtual ms of the counted view). */
  rateMark(itemId: string, visitorId: string): string {
    return `${this.base}ratelimit:${itemId}:${visitorId}`;
  }
  /** Views of one visitor in one minute of epoch time, on this shard. */
  budget(visitorId: string, minute: number): string {
    return `${this.base}budget:${visitorId}:${minute}`;
  }
  /** Suspicious views of one item by kind (HASH repeat/budget/flagged). */
  suspicious(itemId: string): string {
    return `${this.base}suspicious:${itemId}`;
  }
  /** Suspicious views of the shard by kind (HASH); outside `suspicious:<id>` so no item id can collide. */
  suspiciousTotal(): string {
    return `${this.base}totals:suspicious`;
  }
  /** Items viewed since the last checkpoint began (SET). */
  dirty(): string {
    return `${this.base}checkpoint:dirty`;
  }
  /** Items of checkpoints in progress (SET). */
  inflight(): string {
    return `${this.base}checkpoint:inflight`;
  }
  /** Present while the shard holds all its state; missing after a loss until a restore. */
  epoch(): string {
    return `${this.base}epoch`;
  }
  /** Items already restored during the current restore (SET; deleted when the restore completes). */
  restored(): string {
    return `${this.base}restored`;
  }
}

/**
 * The keys of one shard of the rolling seen filters (docs/for-you.md), all under one hash tag `<base>` =
 * `<prefix>bf:{<tag>}:` ({@link Keys.seenDays}), so every script on
 * them touches one Cluster slot: a UTC day's bitmap `<base>YYYYMMDD` (the for-you design's `bf:global:YYYYMMDD`
 * under the shard's tag) and beside it its version, journal and restore scratch, plus the shard's
 * journal index and epoch.
 */
export class SeenShardKeys {
  constructor(readonly base: string) {}
  /** The bitmap of one UTC day (`YYYYMMDD`). */
  day(day: string): string {
    return `${this.base}${day}`;
  }
  /**
   * The version of {@link day}'s bitmap (`…:v`): an integer bumped by every mark that sets a new bit;
   * readers cache past days' bitmaps by it.
   */
  version(day: string): string {
    return `${this.base}${day}:v`;
  }
  /**
   * The day's journal: the packed hash pairs (8 bytes each) of the members whose mark set a new bit,
   * appended by the mark script and taken by the PostgreSQL checkpoint (src/seen/seen-checkpointer.ts).
   */
  journal(day: string): string {
    return `${this.base}${day}:j`;
  }
  /** A day journal taken by a checkpoint and not yet acknowledged (`…:j:taken`). */
  journalTaken(day: string): string {
    return `${this.base}${day}:j:taken`;
  }
  /** The lease of the checkpoint holding {@link journalTaken} (a token with a time to live). */
  journalLease(day: string): string {
    return `${this.base}${day}:j:lease`;
  }
  /** Scratch key of a day's restore (the checkpointed bitmap, OR-ed into the day and deleted in one script). */
  restore(day: string): string {
    return `${this.base}${day}:restore`;
  }
  /** The shard's journal index: a SET of the days (`YYYYMMDD`) that have a journal or a taken one. */
  journalDays(): string {
    return `${this.base}journal-days`;
  }
  /**
   * The shard's epoch: present while the shard's day filters hold everything checkpointed (set by a
   * restore, at start or after a loss); missing after a Redis loss, which the check script reports.
   */
  epoch(): string {
    return `${this.base}epoch`;
  }
}
