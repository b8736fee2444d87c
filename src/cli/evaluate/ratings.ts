/**
 * The input of `freshet evaluate` (docs/evaluation.md): a ratings file — `user,item,rating,time` with a
 * header line, plain or gzip, MovieLens's `ratings.csv` first — read into integer-indexed arrays (readers
 * and items numbered in order of first appearance), and optionally an items file (`item,title,tags`,
 * MovieLens's `movies.csv`: `movieId,title,genres`, genres `|`-separated) giving the items' titles and tags.
 * Read through the CLI's input readers (src/cli/input-file.ts), so a missing or truncated file is one line
 * naming it.
 */
import { parse } from 'csv-parse';
import { inputLines, InputRefused, openInput, pipeInto, readErrorsAs } from '../input-file.js';

/** The ratings of a file, integer-indexed. */
export interface Ratings {
  /** Reader keys as the file writes them (`userId`), by reader index. */
  readers: string[];
  /** Item keys as the file writes them (`movieId`), by item index, in order of first appearance. */
  items: string[];
  /** Per reader index: the items it rated (item indices) and when (the file's time unit), aligned. */
  byReader: { items: number[]; times: number[] }[];
  /** Ratings kept: one per (reader, item). */
  count: number;
  /** Lines naming a (reader, item) already read: the later time is kept. */
  duplicates: number;
}

/** An item as the items file describes it. */
export interface ItemInfo {
  title: string;
  tags: string[];
}

/** A key as ids take it after a prefix: `[A-Za-z0-9_.-]`, at most 50 characters (ids are ≤ 64). */
const KEY = /^[A-Za-z0-9_.-]{1,50}$/;

/**
 * Reads a ratings file: a header line, then `user,item,rating,time` lines (the rating is checked to be a
 * number but not used: every rating counts as an engagement; blank lines are skipped).
 * @param onBytes progress: bytes of the file read so far and its size.
 * @throws InputRefused when the file is missing, empty, or a line is not `user,item,rating,time` with keys
 *   of `[A-Za-z0-9_.-]` (naming the line); ImportReadError when it stops being readable.
 */
export async function readRatings(file: string, onBytes?: (read: number, total: number) => void): Promise<Ratings> {
  const input = openInput(file, onBytes);
  const r: Ratings = { readers: [], items: [], byReader: [], count: 0, duplicates: 0 };
  const readerIndex = new Map<string, number>();
  const itemIndex = new Map<string, number>();
  const seen = new Map<string, number>(); // `${reader} ${item}` → position in its reader's arrays
  let header = true;
  try {
    for await (const { text, line } of inputLines(input, file)) {
      if (header) {
        header = false;
        continue;
      }
      if (text.trim() === '') continue;
      const [user, item, rating, time, extra] = text.split(',');
      if (extra !== undefined || !KEY.test(user ?? '') || !KEY.test(item ?? '') || !isNumber(rating) || !isNumber(time))
        throw new InputRefused(
          `${file}:${line}: expected user,item,rating,time (keys of [A-Za-z0-9_.-], numbers), got ${JSON.stringify(text.slice(0, 80))}`,
        );
      const u = indexOf(readerIndex, r.readers, user!, () => r.byReader.push({ items: [], times: [] }));
      const i = indexOf(itemIndex, r.items, item!);
      const mine = r.byReader[u]!;
      const key = `${u} ${i}`;
      const at = seen.get(key);
      if (at === undefined) {
        seen.set(key, mine.items.length);
        mine.items.push(i);
        mine.times.push(Number(time));
        r.count++;
      } else {
        r.duplicates++;
        mine.times[at] = Math.max(mine.times[at]!, Number(time));
      }
    }
  } finally {
    input.close();
  }
  if (header) throw new InputRefused(`${file} is empty — pass a ratings file (user,item,rating,time with a header)`);
  return r;
}

/**
 * Reads an items file: a header line, then `item,title,tags` rows (CSV quoting, as MovieLens quotes titles
 * holding commas); tags are `|`-separated, `(no genres listed)` is none.
 * @throws InputRefused when the file is missing or a row is malformed (naming the line).
 */
export async function readItems(file: string): Promise<Map<string, ItemInfo>> {
  const input = openInput(file);
  const parser = parse({ from_line: 2, relax_column_count: false, info: true });
  pipeInto(input, parser);
  const out = new Map<string, ItemInfo>();
  let last = 1;
  try {
    const rows = readErrorsAs(file, parser as AsyncIterable<{ record: string[]; info: { lines: number } }>, () => last);
    for await (const { record, info } of rows) {
      last = info.lines;
      const [key, title, tags] = record;
      if (record.length !== 3 || !KEY.test(key ?? ''))
        throw new InputRefused(`${file}:${info.lines}: expected item,title,tags with a key of [A-Za-z0-9_.-]`);
      const list = (tags ?? '').split('|').map((t) => t.trim());
      out.set(key!, { title: title!.slice(0, 1000), tags: list.filter((t) => t && t !== '(no genres listed)') });
    }
  } catch (err) {
    if (err instanceof Error && 'code' in err && String(err.code).startsWith('CSV_'))
      throw new InputRefused(`${file}: ${err.message}`);
    throw err;
  } finally {
    input.close();
  }
  return out;
}

/** The index of `key` in `keys`, appending it (and calling `added`) when new. */
function indexOf(index: Map<string, number>, keys: string[], key: string, added?: () => void): number {
  let i = index.get(key);
  if (i === undefined) {
    i = keys.push(key) - 1;
    index.set(key, i);
    added?.();
  }
  return i;
}

function isNumber(s: string | undefined): boolean {
  return s !== undefined && s.trim() !== '' && Number.isFinite(Number(s));
}
