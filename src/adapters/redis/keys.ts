/**
 * Every Redis key Freshet builds comes from this module (DESIGN.md "Keys").
 *
 * - A reader's keys share the hash tag `{u:<reader>}` so multi-key scripts on them stay in one slot.
 * - The global daily seen filters of note 1 (`bf:global:YYYYMMDD`) are split into `shards` groups by
 *   a hash of the reader; a reader's 7 day-keys share one hash tag, so the check is one script on one
 *   slot. With 1 shard the keys are the note's: `<prefix>bf:{global}:20260306`.
 * Ids must already be validated (`assertId`), so no `:`, `{` or `}` can appear inside them.
 */
import murmurhash from 'murmurhash';

/** Builds keys under one prefix (default `fs:`). */
export class Keys {
  constructor(
    readonly prefix: string,
    /** Number of seen-filter shards (≥ 1). */
    readonly seenShards = 1,
    /** Number of hot-ranking shards (≥ 1). */
    readonly hotShards = 1,
  ) {}

  /** Shard (0..hotShards-1) of an item's hot counters (MurmurHash3 of the item id). */
  hotShard(itemId: string): number {
    return this.hotShards === 1 ? 0 : (murmurhash.v3(itemId, 0) >>> 0) % this.hotShards;
  }

  /** The keys of one hot-ranking shard (see {@link HotShardKeys}). */
  hot(shard: number): HotShardKeys {
    return new HotShardKeys(`${this.prefix}{${this.hotShards === 1 ? 'hot' : `hot.${shard}`}}:`);
  }

  /** Shard (0..seenShards-1) of a reader's seen-filter keys. */
  seenShard(readerId: string): number {
    return this.seenShards === 1 ? 0 : (murmurhash.v3(readerId, 0) >>> 0) % this.seenShards;
  }

  /** The seen filter of one UTC day (`YYYYMMDD`) for the reader's shard. */
  seenDay(readerId: string, day: string): string {
    const shard = this.seenShard(readerId);
    const tag = this.seenShards === 1 ? 'global' : `global.${shard}`;
    return `${this.prefix}bf:{${tag}}:${day}`;
  }

  /**
   * The version of {@link seenDay}'s bitmap: `<seenDay key>:v` (same hash tag, so same slot), an
   * integer bumped by every mark that sets a new bit; readers cache past days' bitmaps by it.
   */
  seenDayVersion(readerId: string, day: string): string {
    return `${this.seenDay(readerId, day)}:v`;
  }

  /** The reader's for-you page cache (note 1's `feed:cache:{agent_id}`), a LIST of item ids. */
  feedCache(readerId: string): string {
    return `${this.prefix}feed:cache:{u:${readerId}}`;
  }

  /** The reader's refresh lease (a string holding the holder's token). */
  feedLease(readerId: string): string {
    return `${this.prefix}feed:lease:{u:${readerId}}`;
  }

  /** The reader's following-timeline inbox (note 4's 收件箱): a ZSET of tids, score = member = tid. */
  inbox(readerId: string): string {
    return `${this.prefix}tl:in:{u:${readerId}}`;
  }

  /** The inbox's state: a HASH `state` (building|ready) and `floor` (a tid); absent = no inbox. */
  inboxMeta(readerId: string): string {
    return `${this.prefix}tl:in:meta:{u:${readerId}}`;
  }

  /** The author's outbox (note 4's 发件箱): a ZSET of tids. */
  outbox(authorId: string): string {
    return `${this.prefix}tl:out:{u:${authorId}}`;
  }

  /** The outbox's state: a HASH with its `floor`. */
  outboxMeta(authorId: string): string {
    return `${this.prefix}tl:out:meta:{u:${authorId}}`;
  }

  /** The reader's scalable seen filter of note 3: one bitmap string holding every sub-filter. */
  readerSeen(readerId: string): string {
    return `${this.prefix}rsf:{u:${readerId}}`;
  }

  /** State of {@link readerSeen}: a HASH `t` (virtual ms of the last activity), `g` (geometry), `c` (counts). */
  readerSeenMeta(readerId: string): string {
    return `${this.prefix}rsf:meta:{u:${readerId}}`;
  }

  /** The reader's recent views (note 5's `user:views:topic:{userId}`): a LIST of item ids, newest first. */
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

  /** SCAN pattern of every inbox (for memory reports). */
  inboxPattern(): string {
    return `${this.prefix}tl:in:{u:*`;
  }

  /** BullMQ prefix of the fan-out queue: one hash tag, so BullMQ's scripts work on a Cluster. */
  fanoutQueuePrefix(): string {
    return `${this.prefix}{fanout}`;
  }
}

/**
 * The keys of one hot-ranking shard (note 2). Every key of shard s lives under `<prefix>{hot}:` (1
 * shard) or `<prefix>{hot.<s>}:` — one hash tag, so each script touches one Cluster slot — and beneath
 * it is note 2's layout exactly: `counter:views:<id>`, `hll:uv:<id>`, `hot:score`, `meta:article:<id>`
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
