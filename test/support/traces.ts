/**
 * Where an id still appears: every PostgreSQL table of a test app's schema (each row as text), every Redis
 * key under its prefix (the name, and the value's serialized bytes: `DUMP`, on every master), and every
 * file of its data folder; and where a vector derived from an item's text is still kept (`item_embeddings`,
 * the vector index's snapshots). Erase tests (test/app/erase.test.ts) use it to show nothing is left.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
import { cosine } from '../../src/discover/embedding.js';
import type { RedisClient } from '../../src/kernel/redis/client.js';
import type { Sql } from '../../src/kernel/sql/sql.js';

/** Tables (of the current schema) holding `needle` in some row, with the count of such rows. */
export async function sqlTraces(sql: Sql, needle: string): Promise<Record<string, number>> {
  const tables = await sql.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
  );
  const out: Record<string, number> = {};
  for (const { table_name: t } of tables) {
    const [row] = await sql.query<{ n: number | string }>(`SELECT count(*) AS n FROM "${t}" x WHERE x::text LIKE $1`, [
      `%${needle}%`,
    ]);
    if (Number(row!.n) > 0) out[t] = Number(row!.n);
  }
  return out;
}

/** Redis keys under `prefix` whose name or serialized value holds `needle` (every master of a Cluster). */
export async function redisTraces(redis: RedisClient, prefix: string, needle: string): Promise<string[]> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const bytes = Buffer.from(needle);
  const out: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        if (key.includes(needle)) {
          out.push(key);
          continue;
        }
        const dump = await node.dumpBuffer(key);
        if (dump?.includes(bytes)) out.push(`${key} (value)`);
      }
    } while (cursor !== '0');
  }
  return out.sort();
}

/** Files under `dir` (recursively) whose bytes hold `needle`. */
export function fileTraces(dir: string, needle: string): string[] {
  const bytes = Buffer.from(needle);
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (readFileSync(p).includes(bytes)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/** The int8 codes stored for `itemIds` in `item_embeddings` (what an erase must leave nowhere). */
export async function storedVectors(sql: Sql, itemIds: readonly string[]): Promise<Int8Array[]> {
  const rows = await sql.query<{ vec: Uint8Array }>('SELECT vec FROM item_embeddings WHERE item_id = ANY($1::text[])', [
    itemIds,
  ]);
  return rows.map((r) => new Int8Array(r.vec.buffer, r.vec.byteOffset, r.vec.byteLength).slice());
}

/**
 * Where a vector close to one of `probes` (cosine ≥ 0.99: the same direction, as int8 codes) is still kept:
 * rows of `item_embeddings` (`item_embeddings <item_id>`; `sql` null: not read), and the slots of every snapshot generation of the
 * in-process vector index under `dataDir` (`<generation>/codes.i8 slot <n>`; discover-index/, files 0600).
 */
export async function vectorTraces(
  sql: Sql | null,
  dataDir: string | null,
  probes: readonly Int8Array[],
): Promise<string[]> {
  const out: string[] = [];
  const close = (v: ArrayLike<number>) => probes.some((p) => p.length === v.length && cosine(p, v) >= 0.99);
  const rows = sql
    ? await sql.query<{ item_id: string; vec: Uint8Array }>('SELECT item_id, vec FROM item_embeddings')
    : [];
  for (const r of rows)
    if (close(new Int8Array(r.vec.buffer, r.vec.byteOffset, r.vec.byteLength)))
      out.push(`item_embeddings ${r.item_id}`);
  const dir = dataDir === null ? null : join(dataDir, 'discover-index');
  if (dir === null || !existsSync(dir)) return out;
  for (const gen of readdirSync(dir)) {
    const codes = join(dir, gen, 'codes.i8');
    if (!existsSync(codes)) continue;
    const bytes = readFileSync(codes);
    const all = new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const dim = probes[0]?.length ?? 1;
    for (let s = 0; s * dim < all.length; s++)
      if (close(all.subarray(s * dim, (s + 1) * dim))) out.push(`${gen}/codes.i8 slot ${s}`);
  }
  return out;
}
