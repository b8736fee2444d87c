/**
 * `freshet import <format> <file>`: pluggable importers writing items into Freshet, idempotently
 * (upsert by id: a second run of the same file inserts nothing).
 *
 * The sink is chosen so the single-process PGlite database is never opened twice:
 * - embedded default (no `FRESHET_DATABASE_URL`) and `<dataDir>/server.json` names a live process
 *   → batches are POSTed to that server's `/v1/items` with the service key;
 * - otherwise → written directly through {@link openContent} (PGlite in `<dataDir>/pgdata`, or the
 *   configured PostgreSQL server, which takes concurrent writers anyway), each batch's text
 *   embeddings (discover feed) first, as `POST /v1/items` does — so imported items are in the discover
 *   feed's vector search at once, either way.
 *
 * A progress bar (compressed bytes read) goes to stderr when stderr is a TTY; a summary line is
 * always printed at the end.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import { ensureSecrets, type Config } from '../../config.js';
import type { ItemInput } from '../../ports/content-store.js';
import { itemToJson, type ItemJson } from '../../domain/item.js';
import { parseHn, type ParsedBatch, type ParseOptions, type SkippedRow } from './hn.js';

/** A streaming parser of one file format. */
export interface Importer {
  /** One line for `--help`. */
  description: string;
  parse(file: string, opts?: ParseOptions): AsyncIterable<ParsedBatch>;
}

/** The registry of formats: add a parser here and `freshet import <format>` knows it. */
export const importers: Readonly<Record<string, Importer>> = {
  hn: { description: 'Hacker News posts CSV (id,title,url,num_points,num_comments,author,created_at,created_at_unix), .csv or .csv.gz', parse: parseHn },
};

/** Options of {@link runImport}. */
export interface ImportOptions {
  /** Items per write (default 500; at most 1000, the API's limit per request). */
  batchSize?: number;
  /** Where to write: `auto` (default, see the module doc), or force `http` / `direct`. */
  sink?: 'auto' | 'http' | 'direct';
  /** Show the progress bar (default: when stderr is a TTY). */
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

/** The embedded server's marker `<dataDir>/server.json`, when it names a live process. */
export function liveServer(dataDir: string): { pid: number; host: string; port: number } | null {
  const path = join(dataDir, 'server.json');
  if (!existsSync(path)) return null;
  let marker: { pid?: unknown; host?: unknown; port?: unknown };
  try {
    marker = JSON.parse(readFileSync(path, 'utf8')) as typeof marker;
  } catch {
    return null;
  }
  const { pid, host, port } = marker;
  if (typeof pid !== 'number' || typeof port !== 'number' || port <= 0) return null;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return null; // ESRCH: the server is gone
  }
  const h = typeof host === 'string' && host !== '0.0.0.0' && host !== '::' && host !== '' ? host : '127.0.0.1';
  return { pid, host: h, port };
}

/** Maps an item to the JSON body of `POST /v1/items` (the response shape less `update_time`). */
export function itemToRequestJson(item: ItemInput): Omit<ItemJson, 'update_time'> {
  const { update_time: _unused, ...json } = itemToJson({ ...item, updateTime: 0 });
  return json;
}

function httpSink(baseUrl: string, serviceKey: string, label: string): Sink {
  return {
    target: label,
    async write(items) {
      const res = await fetch(`${baseUrl}/v1/items`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${serviceKey}` },
        body: JSON.stringify(items.map(itemToRequestJson)),
      });
      const text = await res.text();
      let body: { code?: number; msg?: string; data?: { inserted?: number; updated?: number } } = {};
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        /* reported below */
      }
      if (!res.ok || body.code !== 0 || typeof body.data?.inserted !== 'number') {
        throw new Error(`POST ${baseUrl}/v1/items answered ${res.status}: ${body.msg ?? text.slice(0, 200)}`);
      }
      return { inserted: body.data.inserted, updated: body.data.updated ?? 0 };
    },
    close: async () => {},
  };
}

async function directSink(config: Config): Promise<Sink> {
  const { openSql } = await import('../../container.js');
  const { discoverEmbeddings } = await import('../../container-discover.js');
  const { PostgresContentStore } = await import('../../adapters/postgres/content-store.js');
  const sql = await openSql(config);
  const content = new PostgresContentStore(sql);
  const embeddings = discoverEmbeddings(config, sql);
  const target = config.databaseUrl ? `PostgreSQL ${redactUrl(config.databaseUrl)}` : `PGlite ${join(config.dataDir, 'pgdata')}`;
  const write = async (items: readonly ItemInput[]) => {
    const now = Date.now();
    await embeddings.store(embeddings.records(items), now); // before the items, as the items route does
    return content.upsertItems(items, now);
  };
  return { target, write, close: () => sql.close() };
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

async function openSink(config: Config, mode: 'auto' | 'http' | 'direct'): Promise<Sink> {
  const server = mode === 'direct' || config.databaseUrl ? null : liveServer(config.dataDir);
  if (mode === 'http' && !server) throw new Error(`no running Freshet server found in ${join(config.dataDir, 'server.json')}`);
  if (!server) return directSink(config);
  const serviceKey = ensureSecrets(config).config.serviceKey!;
  const base = `http://${server.host.includes(':') ? `[${server.host}]` : server.host}:${server.port}`;
  return httpSink(base, serviceKey, `${base} (running server, pid ${server.pid})`);
}

/**
 * Imports `file` in `format` (a key of {@link importers}) into the store `config` names.
 * Prints the summary line `imported N items from <format> (I inserted, U updated, S skipped) in T s
 * into <target>` and returns it as an object.
 * @throws Error for an unknown format, an unreadable file or header, or a failed write (batches
 *   written before the failure stay written; re-running is safe).
 */
export async function runImport(format: string, file: string, config: Config, opts: ImportOptions = {}): Promise<ImportSummary> {
  const importer = importers[format];
  if (!importer) throw new Error(`unknown import format "${format}" (known: ${Object.keys(importers).join(', ')})`);
  const batchSize = Math.min(Math.max(1, opts.batchSize ?? 500), 1000);
  const out = opts.out ?? ((line: string) => process.stdout.write(line + '\n'));
  const warn = opts.warn ?? ((line: string) => process.stderr.write(line + '\n'));
  const maxSkipLines = opts.maxSkipLines ?? 10;
  const started = performance.now();
  const sink = await openSink(config, opts.sink ?? 'auto');
  const showBar = opts.progress ?? Boolean(process.stderr.isTTY);
  const bar = showBar
    ? new SingleBar({ stream: process.stderr, format: `${format} [{bar}] {percentage}% | {items} items | {skipped} skipped | {eta_formatted}`, hideCursor: true }, Presets.shades_classic)
    : null;
  const summary: ImportSummary = { format, file, items: 0, inserted: 0, updated: 0, skipped: 0, skippedRows: [], elapsedMs: 0, target: sink.target };
  let barStarted = false;
  try {
    for await (const batch of importer.parse(file, { batchSize })) {
      if (bar && !barStarted) {
        bar.start(batch.totalBytes, 0, { items: 0, skipped: 0 });
        barStarted = true;
      }
      for (const row of batch.skipped) {
        if (summary.skippedRows.length < maxSkipLines) {
          summary.skippedRows.push(row);
          warn(`skipped line ${row.line}: ${row.reason}`);
        }
      }
      summary.skipped += batch.skipped.length;
      if (batch.items.length > 0) {
        const r = await sink.write(batch.items);
        summary.inserted += r.inserted;
        summary.updated += r.updated;
        summary.items += batch.items.length;
      }
      bar?.update(batch.bytesRead, { items: summary.items, skipped: summary.skipped });
    }
  } finally {
    bar?.stop();
    await sink.close();
  }
  summary.elapsedMs = performance.now() - started;
  if (summary.skipped > summary.skippedRows.length) warn(`… and ${summary.skipped - summary.skippedRows.length} more skipped rows`);
  out(
    `imported ${summary.items} items from ${format} (${summary.inserted} inserted, ${summary.updated} updated, ` +
      `${summary.skipped} skipped) in ${(summary.elapsedMs / 1000).toFixed(1)}s into ${summary.target}`,
  );
  return summary;
}
