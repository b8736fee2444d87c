/**
 * Where an id still appears: every PostgreSQL table of a test app's schema (each row as text), every Redis
 * key under its prefix (the name, and the value's serialized bytes: `DUMP`, on every master), and every
 * file of its data folder. Erase tests (test/app/erase.test.ts) use it to show nothing is left.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster } from 'ioredis';
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
