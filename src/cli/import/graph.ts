/**
 * `freshet import graph FILE`: streams a follow-edge list into the graph (users + follows), with a
 * progress bar. The file is TSV (gzip when it ends in `.gz`) with the header `follower_id followee_id`
 * — the format of `../shared/data/graph/` (Slashdot Zoo, Twitter WSDM'21). Each row `a b` means user
 * `<prefix>a` follows user `<prefix>b` (`--prefix` keeps graphs with overlapping integer ids apart).
 *
 * Self-loops, rows without two fields and ids that are not `[A-Za-z0-9_.-]{1,64}` after the prefix are
 * skipped and counted. Edges go in batches (idempotent: a second run adds nothing), follow time = the
 * import's time; follower counts are recomputed once at the end. Writes straight into the database,
 * so with the embedded PGlite database the server must not be running (it would hold the database).
 */
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { SingleBar, Presets } from 'cli-progress';
import type { Config } from '../../config.js';
import { isId } from '../../domain/ids.js';
import { openSql } from '../../container.js';
import { insertEdges, recountFollows } from '../../adapters/postgres/graph-import.js';
import { liveServer } from './index.js';

/** Options of {@link runGraphImport}. */
export interface GraphImportOptions {
  /** Prepended to every node id (default ''). */
  prefix?: string;
  /** Edges per transaction (default 5,000). */
  batchSize?: number;
  /** Show the progress bar (default: when stderr is a TTY). */
  progress?: boolean;
  out?: (line: string) => void;
  /** Follow time of the imported edges, epoch ms (default now). */
  nowMs?: number;
}

/** What an import did. */
export interface GraphImportSummary {
  edges: number;
  inserted: number;
  selfLoops: number;
  invalid: number;
  users: number;
  elapsedMs: number;
}

/**
 * Imports the edge list into the configured database.
 * @throws Error when the file cannot be read, its header is not `follower_id followee_id`, or the
 *   embedded server holds the PGlite database.
 */
export async function runGraphImport(file: string, config: Config, opts: GraphImportOptions = {}): Promise<GraphImportSummary> {
  if (!config.databaseUrl && liveServer(config.dataDir)) throw new Error('the embedded server is running and holds the PGlite database: stop it first (or use FRESHET_DATABASE_URL)');
  const prefix = opts.prefix ?? '';
  const batchSize = opts.batchSize ?? 5_000;
  const out = opts.out ?? ((line: string) => process.stdout.write(line + '\n'));
  const started = performance.now();
  // Open the database before the stream: readline drops lines emitted before its iterator exists.
  const sql = await openSql(config);
  const totalBytes = statSync(file).size;
  let bytesRead = 0;
  const raw = createReadStream(file);
  raw.on('data', (chunk) => (bytesRead += chunk.length));
  const lines = createInterface({ input: file.endsWith('.gz') ? raw.pipe(createGunzip()) : raw, crlfDelay: Infinity });
  const bar = (opts.progress ?? Boolean(process.stderr.isTTY))
    ? new SingleBar({ stream: process.stderr, format: 'graph [{bar}] {percentage}% | {edges} edges | {eta_formatted}', hideCursor: true }, Presets.shades_classic)
    : null;
  bar?.start(totalBytes, 0, { edges: 0 });
  const s: GraphImportSummary = { edges: 0, inserted: 0, selfLoops: 0, invalid: 0, users: 0, elapsedMs: 0 };
  const nowMs = opts.nowMs ?? Date.now();
  try {
    let header: string | null = null;
    let batch: [string, string][] = [];
    const flush = async () => {
      s.inserted += await insertEdges(sql, batch, nowMs);
      batch = [];
      bar?.update(bytesRead, { edges: s.edges });
    };
    for await (const line of lines) {
      if (line.trim() === '') continue;
      if (header === null) {
        header = line.trim();
        if (!/^follower_id\s+followee_id$/.test(header)) throw new Error(`${file}: not a follow-edge list (header "${header}", expected "follower_id<TAB>followee_id")`);
        continue;
      }
      const [a, b, extra] = line.trim().split(/\s+/);
      const follower = `${prefix}${a ?? ''}`;
      const followee = `${prefix}${b ?? ''}`;
      if (extra !== undefined || !isId(follower) || !isId(followee) || !a || !b) s.invalid++;
      else if (follower === followee) s.selfLoops++;
      else {
        batch.push([follower, followee]);
        s.edges++;
        if (batch.length >= batchSize) await flush();
      }
    }
    if (header === null) throw new Error(`${file}: empty file (no header)`);
    await flush();
    await recountFollows(sql);
    const [row] = await sql.query<{ n: number | string }>(`SELECT count(*) AS n FROM users`);
    s.users = Number(row?.n ?? 0);
  } finally {
    bar?.stop();
    await sql.close();
  }
  s.elapsedMs = performance.now() - started;
  out(
    `imported ${s.edges} edges from ${file} (${s.inserted} new, ${s.selfLoops} self-loops and ${s.invalid} invalid rows skipped) ` +
      `in ${(s.elapsedMs / 1000).toFixed(1)}s; ${s.users} users in the graph`,
  );
  return s;
}
