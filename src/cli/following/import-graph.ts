/**
 * `freshet import graph FILE`: streams a follow-edge list into the graph, with a progress bar. The file is
 * TSV (gzip when it ends in `.gz`) with the header `follower_id followee_id` — the format of
 * `../shared/data/graph/` (Slashdot Zoo, Twitter WSDM'21). Each row `a b` means user `<prefix>a` follows
 * user `<prefix>b` (`--prefix` keeps graphs with overlapping integer ids apart).
 *
 * Self-loops, rows without two fields and ids that are not `[A-Za-z0-9_.-]{1,64}` after the prefix are
 * skipped and counted. Edges go in batches through the `importFollows` use case (src/use-cases/verbs.ts):
 * one transaction per batch (new edges only, so a second run adds nothing; edges across a block are
 * skipped and counted; follower counts stay exact), then the inboxes of the batch's followers are dropped,
 * so their next read rebuilds them with the new authors' items. Follow time = the import's time. Like
 * `import hn`, it writes through the running server when there is one (`--url`, or the embedded server
 * named by `<dataDir>/server.json`: `POST /v1/follows`, the same use case), and opens the engine in this
 * process otherwise (src/cli/import.ts `writeTarget`). A file that stops being readable (a truncated gzip)
 * stops the import with the file, the line, what was committed and how to resume (src/cli/input-file.ts).
 * Progress on stderr (src/cli/progress.ts).
 */
import { openDirect } from '../open-direct.js';
import type { Config } from '../../compose/config.js';
import { isId } from '../../kernel/ids.js';
import type { Freshet } from '../../compose/open.js';
import { InputRefused, inputLines, openInput, stoppedMessage } from '../input-file.js';
import { Progress } from '../progress.js';
import { writeTarget } from '../import.js';
import { FreshetClient } from '../../client/index.js';

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
  const out = opts.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const started = performance.now();
  const sink = await graphSink(config, opts);
  const s: GraphImportSummary = { edges: 0, inserted: 0, blocked: 0, selfLoops: 0, invalid: 0, users: 0, elapsedMs: 0 };
  try {
    await importEdges(sink, file, opts, s);
  } finally {
    await sink.close();
  }
  s.elapsedMs = performance.now() - started;
  out(
    `imported ${s.edges} edges from ${file} (${s.inserted} new, ${s.blocked} across a block, ${s.selfLoops} self-loops and ${s.invalid} invalid rows skipped) ` +
      `in ${(s.elapsedMs / 1000).toFixed(1)}s into ${sink.target}${s.users > 0 ? `; ${s.users} users in the graph` : ''}`,
  );
  return s;
}

/** Where the edges go: the `importFollows` use case here, or `POST /v1/follows` of a running server. */
interface GraphSink {
  target: string;
  write(edges: [string, string][], nowMs: number): Promise<{ inserted: number; blocked: number }>;
  /** Users in the graph after the import (0: not known through a server). */
  users(): Promise<number>;
  close(): Promise<void>;
}

async function graphSink(config: Config, opts: GraphImportOptions): Promise<GraphSink> {
  if (opts.freshet) return directGraphSink(opts.freshet, 'the open engine', false);
  const t = await writeTarget(config, 'auto');
  if (t.kind === 'http') {
    const client = new FreshetClient({ baseUrl: t.url, serviceKey: t.key, timeoutMs: 300_000 });
    return {
      target: t.label,
      write: (edges, nowMs) =>
        client.follows.import(
          edges.map(([follower_id, followee_id]) => ({ follower_id, followee_id })),
          { now: nowMs },
        ),
      users: async () => 0,
      close: async () => {},
    };
  }
  const f = await openDirect(config);
  return directGraphSink(f, config.databaseUrl ? 'PostgreSQL' : 'PGlite', true);
}

function directGraphSink(f: Freshet, target: string, owned: boolean): GraphSink {
  return {
    target,
    write: (edges, nowMs) => f.useCases.importFollows(edges, nowMs),
    users: () => f.following.graph.countUsers(),
    close: async () => {
      if (owned) await f.close();
    },
  };
}

/** Streams the file into `f` batch by batch, counting into `s` (see the module doc). */
async function importEdges(
  sink: GraphSink,
  file: string,
  opts: GraphImportOptions,
  s: GraphImportSummary,
): Promise<void> {
  const prefix = opts.prefix ?? '';
  const batchSize = opts.batchSize ?? 5_000;
  const nowMs = opts.nowMs ?? Date.now();
  const input = openInput(file);
  const bar = new Progress({ label: 'import graph', total: input.totalBytes, tty: opts.progress });
  let batch: [string, string][] = [];
  let line = 0;
  const done = { line: 1, edges: 0 }; // committed: the header, no edge
  const flush = async () => {
    const r = await sink.write(batch, nowMs);
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
          throw new InputRefused(
            `${file} is not a follow-edge list (its header is "${header.slice(0, 60)}") — pass a TSV whose header is follower_id<TAB>followee_id, e.g. ../shared/data/graph/slashdot0902_follow_edges.tsv.gz`,
          );
        continue;
      }
      const edge = parseEdge(text, prefix, s);
      if (edge) batch.push(edge);
      if (batch.length >= batchSize) await flush();
    }
    if (header === null) throw new InputRefused(`${file} is empty (no header) — pass a follow-edge list`);
    await flush();
    s.users = await sink.users();
  } catch (err) {
    if (err instanceof InputRefused) throw err;
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
