/**
 * The posts `freshet simulate live` replays: the `count` posts of the HN sample with the most points,
 * read from the same CSV `freshet import hn` reads, mapped by the importer's own row mapping
 * (src/cli/import-hn.ts: `hn_<id>`, author, title, URL, tags, popularity) plus `num_comments`.
 */
import { parse } from 'csv-parse';
import type { ItemInput } from '../../kernel/items/content-store.js';
import { HN_COLUMNS, mapHnRecord } from '../import-hn.js';
import { ImportReadError, InputRefused, openInput, pipeInto, readErrorsAs } from '../input-file.js';

/** One HN post and the counts the live run replays: its points as views, its comments as replies. */
export interface LivePost {
  /** The post as `freshet import hn` writes it (`id` = `hn_<id>`, `publishedAt` its 2015–2016 time). */
  item: ItemInput;
  /** `num_points` (≥ 0). */
  points: number;
  /** `num_comments` (≥ 0). */
  comments: number;
}

/** The columns the live run needs: the importer's and `num_comments`. */
const LIVE_COLUMNS = [...HN_COLUMNS, 'num_comments'] as const;

/**
 * Reads `file` (gzip when it ends in `.gz`) and returns its `count` posts with the most points (ties: the
 * smaller HN id first), most points first. Rows the importer would skip, and rows whose `num_comments`
 * is not an integer ≥ 0, are left out.
 * @throws Error naming the file and what to pass instead when it cannot be read, is not the HN posts
 *   CSV (a needed column is missing) or holds no usable post.
 */
export async function readLivePosts(file: string, count: number): Promise<LivePost[]> {
  const all: LivePost[] = [];
  try {
    for await (const rec of hnRecords(file)) {
      const item = mapHnRecord(rec);
      const comments = Number((rec.num_comments ?? '').trim());
      if (typeof item === 'string' || !Number.isSafeInteger(comments) || comments < 0) continue;
      all.push({ item, points: item.popularity, comments });
    }
  } catch (err) {
    if (err instanceof ImportReadError)
      throw new Error(`${err.message} — pass a readable HN posts file with --hn`, { cause: err });
    throw err;
  }
  if (all.length === 0) throw new Error(`${file} holds no usable HN post — pass the HN posts file with --hn`);
  all.sort((a, b) => b.points - a.points || hnNumber(a) - hnNumber(b));
  return all.slice(0, count);
}

function hnNumber(p: LivePost): number {
  return Number(p.item.id.slice(3));
}

/** The file's records as `{column: value}`; checks the header first. */
async function* hnRecords(file: string): AsyncGenerator<Record<string, string | undefined>> {
  const input = openInput(file);
  const parser = parse({ relax_column_count: true, relax_quotes: true, skip_empty_lines: true });
  pipeInto(input, parser);
  let header: string[] | null = null;
  let line = 0;
  try {
    for await (const record of readErrorsAs(file, parser as AsyncIterable<string[]>, () => line)) {
      line++;
      if (header === null) {
        header = record.map((h) => h.trim());
        const missing = LIVE_COLUMNS.filter((c) => !header!.includes(c));
        if (missing.length > 0)
          throw new InputRefused(
            `${file} is not an HN posts CSV (its header lacks ${missing.join(', ')}) — pass the posts file with --hn, e.g. ../shared/data/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz`,
          );
        continue;
      }
      if (record.length !== header.length) continue;
      const rec: Record<string, string | undefined> = {};
      header.forEach((name, i) => (rec[name] = record[i]));
      yield rec;
    }
  } finally {
    input.close();
  }
  if (header === null) throw new InputRefused(`${file} is empty (no header) — pass the HN posts file with --hn`);
}
