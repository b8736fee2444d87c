/**
 * Every family of Redis keys Freshet writes (all built by src/kernel/redis/keys.ts, plus BullMQ's keys
 * under the fan-out queue prefix), with how each is bounded: a time to live, or — for the few that have
 * none — a documented hard bound (no key may grow or linger without one).
 *
 * This list is the one place that says so: test/kernel/key-bounds.test.ts drives every capability against a
 * real Redis under its own prefix, SCANs every key and fails on a key that matches no family, or has no
 * time to live while its family has no bound; docs/operations.md "Redis keys" is
 * {@link keyFamilyTable}'s output (the same test checks the page carries it).
 */

/** One family of keys. */
export interface KeyFamily {
  /** The key as the docs show it, after the prefix (`<r>` a reader id, `<s>` a shard tag, …). */
  name: string;
  /** Matches a key of the family with the prefix removed. */
  pattern: RegExp;
  /** Who writes it. */
  owner:
    | 'seen'
    | 'for-you'
    | 'following'
    | 'exclusions'
    | 'notifications'
    | 'hot'
    | 'readiness'
    | 'fan-out queue'
    | 'http edge'
    | 'active readers';
  /** Its time to live, in words (null: the family has none). */
  ttl: string | null;
  /** The hard bound of a family whose keys may have no time to live (null: every key has one). */
  bound: string | null;
}

const SEEN = String.raw`bf:\{(?:global|s\d+\.\d+)[^}]*\}:`;
const DAY = String.raw`\d{8}`;
const USER = String.raw`\{u:[^}]+\}`;
const HOT = String.raw`\{hot[^}]*\}:`;
const QUEUE = String.raw`\{fanout[^}]*\}:fanout:`;

function family(
  name: string,
  pattern: string,
  owner: KeyFamily['owner'],
  ttl: string | null,
  bound: string | null = null,
): KeyFamily {
  return { name, pattern: new RegExp(`^${pattern}$`), owner, ttl, bound };
}

const READER_TTL = "the reader-filter TTL after the reader's last activity (`FRESHET_READER_SEEN_TTL_DAYS`)";
const WINDOW = "the day's end + `FRESHET_SEEN_DAYS` (7)";
const HOT_ITEM =
  'one per item viewed inside the retention: deleted when the item is archived (`FRESHET_HOT_RETENTION_DAYS`, 90)';

/** The families, in the order of docs/operations.md. */
export const KEY_FAMILIES: readonly KeyFamily[] = [
  family('bf:{<s>}:<day>', `${SEEN}${DAY}`, 'seen', WINDOW),
  family('bf:{<s>}:<day>:v', `${SEEN}${DAY}:v`, 'seen', WINDOW),
  family('bf:{<s>}:<day>:j', `${SEEN}${DAY}:j`, 'seen', WINDOW),
  family('bf:{<s>}:<day>:j:taken', `${SEEN}${DAY}:j:taken`, 'seen', "the journal's"),
  family('bf:{<s>}:<day>:j:lease', `${SEEN}${DAY}:j:lease`, 'seen', 'the checkpoint lease'),
  family(
    'bf:{<s>}:<day>:restore',
    `${SEEN}${DAY}:restore`,
    'seen',
    null,
    'scratch: deleted by the script that writes it',
  ),
  family('bf:{<s>}:journal-days', `${SEEN}journal-days`, 'seen', WINDOW),
  family(
    'bf:{<s>}:epoch',
    `${SEEN}epoch`,
    'seen',
    null,
    "one per shard of each shard count the deployment has used (docs/operations.md, 'Capacity planning')",
  ),
  family('bf:{seen-layout}:<day>', String.raw`bf:\{seen-layout\}:${DAY}`, 'seen', WINDOW),
  family('bf:{<s>}:rsf-dirty', `${SEEN}rsf-dirty`, 'seen', READER_TTL),
  family('bf:{<s>}:rsf-dirty:taken', `${SEEN}rsf-dirty:taken`, 'seen', "the dirty set's"),
  family('bf:{<s>}:rsf-dirty:lease', `${SEEN}rsf-dirty:lease`, 'seen', 'the checkpoint lease'),
  family('rsf:{u:<r>}', `rsf:${USER}`, 'seen', READER_TTL),
  family('rsf:{u:<r>}:<level>', `rsf:${USER}:\\d+`, 'seen', READER_TTL),
  family('rsf:meta:{u:<r>}', `rsf:meta:${USER}`, 'seen', READER_TTL),
  family('rsf:j:{u:<r>}', `rsf:j:${USER}`, 'seen', READER_TTL),
  family('rsf:j:taken:{u:<r>}', `rsf:j:taken:${USER}`, 'seen', "the journal's"),
  family('rsf:j:lease:{u:<r>}', `rsf:j:lease:${USER}`, 'seen', 'the checkpoint lease'),
  family('feed:cache:{u:<r>}', `feed:cache:${USER}`, 'for-you', '`FRESHET_FEED_CACHE_TTL_S` (30 min)'),
  family('feed:lease:{u:<r>}', `feed:lease:${USER}`, 'for-you', 'the refresh lease'),
  family(
    'feed:cursor:{u:<r>}',
    `feed:cursor:${USER}`,
    'for-you',
    '`FRESHET_SEEN_DAYS` (7 days) after the last refresh that moved it',
  ),
  family(
    'tl:in:meta:{u:<r>}',
    `tl:in:meta:${USER}`,
    'following',
    "`FRESHET_ACTIVE_DAYS` after the reader's last read or rebuild",
  ),
  family('tl:in:{u:<r>}', `tl:in:${USER}`, 'following', "its state's + 1 h (also when a push creates it)"),
  family(
    'tl:out:meta:{u:<a>}',
    `tl:out:meta:${USER}`,
    'following',
    "`FRESHET_ACTIVE_DAYS` after the author's last publish",
  ),
  family('tl:out:{u:<a>}', `tl:out:${USER}`, 'following', "its state's + 1 h"),
  family('rv:{u:<r>}', `rv:${USER}`, 'exclusions', '`FRESHET_RECENT_VIEWS_TTL_DAYS`'),
  family('rv:at:{u:<r>}', `rv:at:${USER}`, 'exclusions', '`FRESHET_RECENT_VIEWS_TTL_DAYS`'),
  family(
    'nt:{u:<r>}',
    `nt:${USER}`,
    'notifications',
    "`FRESHET_NOTIFICATION_VIEW_TTL_DAYS` after the recipient's last read or notification",
  ),
  family('nt:g:{u:<r>}', `nt:g:${USER}`, 'notifications', "the same as its groups' (10 s while it is rebuilt)"),
  family('ex:{u:<r>}', `ex:${USER}`, 'exclusions', '`FRESHET_EXCLUSION_CACHE_TTL_S`'),
  family('ex:gen:{u:<r>}', `ex:gen:${USER}`, 'exclusions', "longer than the cache's"),
  family(
    'active:{active}:<bucket>',
    String.raw`active:\{active\}:[fc]-?\d+`,
    'active readers',
    '65 min (5-minute buckets) / 25 h (hourly buckets)',
  ),
  family('ready:{<tag>}', String.raw`ready:\{[^}]+\}`, 'readiness', '10 s'),
  family('rl:{u:<r>}', `rl:${USER}`, 'http edge', 'the rate window (`FRESHET_RATE_WINDOW_S`, 10 s)'),
  family('rl:o:{u:<r>}', `rl:o:${USER}`, 'http edge', 'the rate window (`FRESHET_RATE_WINDOW_S`, 10 s)'),
  family('rl:service', 'rl:service', 'http edge', 'the rate window (`FRESHET_RATE_WINDOW_S`, 10 s)'),
  family('{<h>}:counter:views:<item>', `${HOT}counter:views:[^:]+`, 'hot', null, HOT_ITEM),
  family('{<h>}:hll:uv:<item>', `${HOT}hll:uv:[^:]+`, 'hot', null, HOT_ITEM),
  family(
    '{<h>}:hll:uv:<item>:restore',
    `${HOT}hll:uv:[^:]+:restore`,
    'hot',
    null,
    'scratch: deleted by the script that writes it',
  ),
  family('{<h>}:meta:article:<item>', `${HOT}meta:article:[^:]+`, 'hot', null, HOT_ITEM),
  family('{<h>}:suspicious:<item>', `${HOT}suspicious:[^:]+`, 'hot', null, HOT_ITEM),
  family(
    '{<h>}:hot:score',
    `${HOT}hot:score`,
    'hot',
    null,
    'one per hot shard, trimmed to `FRESHET_HOT_CAP` (1000) items',
  ),
  family('{<h>}:totals:suspicious', `${HOT}totals:suspicious`, 'hot', null, 'one per hot shard (3 fields)'),
  family(
    '{<h>}:checkpoint:dirty',
    `${HOT}checkpoint:dirty`,
    'hot',
    null,
    'one per hot shard; items viewed since the last checkpoint (emptied by each)',
  ),
  family(
    '{<h>}:checkpoint:inflight',
    `${HOT}checkpoint:inflight`,
    'hot',
    null,
    'one per hot shard; items of checkpoints in progress',
  ),
  family('{<h>}:epoch', `${HOT}epoch`, 'hot', null, 'one per hot shard'),
  family('{<h>}:restored', `${HOT}restored`, 'hot', null, 'one per hot shard, deleted when its restore completes'),
  family('hot:layout', 'hot:layout', 'hot', null, 'one key: the shard count of the hot layout in use'),
  family('{<h>}:ratelimit:<item>:<visitor>', `${HOT}ratelimit:[^:]+:[^:]+`, 'hot', '`FRESHET_HOT_RATE_WINDOW_MIN`'),
  family('{<h>}:budget:<visitor>:<minute>', `${HOT}budget:[^:]+:\\d+`, 'hot', '2 min'),
  family(
    '{<q>}:fanout:t<tid>',
    `${QUEUE}t\\d+`,
    'fan-out queue',
    null,
    'one per fan-out job waiting or running (removed on completion and on final failure)',
  ),
  family(
    '{<q>}:fanout:t<tid>:lock',
    `${QUEUE}t\\d+:lock`,
    'fan-out queue',
    'the lock duration (`FRESHET_FANOUT_LOCK_MS`)',
  ),
  family('{<q>}:fanout:stalled-check', `${QUEUE}stalled-check`, 'fan-out queue', 'the stalled-check interval'),
  family(
    '{<q>}:fanout:events',
    `${QUEUE}events`,
    'fan-out queue',
    null,
    'a stream trimmed to ~10,000 entries (BullMQ default)',
  ),
  family(
    '{<q>}:fanout:<list>',
    `${QUEUE}(id|meta|wait|active|paused|delayed|prioritized|completed|failed|stalled|marker|pc|limiter|waiting-children)`,
    'fan-out queue',
    null,
    'one of each per queue; the lists hold the ids of waiting or running jobs only',
  ),
];

/**
 * The family of a key (prefix removed), or undefined for a key no family describes.
 * No two families match one key: ids hold no `:`, `{` or `}` (`assertId`).
 */
export function keyFamilyOf(keyAfterPrefix: string): KeyFamily | undefined {
  return KEY_FAMILIES.find((f) => f.pattern.test(keyAfterPrefix));
}

/** docs/operations.md's "Redis keys" table (markdown), generated from {@link KEY_FAMILIES}. */
export function keyFamilyTable(): string {
  const rows = KEY_FAMILIES.map((f) => `| \`${f.name}\` | ${f.owner} | ${f.ttl ?? '–'} | ${f.bound ?? '–'} |`);
  return ['| key (after the prefix) | owner | time to live | bound without one |', '|---|---|---|---|', ...rows].join(
    '\n',
  );
}
