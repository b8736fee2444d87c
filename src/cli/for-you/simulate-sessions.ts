/**
 * Reader sessions for `freshet simulate`, from the MIND behaviors log
 * (`../shared/data/mind/MINDsmall_train_sample_behaviors.tsv.gz`: tab-separated, no header,
 * `impression_id, user_id, time, history, impressions`, time as `M/D/YYYY h:mm:ss AM/PM`).
 *
 * Each row is one session of reader `user_id` at `time`. MIND states no time zone; we read the
 * times as UTC. The sessions are SHIFTED (never stretched) onto virtual time so the UTC midnight of
 * the first session lands on `start` (default 2016-09-20T00:00:00Z, the last days before the newest
 * HN post, 2016-09-26): real gaps between sessions, and so between one reader's repeat sessions,
 * are kept.
 *
 * About half the readers get explicit interests: those whose user id hashes (FNV-1a 32-bit) to an
 * even number get 2–4 terms from {@link INTEREST_TERMS}, picked by the hash; the others have none
 * and are served by freshness × popularity.
 */
import { DAY_MS } from '../../kernel/clock.js';
import { isId } from '../../kernel/ids.js';
import { fnv1a } from '../../kernel/hash.js';
import { inputLines, openInput } from '../input-file.js';

/** One replayed session. */
export interface MindSession {
  impressionId: string;
  userId: string;
  /** The logged time, epoch ms (read as UTC). */
  timeMs: number;
}

/** A session placed on virtual time. */
export interface VirtualSession extends MindSession {
  /** `timeMs` + the shift, epoch ms: the `X-Freshet-Now` of the session's first request. */
  virtualMs: number;
}

/** Default virtual start: the UTC midnight the first MIND day is moved to. */
export const DEFAULT_START = '2016-09-20T00:00:00Z';

/** Tech words common in HN titles, from which interests are drawn. */
export const INTEREST_TERMS = [
  'rust',
  'python',
  'startup',
  'security',
  'google',
  'apple',
  'ai',
  'linux',
  'javascript',
  'data',
] as const;

const MIND_TIME = /^(\d{1,2})\/(\d{1,2})\/(\d{4}) (\d{1,2}):(\d{2}):(\d{2}) (AM|PM)$/;

/**
 * Parses a MIND time `M/D/YYYY h:mm:ss AM/PM` as UTC.
 * @returns epoch ms, or null when the text is not such a time (or not a real date).
 */
export function parseMindTime(text: string): number | null {
  const m = MIND_TIME.exec(text.trim());
  if (!m) return null;
  const [month, day, year, hour12, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour12 < 1 || hour12 > 12 || minute > 59 || second > 59)
    return null;
  const hour = (hour12 % 12) + (m[7] === 'PM' ? 12 : 0);
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  return new Date(ms).getUTCDate() === day ? ms : null; // rejects 2/30 and the like
}

/**
 * Parses one behaviors line.
 * @returns the session, or a string saying why the line is invalid.
 */
export function parseBehaviorsLine(line: string): MindSession | string {
  const fields = line.split('\t');
  if (fields.length !== 5) return `${fields.length} fields, expected 5`;
  const [impressionId, userId, time] = fields as [string, string, string];
  if (!isId(userId)) return `user id ${JSON.stringify(userId)} is not a valid reader id`;
  const timeMs = parseMindTime(time);
  if (timeMs === null) return `time ${JSON.stringify(time)} is not M/D/YYYY h:mm:ss AM/PM`;
  return { impressionId, userId, timeMs };
}

/**
 * The error for a behaviors file without a single valid line (a file of another kind, an empty file).
 * @param invalid the file's invalid lines, first first.
 */
export function notMindError(path: string, invalid: readonly { line: number; reason: string }[]): Error {
  const first = invalid[0] ? ` (line ${invalid[0].line}: ${invalid[0].reason})` : ' (it has no lines)';
  return new Error(
    `${path}: not a MIND behaviors file${first}; expected lines of 5 tab-separated fields: ` +
      'impression id, user id, time (M/D/YYYY h:mm:ss AM/PM), history, impressions',
  );
}

/**
 * Reads a behaviors file (gzip when it ends in `.gz`).
 * @throws InputRefused when the file is missing or not a file; ImportReadError when it stops being readable.
 * @returns the valid sessions sorted by (time, impression id), and the invalid lines (1-based).
 */
export async function readMindSessions(
  path: string,
): Promise<{ sessions: MindSession[]; invalid: { line: number; reason: string }[] }> {
  const input = openInput(path);
  const sessions: MindSession[] = [];
  const invalid: { line: number; reason: string }[] = [];
  try {
    for await (const { text, line } of inputLines(input, path)) {
      if (text.trim() === '') continue;
      const s = parseBehaviorsLine(text);
      if (typeof s === 'string') invalid.push({ line, reason: s });
      else sessions.push(s);
    }
  } finally {
    input.close();
  }
  sessions.sort((a, b) => a.timeMs - b.timeMs || a.impressionId.localeCompare(b.impressionId));
  return { sessions, invalid };
}

/**
 * The shift (ms) that moves the UTC midnight of `firstMs` onto `startMs`: virtual = real + shift.
 */
export function shiftFor(firstMs: number, startMs: number): number {
  return startMs - Math.floor(firstMs / DAY_MS) * DAY_MS;
}

/**
 * Places sessions (sorted by time) on virtual time starting at `start` (ISO 8601).
 * @throws Error when `start` is not a date.
 */
export function shiftSessions(sessions: readonly MindSession[], start: string = DEFAULT_START): VirtualSession[] {
  const startMs = Date.parse(start);
  if (!Number.isFinite(startMs)) throw new Error(`start ${JSON.stringify(start)} is not an ISO 8601 date`);
  const first = sessions[0];
  if (!first) return [];
  const shift = shiftFor(first.timeMs, startMs);
  return sessions.map((s) => ({ ...s, virtualMs: s.timeMs + shift }));
}

/**
 * The interest terms given to a reader: [] when the hash of its id is odd; else 2–4 distinct terms
 * of {@link INTEREST_TERMS}, the same on every run.
 */
export function interestsFor(userId: string): string[] {
  let h = fnv1a(userId);
  if (h % 2 === 1) return [];
  const count = 2 + ((h >>> 1) % 3);
  const pool: string[] = [...INTEREST_TERMS];
  const terms: string[] = [];
  while (terms.length < count) {
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) >>> 0; // next deterministic draw
    terms.push(pool.splice(h % pool.length, 1)[0]!);
  }
  return terms;
}
