/**
 * Streaming importer of Hacker News posts (the Kaggle/Dataquest sample in `../shared/data/hn/`):
 * a gzip CSV (or a plain `.csv`) with the header
 * `id,title,url,num_points,num_comments,author,created_at,created_at_unix`, read through
 * `zlib` gunzip and csv-parse's streaming API, mapped row by row to {@link ItemInput} batches.
 *
 * Mapping (one row → one item):
 * - `id`          → `hn_<id>` (the HN id must be digits)
 * - `author`      → `authorId`: every character outside `[A-Za-z0-9_.-]` becomes `_`, cut to 64;
 *                   an empty author becomes `hn_anon`
 * - `title`       → `title` (trimmed, must be non-empty); `text` is always `''` (HN rows carry no body)
 * - `url`         → `url` when it parses as an http(s) URL, else `null` (Ask HN and other text posts)
 * - tags          → `ask` for titles starting "Ask HN" (or "Ask HNs"), `show` for "Show HN",
 *                   `tell` for "Tell HN", `launch` for "Launch HN" (case-insensitive), plus the
 *                   URL's host, lower-cased, without a leading `www.` (e.g. `github.com`); no others
 * - `created_at_unix` (epoch seconds) → `publishedAt` = seconds × 1000 (epoch ms)
 * - `num_points`  → `popularity` (integer ≥ 0)
 * - `lang`        → `en`: the sample is English (Hacker News), so no item waits for the language detector
 *
 * A row that cannot be mapped (wrong number of fields, malformed quoting, bad id, empty title, bad
 * time or points, an id already seen earlier in the file) or whose item the one check of published input
 * refuses (src/kernel/items/validate.ts, the same check as `POST /v1/items` and the library: a title over
 * 1,000 or a URL over 2,048 characters, a NUL character, a time past the clock + skew; the reason names
 * the field as that check does) is counted and reported with its line number and reason; it never
 * aborts the import. (An opening quote that is never closed swallows
 * the rest of the file into one field: that is CSV, and it shows as one skipped row at the end.)
 * A file whose header lacks a needed column is rejected before any row is read. A file that cannot be
 * read to its end (a truncated gzip) ends the iteration with an ImportReadError naming the last line
 * read whole (src/cli/input-file.ts, shared with the other importers).
 */
import { parse } from 'csv-parse';
import type { ItemInput } from '../kernel/items/content-store.js';
import { MAX_URL_CHARS, validateItems, type ItemRules } from '../kernel/items/validate.js';
import { DEFAULT_FUTURE_SKEW_MS } from '../kernel/time-range.js';
import { FreshetError } from '../kernel/errors.js';
import { InputRefused, openInput, pipeInto, readErrorsAs } from './input-file.js';

/** A row that was skipped: 1-based line of the file (the header is line 1) and why. */
export interface SkippedRow {
  line: number;
  reason: string;
}

/** One batch yielded by a parser. */
export interface ParsedBatch {
  /** Up to `batchSize` mapped items, in file order. */
  items: ItemInput[];
  /** Rows skipped since the previous batch. */
  skipped: SkippedRow[];
  /** Bytes of the file (compressed bytes for `.gz`) read so far, for progress. */
  bytesRead: number;
  /** Size of the file in bytes (compressed for `.gz`). */
  totalBytes: number;
  /** The file's line of the last row read into this batch (the header is line 1). */
  lastLine: number;
}

/** Options of a streaming parser. */
export interface ParseOptions {
  /** Items per batch (default 500). */
  batchSize?: number;
  /**
   * The one item check's settings (src/kernel/items/validate.ts); default: the wall clock and the default
   * skew (items carry no embedding here, so the dimension is not read).
   */
  rules?: ItemRules;
}

/** The columns the HN file must have. */
export const HN_COLUMNS = ['id', 'title', 'url', 'num_points', 'author', 'created_at_unix'] as const;

const INVALID_ID_CHARS = /[^A-Za-z0-9_.-]/g;
const TAG_PREFIXES: ReadonlyArray<[RegExp, string]> = [
  [/^ask hns?\b/i, 'ask'],
  [/^show hn\b/i, 'show'],
  [/^tell hn\b/i, 'tell'],
  [/^launch hn\b/i, 'launch'],
];

/** Maps an HN username to a valid author id (see the module doc). */
export function sanitizeAuthor(author: string): string {
  const cleaned = author.trim().replace(INVALID_ID_CHARS, '_').slice(0, 64);
  return cleaned.length > 0 ? cleaned : 'hn_anon';
}

/** The tags of a post (see the module doc); `url` is the already validated URL or null. */
export function hnTags(title: string, url: string | null): string[] {
  const tags: string[] = [];
  for (const [re, tag] of TAG_PREFIXES) if (re.test(title)) tags.push(tag);
  if (url) {
    const host = new URL(url).hostname.toLowerCase().replace(/^www\./, '');
    if (host.length > 0 && host.length <= 64) tags.push(host);
  }
  return tags;
}

function httpUrl(raw: string): string | null {
  const value = raw.trim();
  if (value.length === 0) return null;
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? value : null;
  } catch {
    return null;
  }
}

/**
 * Maps one CSV record (fields by column name) to an item.
 * @returns the item, or a string saying why the row is invalid.
 */
export function mapHnRecord(rec: Readonly<Record<string, string | undefined>>): ItemInput | string {
  const id = (rec.id ?? '').trim();
  if (!/^\d{1,60}$/.test(id)) return `id ${JSON.stringify(id)} is not a number`;
  const title = (rec.title ?? '').trim();
  if (title.length === 0) return 'empty title';
  const seconds = Number((rec.created_at_unix ?? '').trim());
  if (!Number.isSafeInteger(seconds) || seconds <= 0)
    return `created_at_unix ${JSON.stringify(rec.created_at_unix)} is not epoch seconds`;
  const pointsRaw = (rec.num_points ?? '').trim();
  const points = Number(pointsRaw);
  if (pointsRaw === '' || !Number.isSafeInteger(points) || points < 0)
    return `num_points ${JSON.stringify(pointsRaw)} is not an integer ≥ 0`;
  const rawUrl = (rec.url ?? '').trim();
  const url = rawUrl.length > MAX_URL_CHARS ? rawUrl : httpUrl(rawUrl); // an over-long URL is refused by the item check
  return {
    id: `hn_${id}`,
    authorId: sanitizeAuthor(rec.author ?? ''),
    title,
    text: '',
    url,
    tags: hnTags(title, url),
    publishedAt: seconds * 1000,
    popularity: points,
    lang: 'en',
  };
}

/**
 * Why the one check of published input refuses `item`, naming the field without the batch place
 * (`title must be at most 1000 characters …`), or null when it passes.
 */
function itemRefusal(item: ItemInput, rules: ItemRules): string | null {
  try {
    validateItems([item], rules);
    return null;
  } catch (err) {
    if (err instanceof FreshetError) return err.message.replace(/^items\[0\]\./, '');
    throw err;
  }
}

/**
 * The CSV parser of an HN posts file: `relax_quotes` keeps a quote inside an unquoted field as a character
 * (`a "b" c`), as people write titles; `relax_column_count` lets rows with a wrong field count reach us to
 * be reported. A record it cannot parse goes to `skip` (`lastSkipped`: the line of the last skip).
 */
function hnCsvParser(skip: (row: SkippedRow) => void, lastSkipped: () => number | undefined) {
  const parser = parse({
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    info: true,
  });
  parser.on('skip', (err: Error & { lines?: number }) => {
    const line = err.lines ?? 0;
    // csv-parse may report several errors for one broken record: keep the first per line.
    if (lastSkipped() !== line) skip({ line, reason: `malformed CSV: ${err.message}` });
  });
  return parser;
}

/** The header's column names. @throws InputRefused when it lacks one of {@link HN_COLUMNS}. */
function headerOf(file: string, record: readonly string[]): string[] {
  const header = record.map((h) => h.trim());
  const missing = HN_COLUMNS.filter((c) => !header.includes(c));
  if (missing.length > 0)
    throw new InputRefused(
      `${file} is not an HN posts CSV (its header lacks ${missing.join(', ')}) — pass the posts file, e.g. ../shared/data/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz`,
    );
  return header;
}

/**
 * Streams `file` (gzip when it ends in `.gz`) and yields batches of mapped items with the rows
 * skipped since the last batch. The last batch may be short, and may carry skips but no items.
 * @throws Error when the file cannot be read, is not gzip, or its header lacks {@link HN_COLUMNS};
 *   ImportReadError (input-file.ts) when it stops being readable after the header (truncated, corrupt).
 */
export async function* parseHn(file: string, opts: ParseOptions = {}): AsyncGenerator<ParsedBatch> {
  const batchSize = opts.batchSize ?? 500;
  const rules = opts.rules ?? { embeddingDim: 0, clockMs: Date.now(), futureSkewMs: DEFAULT_FUTURE_SKEW_MS };
  const input = openInput(file);
  const { totalBytes } = input;
  let skipped: SkippedRow[] = [];
  const parser = hnCsvParser(
    (row) => skipped.push(row),
    () => skipped.at(-1)?.line,
  );
  pipeInto(input, parser);

  let header: string[] | null = null;
  let items: ItemInput[] = [];
  const firstLine = new Map<string, number>(); // id → line of its first row
  let lastLine = 0;

  const rows = readErrorsAs(
    file,
    parser as AsyncIterable<{ record: string[]; info: { lines: number } }>,
    () => lastLine,
  );
  for await (const row of rows) {
    const { record, info } = row;
    lastLine = info.lines;
    if (header === null) {
      header = headerOf(file, record);
      continue;
    }
    if (record.length !== header.length) {
      skipped.push({ line: info.lines, reason: `${record.length} fields, expected ${header.length}` });
      continue;
    }
    const rec: Record<string, string | undefined> = {};
    header.forEach((name, i) => (rec[name] = record[i]));
    const mapped = mapHnRecord(rec);
    const refused = typeof mapped === 'string' ? mapped : itemRefusal(mapped, rules);
    if (typeof mapped === 'string' || refused !== null) {
      skipped.push({ line: info.lines, reason: refused ?? String(mapped) });
      continue;
    }
    const first = firstLine.get(mapped.id);
    if (first !== undefined) {
      skipped.push({ line: info.lines, reason: `duplicate id ${mapped.id} (first on line ${first})` });
      continue;
    }
    firstLine.set(mapped.id, info.lines);
    items.push(mapped);
    if (items.length >= batchSize) {
      yield { items, skipped, bytesRead: input.bytesRead(), totalBytes, lastLine };
      items = [];
      skipped = [];
    }
  }
  if (header === null) throw new InputRefused(`${file} is empty (no header) — pass the HN posts file`);
  if (items.length > 0 || skipped.length > 0) yield { items, skipped, bytesRead: totalBytes, totalBytes, lastLine };
}
