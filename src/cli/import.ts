/**
 * `freshet import <format> <file>`: pluggable importers writing items into Freshet, idempotently
 * (upsert by id: a second run of the same file inserts nothing).
 *
 * The sink is chosen so the single-process PGlite database is never opened twice:
 * - `--url` given → batches are POSTed to that server's `/v1/items` with the service key;
 * - embedded default (no `FRESHET_DATABASE_URL`) and `<dataDir>/server.json` names a live process
 *   → the same, to that server;
 * - otherwise → written through a Freshet opened in this process (PGlite in `<dataDir>/pgdata` under the
 *   data folder's lock, or the configured PostgreSQL server, which takes concurrent writers anyway) by
 *   the same use case as `POST /v1/items` (`publishItems`: embeddings, items, hot counters, following
 *   timeline) — so imported items are in every feed either way.
 *
 * Progress (compressed bytes read) goes to stderr (src/cli/progress.ts); a summary line is printed
 * at the end. An import that stops (a truncated file, a refused write) says which file and line, what
 * was committed before, and that running the same command again resumes it (upsert by id).
 */
import { openDirect } from './open-direct.js';
import { join } from 'node:path';
import { readSecrets, type Config } from '../compose/config.js';
import type { ItemInput } from '../kernel/items/content-store.js';
import { itemToJson, type ItemJson } from '../kernel/items/item.js';
import { parseHn, type ParsedBatch, type ParseOptions, type SkippedRow } from './import-hn.js';
import { stoppedMessage } from './input-file.js';
import { FreshetClient, FreshetClientError } from '../client/index.js';
import { Progress } from './progress.js';
import {
  checkServer,
  findServer,
  keyMismatchMessage,
  liveServer,
  serverKey,
  serviceKeySource,
  ServerUnreachableError,
} from './server.js';

export { liveServer } from './server.js';

/** A streaming parser of one file format. */
export interface Importer {
  /** One line for `--help`. */
  description: string;
  parse(file: string, opts?: ParseOptions): AsyncIterable<ParsedBatch>;
}

/** The registry of formats: add a parser here and `freshet import <format>` knows it. */
export const importers: Readonly<Record<string, Importer>> = {
  hn: {
    description:
      'Hacker News posts CSV (id,title,url,num_points,num_comments,author,created_at,created_at_unix), .csv or .csv.gz',
    parse: parseHn,
  },
};

/** Options of {@link runImport}. */
export interface ImportOptions {
  /** Items per write (default 500; at most 1000, the API's limit per request). */
  batchSize?: number;
  /** Where to write: `auto` (default, see the module doc), or force `http` / `direct`. */
  sink?: 'auto' | 'http' | 'direct';
  /** Send to this server (implies `http`). */
  url?: string;
  /** Draw a progress bar (default: when stderr is a TTY; otherwise a progress line every 5 s). */
  progress?: boolean;
  /** Where the summary and warnings go (default: summary to stdout, warnings to stderr). */
  out?: (line: string) => void;
  warn?: (line: string) => void;
  /** How many skipped rows to print individually (default 10; the count is always printed). */
  maxSkipLines?: number;
}

/** What an import did. */
export interface ImportSummary {
  format: string;
  file: string;
  /** Items written (inserted + updated). */
  items: number;
  inserted: number;
  updated: number;
  /** Rows skipped as invalid. */
  skipped: number;
  /** The first skipped rows (up to `maxSkipLines`). */
  skippedRows: SkippedRow[];
  elapsedMs: number;
  /** Human description of the sink, e.g. `http://127.0.0.1:8080 (running server, pid 4242)`. */
  target: string;
}

/** Writes one batch; returns the store's counts. */
interface Sink {
  target: string;
  write(items: readonly ItemInput[]): Promise<{ inserted: number; updated: number }>;
  close(): Promise<void>;
}

/**
 * Maps an item to the JSON body of `POST /v1/items` (the response shape less `update_time`; without
 * `lang` when the item has none, so the server detects it).
 */
export function itemToRequestJson(item: ItemInput): Omit<ItemJson, 'update_time' | 'lang'> & { lang?: string } {
  const { update_time: _unused, lang, ...json } = itemToJson({ ...item, updateTime: 0 });
  return item.lang === undefined ? json : { ...json, lang };
}

function httpSink(baseUrl: string, serviceKey: string, keySource: string, label: string): Sink {
  // a batch of 1000 items computes embeddings on the server: a generous timeout; upserts are idempotent, so 503s are retried
  const client = new FreshetClient({ baseUrl, serviceKey, timeoutMs: 300_000 });
  return {
    target: label,
    async write(items) {
      try {
        return await client.items.publish(items.map(itemToRequestJson));
      } catch (err) {
        if (!(err instanceof FreshetClientError)) throw err;
        if (err.status === 401) throw new Error(keyMismatchMessage(baseUrl, keySource));
        throw new Error(`POST ${baseUrl}/v1/items answered ${err.kind === 'http' ? err.status : err.kind}: ${err.msg}`);
      }
    },
    close: async () => {},
  };
}

/**
 * Writes through a Freshet opened in this process, by the same use case as `POST /v1/items`
 * (embeddings → items → hot → following publish), so imported items reach every feed.
 */
async function directSink(config: Config): Promise<Sink> {
  const f = await openDirect(config);
  const target = config.databaseUrl
    ? `PostgreSQL ${redactUrl(config.databaseUrl)}`
    : `PGlite ${join(config.dataDir, 'pgdata')}`;
  return { target, write: (items) => f.useCases.publishItems(items, f.clock.now()), close: () => f.close() };
}

/** A database URL without its password. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<database url>';
  }
}

/** Where a CLI write goes: a running server (its URL, key and a label for messages), or `direct`. */
export type WriteTarget =
  | { kind: 'http'; url: string; key: string; keySource: string; label: string }
  | { kind: 'direct' };

/**
 * Chooses where an import writes (the module doc): `--url` or a live embedded server named by
 * `<dataDir>/server.json` → that server; otherwise (or `direct`) this process. Shared by `import hn`
 * and `import graph`, so both behave alike beside a running server.
 * @throws Error with `http` and no server found, or when the server refuses the key.
 */
export async function writeTarget(
  config: Config,
  mode: 'auto' | 'http' | 'direct',
  url?: string,
): Promise<WriteTarget> {
  const viaServer =
    url !== undefined || (mode !== 'direct' && !config.databaseUrl && liveServer(config.dataDir) !== null);
  if (mode === 'http' && !viaServer)
    throw new Error(`no running Freshet server found in ${join(config.dataDir, 'server.json')}`);
  if (!viaServer) return { kind: 'direct' };
  const withKey = readSecrets(config); // the server's key: read, never generated here
  const target = findServer(withKey, url);
  const keySource = serviceKeySource(withKey);
  const key = serverKey(withKey);
  try {
    await checkServer(target, key, keySource);
  } catch (err) {
    // server.json names a live pid that does not answer (a reused pid after a crash, a hung server):
    // write directly; the data folder's lock refuses if a process still holds the database.
    if (url === undefined && mode === 'auto' && err instanceof ServerUnreachableError) return { kind: 'direct' };
    throw err;
  }
  return {
    kind: 'http',
    url: target.url,
    key,
    keySource,
    label: `${target.url} (running server, found by ${target.foundBy})`,
  };
}

async function openSink(config: Config, mode: 'auto' | 'http' | 'direct', url?: string): Promise<Sink> {
  const t = await writeTarget(config, mode, url);
  return t.kind === 'direct' ? directSink(config) : httpSink(t.url, t.key, t.keySource, t.label);
}

/**
 * Imports `file` in `format` (a key of {@link importers}) into the store `config` names.
 * Prints the summary line `imported N items from <format> (I inserted, U updated, S skipped) in T s
 * into <target>` and returns it as an object.
 * @throws Error for an unknown format, an unreadable file or header, or a failed write (batches
 *   written before the failure stay written; re-running is safe).
 */
export async function runImport(
  format: string,
  file: string,
  config: Config,
  opts: ImportOptions = {},
): Promise<ImportSummary> {
  const importer = importers[format];
  if (!importer) throw new Error(`unknown import format "${format}" (known: ${Object.keys(importers).join(', ')})`);
  const batchSize = Math.min(Math.max(1, opts.batchSize ?? 500), 1000);
  const out = opts.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const warn = opts.warn ?? ((line: string) => process.stderr.write(`${line}\n`));
  const maxSkipLines = opts.maxSkipLines ?? 10;
  const started = performance.now();
  const sink = await openSink(config, opts.url ? 'http' : (opts.sink ?? 'auto'), opts.url);
  const progress = new Progress({ label: `import ${format}`, total: 0, tty: opts.progress });
  const summary: ImportSummary = {
    format,
    file,
    items: 0,
    inserted: 0,
    updated: 0,
    skipped: 0,
    skippedRows: [],
    elapsedMs: 0,
    target: sink.target,
  };
  let committedLine = 1; // the header
  try {
    for await (const batch of importer.parse(file, { batchSize })) {
      await importBatch(batch, sink, summary, (row) => {
        if (summary.skippedRows.length >= maxSkipLines) return;
        summary.skippedRows.push(row);
        warn(`skipped line ${row.line}: ${row.reason}`);
      });
      committedLine = batch.lastLine;
      progress.setTotal(batch.totalBytes);
      progress.update(batch.bytesRead, `${summary.items} items, ${summary.skipped} skipped`);
    }
  } catch (err) {
    throw new Error(importStopped(err, summary, file, committedLine), { cause: err });
  } finally {
    progress.stop();
    await sink.close();
  }
  summary.elapsedMs = performance.now() - started;
  if (summary.skipped > summary.skippedRows.length)
    warn(`… and ${summary.skipped - summary.skippedRows.length} more skipped rows`);
  out(
    `imported ${summary.items} items from ${format} (${summary.inserted} inserted, ${summary.updated} updated, ` +
      `${summary.skipped} skipped) in ${(summary.elapsedMs / 1000).toFixed(1)}s into ${summary.target}`,
  );
  return summary;
}

/** Writes one parsed batch through `sink` and counts it into `summary`; each skipped row goes to `skipped`. */
async function importBatch(
  batch: ParsedBatch,
  sink: Sink,
  summary: ImportSummary,
  skipped: (row: SkippedRow) => void,
): Promise<void> {
  for (const row of batch.skipped) skipped(row);
  summary.skipped += batch.skipped.length;
  if (batch.items.length === 0) return;
  const r = await sink.write(batch.items);
  summary.inserted += r.inserted;
  summary.updated += r.updated;
  summary.items += batch.items.length;
}

/**
 * What an import that stopped says: why (with file and line), exactly what was committed before, and how
 * to resume — running the same command again (upsert by id: committed items are updated, not doubled).
 */
function importStopped(err: unknown, s: ImportSummary, file: string, committedLine: number): string {
  return stoppedMessage('import', err, {
    file,
    committedLine,
    committed:
      s.items === 0
        ? null
        : {
            what: `${s.items} items`,
            detail: `(${s.inserted} inserted, ${s.updated} updated, ${s.skipped} rows skipped) into ${s.target}`,
          },
    resume:
      'The import is idempotent (upsert by id): fix the file (or the cause) and run the same command again to resume',
  });
}
