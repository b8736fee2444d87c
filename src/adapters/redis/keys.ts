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
  ) {}

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

  /** The reader's for-you page cache (note 1's `feed:cache:{agent_id}`), a LIST of item ids. */
  feedCache(readerId: string): string {
    return `${this.prefix}feed:cache:{u:${readerId}}`;
  }

  /** The reader's refresh lease (a string holding the holder's token). */
  feedLease(readerId: string): string {
    return `${this.prefix}feed:lease:{u:${readerId}}`;
  }
}
