/**
 * CandidateRecall on PostgreSQL (PGlite or a server, through `Sql`): the for-you recall (docs/for-you.md) —
 * text relevance × Gaussian time decay, filled by decay × log popularity — over the `items` table of
 * the content store (src/content/postgres-content-store.ts) and the for-you indexes on it
 * (adapters/schema.ts: the keyset index, migration 9; the banded lexeme index, migration 10). Times are
 * epoch ms (`bigint`).
 */
import { gaussDecaySql, gaussExponentFactor } from '../decay.js';
import {
  INTEREST_ITEM_WORDS,
  MATCH_SCAN_FACTOR,
  type Candidate,
  type CandidateRecall,
  type FillQuery,
  type FillResult,
  type KeysetCursor,
  type MatchQuery,
  type RecallExclusions,
  type RecallQuery,
} from '../recall.js';
import type { Sql } from '../../kernel/sql/sql.js';
import { normalizeTerms, orQueryText } from '../../kernel/items/terms.js';
import { tsConfigOf } from '../../kernel/items/lang.js';
import { MATCH_BAND_MS } from './schema.js';

/**
 * A lexeme that may be cast to `tsquery` and put in a band key as it is: letters and digits of any script
 * (a run of them can carry no tsquery syntax: `& | ! : * ( ) '` and spaces are neither).
 */
const LEXEME = /^[\p{L}\p{N}]+$/u;

/**
 * The text search configuration reader words are read in when the reader lists no language (see
 * `interestLexemes`): English, as every item was stemmed before items had a language. A reader with a
 * language list also gets `simple` (items of an unknown language, unstemmed) and each language's own.
 */
const BASE_CONFIGS = ['english'];

interface CandidateRow {
  id: string;
  author_id: string;
  published_at: string | number;
  lexemes?: string[];
  score?: number;
  matched?: number;
  popularity?: number | string;
}

const toCandidate = (r: CandidateRow): Candidate => {
  const c: Candidate = { id: r.id, authorId: r.author_id, publishedAt: Number(r.published_at) };
  if (r.lexemes) c.lexemes = r.lexemes;
  if (r.score !== undefined && r.score !== null) c.score = Number(r.score);
  if (r.popularity !== undefined && r.popularity !== null) c.popularity = Number(r.popularity);
  if (r.matched !== undefined && r.matched !== null) c.matched = Number(r.matched);
  return c;
};

/**
 * The parameters of one statement: the decay's four first — $1 now (bigint), $2 the window's lower edge
 * (bigint), $3 the decay offset, $4 its exponent factor 1/(2σ²) (float8) — then whatever `add` appends.
 */
class Params {
  readonly values: unknown[];
  constructor(now: number, from: number, q: Pick<RecallQuery, 'decay'>) {
    this.values = [now, from, q.decay.offsetMs, gaussExponentFactor(q.decay)];
  }

  /** Appends `v`; returns its placeholder (`$n`). */
  add(v: unknown): string {
    return `$${this.values.push(v)}`;
  }

  /** `gaussDecaySql` at $1 with $3/$4 over the `published_at` column `col`. */
  gauss(col: string): string {
    return gaussDecaySql('$1::bigint', col, '$3::float8', '$4::float8');
  }
}

/** The decay window [from, now] of a request in integer epoch ms; null when it is empty. */
function windowOf(nowMs: number, horizonMs: number): { now: number; from: number } | null {
  const now = Math.floor(nowMs);
  const from = Math.max(0, Math.ceil(nowMs - horizonMs));
  return Number.isFinite(from) && from <= now ? { now, from } : null;
}

/**
 * The `INTEREST_ITEM_WORDS` most frequent stemmed words of the titles and tags of the items named by the
 * text[] parameter `ids` (ties: alphabetical), each item read in the configuration of its language
 * (migration 12), letters and digits only (`[[:alnum:]]`, any script), so a cast to `tsquery` cannot fail.
 */
function itemWordsSql(ids: string): string {
  return `SELECT w FROM items, unnest(tsvector_to_array(to_tsvector(freshet_ts_config(lang), title || ' ' || array_to_string(tags, ' ')))) AS w
          WHERE id = ANY(${ids}::text[]) AND w ~ '^[[:alnum:]]+$'
          GROUP BY w ORDER BY count(*) DESC, w LIMIT ${INTEREST_ITEM_WORDS}`;
}

/**
 * The exclusions design's excluded authors and ids as `AND …` clauses on the `author_id` and `id` columns ('' when
 * none: an empty anti-join still costs as much as the scan).
 */
function excludedSql(ex: RecallExclusions | undefined, p: Params): string {
  const authors = [...(ex?.authorIds ?? [])];
  const ids = [...(ex?.itemIds ?? [])];
  return (
    (authors.length > 0 ? ` AND author_id NOT IN (SELECT unnest(${p.add(authors)}::text[]))` : '') +
    (ids.length > 0 ? ` AND id NOT IN (SELECT unnest(${p.add(ids)}::text[]))` : '')
  );
}

/** The "not interested" weight of the author in column `authorCol` (1 for every other author). */
function authorWeightSql(ex: RecallExclusions | undefined, p: Params, authorCol: string): string {
  const weighted = [...(ex?.authorWeights ?? new Map<string, number>())];
  if (weighted.length === 0) return '1';
  const authors = p.add(weighted.map((w) => w[0]));
  const weights = p.add(weighted.map((w) => w[1]));
  return `coalesce((SELECT w.weight FROM unnest(${authors}::text[], ${weights}::float8[]) AS w (author, weight) WHERE w.author = ${authorCol} LIMIT 1), 1)`;
}

/** The for-you recall over PostgreSQL. Does not own `sql` (the content store's handle is shared). */
export class PostgresRecall implements CandidateRecall {
  constructor(private readonly sql: Sql) {}

  /**
   * Top-`limit` candidate ids for a reader (the for-you design's "engine recall"). Candidates are live items
   * with `published_at` in [now − horizonMs, now] (future items never) and `author_id` ≠ reader.
   *
   * With usable interest words (see `normalizeTerms`; tsquery syntax in terms is dropped), the items
   * matching `to_tsquery('english', 'w1 | w2 | …')` come first, by
   *   score = ts_rank(tsv, query) × G,
   *   G = exp(−max(0, |now − published_at| − offset)² / (2σ²)),  σ² = −scale² / (2 ln decay)
   * (Elasticsearch `gauss` decay: `gaussDecaySql` of ../decay.ts, all in ms). When they
   * are fewer than `limit` — or with no interests — the rest is filled with the non-matching
   * candidates by G × ln(2 + popularity). Both orders break ties by `published_at` desc, then
   * id asc, so results are deterministic; no id appears twice. The exponent is clamped at −700
   * (`GAUSS_MAX_EXPONENT`: PostgreSQL raises on `exp` underflow): items that far out all score ≈ 0.
   *
   * One statement scores the horizon once (`ORDER BY matched DESC, score DESC`, a top-N sort), where
   * a matches query followed by a fill query would scan it twice for every reader whose words match
   * fewer than `limit` items.
   */
  async recall(q: RecallQuery): Promise<string[]> {
    const limit = Math.floor(q.limit);
    const w = windowOf(q.nowMs, q.horizonMs);
    if (!(limit > 0) || !w) return [];
    // $5 reader · $6 tsquery text ('' = none) · $7 limit, then the interest items and exclusions
    const p = new Params(w.now, w.from, q);
    p.add(q.readerId);
    const query = orQueryText(q.interests);
    p.add(query);
    p.add(limit);
    const gauss = p.gauss('published_at');
    const fromItems = [...new Set(q.interestItemIds ?? [])];
    // The text query: the interest words ($6, English stemming) OR-ed with the stemmed words of the
    // titles and tags of `interestItemIds` (already lexemes: cast, not parsed again). Without either, no
    // row matches: the text match is skipped, so `tsv` (the widest column) is never read. ($6 = '' then,
    // so `$6 <> ''` is false; every parameter must appear for its type to be known.)
    const textQuery =
      fromItems.length === 0
        ? query === ''
          ? null
          : `to_tsquery('english', $6::text)`
        : `(SELECT CASE WHEN $6::text = '' THEN d.q ELSE to_tsquery('english', $6::text) || coalesce(d.q, ''::tsquery) END
          FROM (SELECT string_agg(w, ' | ')::tsquery AS q FROM (${itemWordsSql(p.add(fromItems))}) l) d)`;
    const withText = textQuery !== null;
    const matched = withText ? `coalesce(tsv @@ tq.q, false)` : `$6::text <> ''`;
    const score = withText
      ? `CASE WHEN matched THEN ts_rank(tsv, q) * ${gauss} ELSE ${gauss} * ln(2 + popularity) END` // c.q: the text query
      : `${gauss} * ln(2 + popularity)`;
    const excluded = excludedSql(q.exclusions, p);
    const weight = authorWeightSql(q.exclusions, p, 'items.author_id');
    const rows = await this.sql.query<{ id: string }>(
      `SELECT id FROM (
         SELECT id, published_at, ${withText ? 'tsv, tq.q, ' : ''}popularity, ${matched} AS matched, ${weight} AS weight
         FROM items${withText ? `, (SELECT ${textQuery} AS q) tq` : ''}
         WHERE deleted_at IS NULL AND published_at BETWEEN $2::bigint AND $1::bigint AND author_id <> $5::text${excluded}
       ) c
       ORDER BY matched DESC, weight * ${score} DESC, published_at DESC, id ASC
       LIMIT $7::int`,
      p.values,
    );
    return rows.map((r) => r.id);
  }

  /**
   * The interest matches (see the port), bounded: 6-hour bands of the window (`MATCH_BAND_MS`) are
   * visited newest first — one lookup of migration 10's index per band for the keys `<band>:<lexeme>`,
   * which reads only that band's matches — and the walk stops after `MATCH_SCAN_FACTOR × limit` rows
   * (a nested loop under a LIMIT; `OFFSET 0` keeps the planner from flattening the per-band subquery into
   * a join it could run in another order). Only those are ranked by weight × ts_rank × G. Cost: at most
   * 2 × limit rows fetched plus one index lookup per band and lexeme (23 bands in the default window),
   * whatever the catalog; a word rare in the window costs its few matches, not a scan.
   */
  async matches(q: MatchQuery): Promise<Candidate[]> {
    const limit = Math.floor(q.limit);
    const w = windowOf(q.nowMs, q.horizonMs);
    const lexemes = [...new Set(q.lexemes)].filter((l) => LEXEME.test(l));
    if (!(limit > 0) || !w || lexemes.length === 0) return [];
    // $5 reader · $6 lexemes · $7 limit · $8 rows read · $9 / $10 newest / oldest band, then exclusions
    const p = new Params(w.now, w.from, q);
    p.add(q.readerId);
    p.add(lexemes);
    p.add(limit);
    p.add(limit * MATCH_SCAN_FACTOR);
    p.add(Math.floor(w.now / MATCH_BAND_MS));
    p.add(Math.floor(w.from / MATCH_BAND_MS));
    const excluded = excludedSql(q.exclusions, p);
    const weight = authorWeightSql(q.exclusions, p, 'c.author_id');
    const rows = await this.sql.query<CandidateRow>(
      `SELECT c.id, c.author_id, c.published_at FROM (
         SELECT m.id, m.author_id, m.published_at, m.tsv
         FROM generate_series($9::bigint, $10::bigint, -1) AS b,
         LATERAL (
           SELECT id, author_id, published_at, tsv FROM items
           WHERE for_you_band_lexemes(tsv, published_at) && ARRAY(SELECT b::text || ':' || l FROM unnest($6::text[]) AS l)
             AND deleted_at IS NULL AND published_at BETWEEN $2::bigint AND $1::bigint AND author_id <> $5::text${excluded}
           OFFSET 0
         ) m
         LIMIT $8::int
       ) c, (SELECT array_to_string($6::text[], ' | ')::tsquery AS q) tq
       ORDER BY ${weight} * ts_rank(c.tsv, tq.q) * ${p.gauss('c.published_at')} DESC, c.published_at DESC, c.id ASC
       LIMIT $7::int`,
      p.values,
    );
    return rows.map(toCandidate);
  }

  /**
   * The reader-independent fill (see the port): one top-`size` sort of the window by
   * G × ln(2 + popularity), then, when the window is short, the newest older items through the keyset
   * index (migration 9). Run once per interval by the shared pool, not per refresh.
   */
  async fill(q: FillQuery): Promise<FillResult> {
    const size = Math.floor(q.size);
    const w = windowOf(q.nowMs, q.horizonMs);
    if (!(size > 0) || !w) return { entries: [], windowComplete: false, next: null };
    const p = new Params(w.now, w.from, q);
    const rows = await this.sql.query<CandidateRow>(
      `SELECT id, author_id, published_at, popularity, tsvector_to_array(tsv) AS lexemes, ${p.gauss('published_at')} * ln(2 + popularity) AS score FROM items
       WHERE deleted_at IS NULL AND published_at BETWEEN $2::bigint AND $1::bigint
       ORDER BY score DESC, published_at DESC, hashtext(id) ASC
       LIMIT ${p.add(size)}::int`,
      p.values,
    );
    const entries = rows.map(toCandidate);
    if (entries.length === size) return { entries, windowComplete: false, next: null };
    const older = await this.keyset(w.now, [w.from, ''], size - entries.length, 'tsvector_to_array(tsv) AS lexemes');
    entries.push(...older);
    const last = older.at(-1);
    return { entries, windowComplete: true, next: last ? [last.publishedAt, last.id] : [w.from, ''] };
  }

  /**
   * Keyset walk (see the port) over `items_live_keyset_idx` (migration 9), scanned backwards; with
   * lexemes, each row's `tsv` is read to count the ones it holds (its lexemes are distinct).
   */
  async older(
    nowMs: number,
    before: KeysetCursor | null,
    limit: number,
    lexemes: readonly string[] = [],
  ): Promise<Candidate[]> {
    const words = [...new Set(lexemes)];
    // $4: the lexemes, when given
    const matched =
      words.length > 0
        ? '(SELECT count(*) FROM unnest(tsvector_to_array(tsv)) AS w WHERE w = ANY($4::text[]))::int AS matched'
        : null;
    return this.keyset(nowMs, before, limit, matched, words);
  }

  /** One keyset page (see `older`), with one more column (`extra`, its parameters from $4) when given. */
  private async keyset(
    nowMs: number,
    before: KeysetCursor | null,
    limit: number,
    extra: string | null,
    ...more: unknown[]
  ): Promise<Candidate[]> {
    const n = Math.floor(limit);
    if (!(n > 0)) return [];
    // a cursor after `now` (a request at an earlier virtual time) starts at now: future items never
    const [at, id] = before !== null && before[0] <= nowMs ? before : [Math.floor(nowMs) + 1, ''];
    const rows = await this.sql.query<CandidateRow>(
      `SELECT id, author_id, published_at${extra ? `, ${extra}` : ''} FROM items
       WHERE deleted_at IS NULL AND (published_at, id) < ($1::bigint, $2::text)
       ORDER BY published_at DESC, id DESC LIMIT $3::int`,
      extra ? [at, id, n, ...more] : [at, id, n],
    );
    return rows.map(toCandidate);
  }

  /**
   * The interest lexemes (see the port): one statement, reading only the rows of `interestItemIds`. The
   * terms are read in English; for a reader with a language list also as typed (`simple`: items of an
   * unknown language, unstemmed) and in the configuration of each of `languages`, so they meet items
   * stemmed in any of those.
   */
  async interestLexemes(
    interests: readonly string[],
    interestItemIds: readonly string[],
    languages: readonly string[] = [],
  ): Promise<string[]> {
    const terms = normalizeTerms(interests).join(' ');
    const ids = [...new Set(interestItemIds)];
    if (terms === '' && ids.length === 0) return [];
    const configs = [
      ...new Set([...BASE_CONFIGS, ...(languages.length ? ['simple', ...languages.map(tsConfigOf)] : [])]),
    ];
    const rows = await this.sql.query<{ words: string[] | null }>(
      `SELECT array_agg(DISTINCT w) AS words FROM (
         SELECT unnest(tsvector_to_array(to_tsvector(c::regconfig, $1::text))) AS w FROM unnest($3::text[]) AS c
         UNION ALL
         (${itemWordsSql('$2')})
       ) x WHERE w ~ '^[[:alnum:]]+$'`,
      [terms, ids, configs],
    );
    return (rows[0]?.words ?? []).filter((w) => LEXEME.test(w));
  }

  /** Live items by id, with popularity and lexemes (one primary-key lookup). */
  async pooled(ids: readonly string[]): Promise<(Candidate & { popularity: number })[]> {
    if (ids.length === 0) return [];
    const rows = await this.sql.query<CandidateRow & { popularity: number | string }>(
      `SELECT id, author_id, published_at, popularity, tsvector_to_array(tsv) AS lexemes FROM items
       WHERE id = ANY($1::text[]) AND deleted_at IS NULL`,
      [[...new Set(ids)]],
    );
    return rows.map((r) => ({ ...toCandidate(r), popularity: Number(r.popularity) }));
  }
}
