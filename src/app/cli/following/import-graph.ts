/**
 * `freshet import graph FILE`: streams a follow-edge list into the graph, with a progress bar. The file is
 * TSV (gzip when it ends in `.gz`) with the header `follower_id followee_id` — the format of
 * `../shared/data/graph/` (Slashdot Zoo, Twitter WSDM'21). Each row `a b` means user `<prefix>a` follows
 * user `<prefix>b` (`--prefix` keeps graphs with overlapping integer ids apart).
 *
 * Self-loops, rows without two fields and ids that are not `[A-Za-z0-9_.-]{1,64}` after the prefix are
 * skipped and counted. Edges go in batches through the `importFollows` use case (src/app/use-cases.ts):
 * one transaction per batch (new edges only, so a second run adds nothing; edges across a block are
 * skipped and counted; follower counts stay exact), then the inboxes of the batch's followers are dropped,
 * so their next read rebuilds them with the new authors' items. Follow time = the import's time. It opens
 * the engine in this process, so with the embedded PGlite database the server must not be running (it
 * holds the data folder's lock; the command refuses). A file that stops being readable (a truncated gzip)
 * stops the import with the file, the line, what was committed and how to resume (src/app/cli/input-file.ts).
 * Progress on stderr (src/app/cli/progress.ts).
 */
import { ensureSecrets, forJobs, type Config } from '../../config.js';
import { isId } from '../../../kernel/ids.js';
import { openFreshet, type Freshet } from '../../open.js';
import { inputLines, openInput, stoppedMessage } from '../input-file.js';
import { cliLogger } from '../log.js';
import { Progress } from '../progress.js';
import { refuseBesideServer } from '../server.js';

/** Options of {@link runGraphImport}. */
export interface GraphImportOptions {
  /** Prepended to every node id (default ''). */
  prefix?: string;
  /** Edges per transaction (default 5,000). */
  batchSize?: number;
  /** Draw a progress bar (default: when stderr is a TTY; otherwise a progress line every 5 s). */
  progress?: boolean;
  /** Write through this open engine (left open) instead of one opened on the configuration (simulations). */
  freshet?: Freshet;
  out?: (line: string) => void;
  /** Follow time of the imported edges, epoch ms (default now). */
  nowMs?: number;
}

/** What an import did. */
export interface GraphImportSummary {
  edges: number;
  inserted: number;
  /** Edges skipped because one of the two users blocks the other. */
  blocked: number;
  selfLoops: number;
  invalid: number;
  users: number;
  elapsedMs: number;
}

/** The header a follow-edge list starts with. */
const HEADER = /^follower_id\s+followee_id$/;

/**
 * Imports the edge list into the configured stores.
 * @throws Error when the file cannot be opened, its header is not `follower_id followee_id`, the embedded
 *   server holds the PGlite database, or the import stopped part-way (a truncated file, a store error:
 *   the message says what was committed and to run the same command again).
 */
export async function runGraphImport(
  file: string,
  config: Config,
  opts: GraphImportOptions = {},
): Promise<GraphImportSummary> {
  if (!opts.freshet)
    refuseBesideServer(
      config,
      'import graph',
      'stop it first (the graph import opens the database), or use FRESHET_DATABASE_URL',
    );
  const out = opts.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const started = performance.now();
  const f =
    opts.freshet ??
    (await openFreshet(forJobs(ensureSecrets(config).config), {
      log: cliLogger(config),
      defaultMetrics: false,
      recoverHot: false,
    }));
  const s: GraphImportSummary = { edges: 0, inserted: 0, blocked: 0, selfLoops: 0, invalid: 0, users: 0, elapsedMs: 0 };
  try {
    await importEdges(f, file, opts, s);
  } finally {
    if (!opts.freshet) await f.close();
  }
  s.elapsedMs = performance.now() - started;
  out(
    `imported ${s.edges} edges from ${file} (${s.inserted} new, ${s.blocked} across a block, ${s.selfLoops} self-loops and ${s.invalid} invalid rows skipped) ` +
      `in ${(s.elapsedMs / 1000).toFixed(1)}s; ${s.users} users in the graph`,
  );
  return s;
}

/** The file is not a follow-edge list: refused before anything is written. */
class NotAnEdgeList extends Error {}

/** Streams the file into `f` batch by batch, counting into `s` (see the module doc). */
async function importEdges(f: Freshet, file: string, opts: GraphImportOptions, s: GraphImportSummary): Promise<void> {
  const prefix = opts.prefix ?? '';
  const batchSize = opts.batchSize ?? 5_000;
  const nowMs = opts.nowMs ?? Date.now();
  const input = openInput(file);
  const bar = new Progress({ label: 'import graph', total: input.totalBytes, tty: opts.progress });
  let batch: [string, string][] = [];
  let line = 0;
  const done = { line: 1, edges: 0 }; // committed: the header, no edge
  const flush = async () => {
    const r = await f.useCases.importFollows(batch, nowMs);
    s.inserted += r.inserted;
    s.blocked += r.blocked;
    Object.assign(done, { line, edges: s.edges });
    batch = [];
    bar.update(input.bytesRead(), `${s.edges} edges`);
  };
  try {
    let header: string | null = null;
    for await (const row of inputLines(input, file)) {
      line = row.line;
      const text = row.text.trim();
      if (text === '') continue;
      if (header === null) {
        header = text;
        if (!HEADER.test(header))
          throw new NotAnEdgeList(
            `${file}: not a follow-edge list (header "${header}", expected "follower_id<TAB>followee_id")`,
          );
        continue;
      }
      const edge = parseEdge(text, prefix, s);
      if (edge) batch.push(edge);
      if (batch.length >= batchSize) await flush();
    }
    if (header === null) throw new NotAnEdgeList(`${file}: empty file (no header)`);
    await flush();
    s.users = await f.following.graph.countUsers();
  } catch (err) {
    if (err instanceof NotAnEdgeList) throw err;
    const committed =
      done.edges === 0
        ? null
        : { what: `${done.edges} edges`, detail: `(${s.inserted} new, ${s.blocked} across a block)` };
    const resume =
      'The import is idempotent (an edge already there is left alone): fix the file (or the cause) and run the same command again to resume';
    throw new Error(stoppedMessage('import graph', err, { file, committedLine: done.line, committed, resume }), {
      cause: err,
    });
  } finally {
    bar.stop();
    input.close();
  }
}

/** One data row → an edge, or null (counted as a self-loop or invalid in `s`). */
function parseEdge(text: string, prefix: string, s: GraphImportSummary): [string, string] | null {
  const [a, b, extra] = text.split(/\s+/);
  const follower = `${prefix}${a ?? ''}`;
  const followee = `${prefix}${b ?? ''}`;
  if (extra !== undefined || !a || !b || !isId(follower) || !isId(followee)) s.invalid++;
  else if (follower === followee) s.selfLoops++;
  else {
    s.edges++;
    return [follower, followee];
  }
  return null;
}
