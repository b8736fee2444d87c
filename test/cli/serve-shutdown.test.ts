/**
 * `freshet serve` shuts down within its grace (`FRESHET_SHUTDOWN_GRACE_S`, close-with-grace in
 * src/cli/serve.ts), and says so by its exit status: two real servers on PostgreSQL + a Redis of
 * their own each. With both stores answering, SIGTERM closes everything and exits 0 well within the
 * grace. With its Redis stalled (SIGSTOP: connections stay open, nothing answers — a hung or
 * overloaded store), closing cannot finish (the final hot checkpoint waits on Redis); the process does
 * not hang with it but exits 1 once the grace is over, after logging why.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/kernel/sql/sql.js';
import { TEST_DATABASE_URL, uniqueSchema } from '../support/env.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { onJsonLines, serveCli, spawnCli } from '../support/cli.js';

const GRACE_S = 4;
const tmp = mkdtempSync(join(tmpdir(), 'freshet-shutdown-'));
const schemas = [uniqueSchema(), uniqueSchema()];
const redises: RedisServer[] = [];

beforeAll(async () => {
  for (const schema of schemas) await (await openPostgres(TEST_DATABASE_URL, { schema })).close(); // creates it
  redises.push(await startRedisServer(), await startRedisServer());
});

afterAll(async () => {
  await Promise.all(redises.map((r) => r.stop()));
  const sql = await openPostgres(TEST_DATABASE_URL);
  for (const schema of schemas) await sql.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await sql.close();
  rmSync(tmp, { recursive: true, force: true });
});

function env(i: number): NodeJS.ProcessEnv {
  return {
    ...process.env,
    FRESHET_DATA_DIR: join(tmp, `data-${i}`),
    FRESHET_SERVICE_KEY: 'k'.repeat(24),
    FRESHET_SECRET: 's'.repeat(24),
    FRESHET_DATABASE_URL: `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schemas[i]}`)}`,
    FRESHET_REDIS_URL: redises[i]!.url,
    FRESHET_SHUTDOWN_GRACE_S: String(GRACE_S),
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
  };
}

/** Sends SIGTERM; resolves with the exit code and how long the process took to exit (ms). */
async function terminate(child: ChildProcess): Promise<{ code: number | null; signal: string | null; ms: number }> {
  const started = performance.now();
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  child.kill('SIGTERM');
  return { ...(await exited), ms: performance.now() - started };
}

describe('freshet serve on SIGTERM', () => {
  it('exits 0 when its stores close, and 1 after the grace when a store hangs on close', async () => {
    // one process each (no primary): the subject is serve's own close-with-grace
    const [healthy, stalled] = await Promise.all([
      serveCli(env(0), ['--workers', '1']),
      serveCli(env(1), ['--workers', '1']),
    ]);
    try {
      for (const s of [healthy, stalled]) expect((await fetch(`${s.url}/readyz`)).status).toBe(200);

      const clean = await terminate(healthy.child);
      expect(clean, healthy.lines.join('\n')).toMatchObject({ code: 0, signal: null });
      expect(clean.ms).toBeLessThan(GRACE_S * 1000);

      redises[1]!.pause();
      const hung = await terminate(stalled.child);
      expect(hung, stalled.lines.join('\n')).toMatchObject({ code: 1, signal: null }); // its own exit, not a kill from outside
      expect(hung.ms).toBeGreaterThanOrEqual(GRACE_S * 1000 - 100);
      expect(hung.ms).toBeLessThan(GRACE_S * 1000 + 15_000);
      const messages = stalled.lines.map((l) => (JSON.parse(l) as { msg?: string }).msg);
      expect(messages).toContain('shutting down');
      expect(messages).toContain(`killed by timeout (${GRACE_S * 1000}ms)`);
    } finally {
      redises[1]!.resume();
      for (const s of [healthy, stalled])
        if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    }
  }, 180_000);

  it('exits 0 when the signal comes while its workers are still starting (nothing is killed by signal)', async () => {
    // the primary with two workers: SIGTERM as soon as both are forked, long before they listen
    const child = spawnCli(['serve', '--workers', '2'], env(0));
    const messages: string[] = [];
    const workerExits: { code?: number | null; signal?: string | null }[] = [];
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const forked = new Promise<void>((resolve) => {
      let started = 0;
      onJsonLines<{ msg?: string; code?: number | null; signal?: string | null }>(child.stdout!, (entry) => {
        messages.push(entry.msg ?? '');
        if (entry.msg === 'worker exited' || entry.msg === 'worker died; replacing it')
          workerExits.push({ code: entry.code, signal: entry.signal });
        if (entry.msg === 'worker started' && ++started === 2) resolve();
      });
    });
    try {
      await forked;
      const stopped = await terminate(child);
      expect(stopped, `${messages.join('\n')}\n${stderr}`).toMatchObject({ code: 0, signal: null });
      expect(messages).not.toContain('freshet workers listening');
      // each worker closed what it had opened (exit 0), or was still loading and ended by the signal
      expect(workerExits).toHaveLength(2);
      for (const e of workerExits) expect(e.code === 0 || e.signal === 'SIGTERM', JSON.stringify(e)).toBe(true);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 120_000);
});
