/**
 * View logs for `freshet replay views`: a CSV file (gzip when it ends in `.gz`) with a header, one
 * view per row, read by column name. The default is the MIND long impressions file
 * (`../shared/data/mind/mind_impressions_long.csv.gz`: `impression_id,user_id,time,news_id,position,clicked`,
 * one row per item shown to a reader — the hot-ranking design's page view; `clicked=1` rows are article opens).
 *
 * Columns are mapped by name (`item`, `visitor`, `time`); an optional `filter` keeps only rows whose
 * column equals a value (e.g. `clicked=1`). Times may be epoch seconds (≤ 11 digits), epoch ms
 * (12–13 digits) or ISO 8601; an ISO time without a zone is read as UTC (MIND states none).
 * Rows with a missing field, an unreadable time or a visitor outside the id pattern are skipped and
 * counted, never fatal. A log that stops being readable (a truncated gzip) ends the read with an
 * ImportReadError naming the file and the last line read whole (src/cli/input-file.ts).
 */
import { parse } from 'csv-parse';
import { isId } from '../../kernel/ids.js';
import { openInput, pipeInto, readErrorsAs } from '../input-file.js';

/** Which columns hold what. */
export interface ViewLogColumns {
  /** The viewed item's key in the log (mapped onto a Freshet item later). */
  item: string;
  /** The visitor (must be a valid id, `[A-Za-z0-9_.-]{1,64}`). */
  visitor: string;
  /** When the view happened. */
  time: string;
}

/** The MIND long impressions layout. */
export const MIND_COLUMNS: ViewLogColumns = { item: 'news_id', visitor: 'user_id', time: 'time' };

/** One usable row. */
export interface LogView {
  itemKey: string;
  visitorId: string;
  /** Logged time, epoch ms. */
  timeMs: number;
}

/** Reading options. */
export interface ViewLogOptions {
  columns: ViewLogColumns;
  /** Keep only rows where `column` equals `value`. */
  filter?: { column: string; value: string };
  /** Stop after this many usable rows (a bounded slice). */
  maxRows?: number;
  /** Called with compressed bytes read and the file size, for a progress bar. */
  progress?: (bytesRead: number, totalBytes: number) => void;
}

/** What a full read found besides the rows. */
export interface ViewLogStats {
  rows: number;
  skipped: number;
  /** Why the first skipped rows were skipped (up to 5). */
  skippedExamples: string[];
}

/**
 * Parses a logged time.
 * @returns epoch ms, or null when the text is not a time.
 */
export function parseLogTime(text: string): number | null {
  const t = text.trim();
  if (/^\d{1,11}$/.test(t)) return Number(t) * 1000;
  if (/^\d{12,13}$/.test(t)) return Number(t);
  if (!/^\d{4}-\d{2}-\d{2}/.test(t)) return null;
  const zoned = /([zZ]|[+-]\d{2}:?\d{2})$/.test(t) ? t : `${t}Z`;
  const ms = Date.parse(zoned);
  return Number.isFinite(ms) ? ms : null;
}

/** `column=value` → a filter. @throws Error when the text has no `=`. */
export function parseFilter(text: string): { column: string; value: string } {
  const i = text.indexOf('=');
  if (i <= 0) throw new Error(`filter ${JSON.stringify(text)} is not column=value`);
  return { column: text.slice(0, i), value: text.slice(i + 1) };
}

/**
 * Streams the usable rows of a view log, in file order.
 * @throws Error when the file cannot be opened or its header lacks a mapped column; ImportReadError
 *   (input-file.ts) when it stops being readable (truncated, corrupt), after the rows before it.
 */
export async function* readViewLog(path: string, opts: ViewLogOptions, stats?: ViewLogStats): AsyncGenerator<LogView> {
  const input = openInput(path, opts.progress);
  const parser = parse({ relax_column_count: true, skip_empty_lines: true });
  pipeInto(input, parser);
  const s = stats ?? { rows: 0, skipped: 0, skippedExamples: [] };
  let index: { item: number; visitor: number; time: number; filter: number } | null = null;
  let line = 1;
  const skip = (why: string) => {
    s.skipped++;
    if (s.skippedExamples.length < 5) s.skippedExamples.push(`line ${line}: ${why}`);
  };
  try {
    for await (const record of readErrorsAs(path, parser as AsyncIterable<string[]>, () => line)) {
      if (index === null) {
        index = headerIndex(path, record, opts);
        continue;
      }
      line++;
      if (opts.filter && record[index.filter] !== opts.filter.value) continue;
      const itemKey = record[index.item]?.trim() ?? '';
      const visitorId = record[index.visitor]?.trim() ?? '';
      const timeMs = parseLogTime(record[index.time] ?? '');
      if (itemKey === '') skip('empty item');
      else if (!isId(visitorId)) skip(`visitor ${JSON.stringify(visitorId)} is not an id`);
      else if (timeMs === null) skip(`time ${JSON.stringify(record[index.time])} is not a time`);
      else {
        s.rows++;
        yield { itemKey, visitorId, timeMs };
        if (opts.maxRows !== undefined && s.rows >= opts.maxRows) break;
      }
    }
  } finally {
    input.close();
  }
  if (index === null) throw new Error(`${path}: empty file (no header)`);
}

function headerIndex(path: string, header: string[], opts: ViewLogOptions) {
  const names = header.map((h) => h.trim());
  const at = (name: string) => {
    const i = names.indexOf(name);
    if (i < 0) throw new Error(`${path}: no column "${name}" (columns: ${names.join(', ')})`);
    return i;
  };
  const { item, visitor, time } = opts.columns;
  return { item: at(item), visitor: at(visitor), time: at(time), filter: opts.filter ? at(opts.filter.column) : -1 };
}
