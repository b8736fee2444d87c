/**
 * Fault: a fan-out worker killed with `kill -9` in the middle of a job (issue 10.8). Real
 * `freshet worker fanout` processes (the CLI command, on this test's PostgreSQL schema and Redis prefix)
 * consume the queue; an author with 600 followers who read publishes (one follower per chunk, so the job
 * runs a few seconds and checkpoints after each chunk); once 510 are done, the process running it (the
 * job records `<host>:<pid>`) is killed, and a reader's new item is published at once. That item stays
 * hidden while the dead worker's job pins the visibility watermark.
 * - Two workers: the other one — started before the lock expired — must move the job back (BullMQ's
 *   stalled check), finish it from its checkpoint, and make the new item visible within ~5 s of the kill.
 * - The only worker: nothing can take the job back until a new worker starts; that one must take it
 *   within lock + 2 × stalled interval of its start (+1 s of slack), whatever happened before.
 * Each prints its figures on one `[faults] …` line.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/kernel/sql/sql.js';
import { Keys } from '../../src/kernel/redis/keys.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/env.js';
import { SERVICE_KEY, T0, startTestApp, type TestApp } from '../support/app.js';
import { MIN, page, publish } from '../support/following.js';
import { spawnCli } from '../support/cli.js';
import { printFigures } from '../support/faults.js';
import { DEFAULT_LOCK_MS, DEFAULT_STALLED_MS } from '../../src/following/adapters/bullmq-fanout-queue.js';

const FOLLOWERS = 600;
/** The job is killed once this many followers are done: the rest (~90 pushes) is what the survivor redoes. */
const KILL_AT = 510;
/** The goal of issue 10.8: a new item visible within ~5 s of the kill (1 s of slack for the loaded machine). */
const GOAL_MS = 6_000;
/** A new worker takes a dead one's job within lock + 2 × stalled interval of its start (+1 s of slack). */
const TAKE_BACK_MS = DEFAULT_LOCK_MS + 2 * DEFAULT_STALLED_MS + 1_000;

/** A running `freshet worker fanout` child and the output it printed so far. */
interface Child {
  proc: ChildProcess;
  out: string[];
  dir: string;
}

describe('fault: fan-out worker kill -9 mid-job', () => {
  let t: TestApp;
  let redis: Redis;
  const children: Child[] = [];

  beforeAll(async () => {
    t = await startTestApp({ hot: 'redis', db: 'postgres' }); // enqueues only: the children run the jobs
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    for (const c of children) {
      if (c.proc.exitCode === null && c.proc.signalCode === null) {
        const exited = new Promise((resolve) => c.proc.once('exit', resolve));
        c.proc.kill('SIGKILL');
        await exited;
      }
      rmSync(c.dir, { recursive: true, force: true });
    }
    redis?.disconnect();
    await t?.close();
  });

  /** Starts `freshet worker fanout` on this test's stores; resolves once it says it runs. */
  async function startWorker(): Promise<Child> {
    const url = new URL(TEST_DATABASE_URL);
    url.searchParams.set('options', `-c search_path=${t.schema}`);
    const dir = mkdtempSync(join(tmpdir(), 'freshet-worker-kill-'));
    const env = {
      ...process.env,
      LOG_LEVEL: 'info',
      FRESHET_DATA_DIR: dir,
      FRESHET_DATABASE_URL: url.toString(),
      FRESHET_REDIS_URL: TEST_REDIS_URL,
      FRESHET_KEY_PREFIX: t.config.keyPrefix,
      FRESHET_SERVICE_KEY: SERVICE_KEY,
      FRESHET_SECRET: 'worker-kill-secret-0123456789',
      FRESHET_FANOUT_CHUNK: '1',
      FRESHET_FANOUT_CONCURRENCY: '1',
    };
    const proc = spawnCli(['worker', 'fanout'], env);
    const child: Child = { proc, out: [], dir };
    children.push(child);
    const ready = new Promise<void>((resolve, reject) => {
      const onData = (b: Buffer) => {
        child.out.push(b.toString());
        if (child.out.join('').includes('fan-out worker running')) resolve();
      };
      proc.stdout!.on('data', onData);
      proc.stderr!.on('data', onData);
      proc.once('exit', (code) => reject(new Error(`worker exited (${code}) before running: ${child.out.join('')}`)));
    });
    await ready;
    return child;
  }

  /** Children that run: spawned by this file and not killed. */
  const alive = () => children.filter((c) => c.proc.exitCode === null && c.proc.signalCode === null);

  /**
   * Publishes `itemId` by wk_a (600 followers), waits until the job's checkpoint passes follower
   * KILL_AT, kills (`kill -9`) the worker running it, and publishes `newId` by wk_b at once.
   */
  async function killMidJob(itemId: string, newId: string, at: number) {
    const pids = new Map(alive().map((w) => [w.proc.pid!, w]));
    const publishedAt = Date.now();
    await publish(t, 'wk_a', [itemId], at);
    const [tid] = await t.f.following.index.tidsOf([itemId]);
    const jobKey = `${new Keys(t.config.keyPrefix).fanoutQueuePrefix()}:fanout:t${tid}`;
    let victim: Child | undefined;
    const runUntil = Date.now() + 30_000;
    while (!victim) {
      expect(Date.now(), 'the fan-out job never got that far').toBeLessThan(runUntil);
      const [pb, data] = await redis.hmget(jobKey, 'pb', 'data');
      const after = data ? ((JSON.parse(data) as { after?: string }).after ?? '') : '';
      if (pb && after >= `wk_f${String(KILL_AT).padStart(5, '0')}`) victim = pids.get(Number(pb.split(':').pop()));
      else await new Promise((r) => setTimeout(r, 10));
    }
    expect(victim, 'the job names a worker of this test').toBeDefined();
    const exited = new Promise((resolve) => victim!.proc.once('exit', resolve));
    victim.proc.kill('SIGKILL');
    const killedAt = Date.now();
    await exited;
    const doneAtKill = (JSON.parse((await redis.hget(jobKey, 'data'))!) as { after: string }).after;
    await publish(t, 'wk_b', [newId], at + MIN);
    return { jobKey, killedAt, intoJobMs: killedAt - publishedAt, doneAtKill };
  }

  /**
   * Polls until `pid` has taken the job back (it records its pid) and `newId` is visible in wk_r's
   * timeline; @returns ms since `fromMs` of each (-1: not within 30 s) and the timeline then.
   */
  async function recovery(jobKey: string, pid: number, newId: string, fromMs: number, readAt: number) {
    let visibleMs = -1;
    let resumedMs = -1;
    let ids: string[] = [];
    while (Date.now() < fromMs + 30_000) {
      if (resumedMs < 0 && ((await redis.hget(jobKey, 'pb')) ?? '').endsWith(`:${pid}`))
        resumedMs = Date.now() - fromMs;
      ids = (await page(t, 'wk_r', readAt)).ids;
      if (ids.includes(newId)) {
        visibleMs = Date.now() - fromMs;
        break;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    return { resumedMs, visibleMs, ids };
  }

  it('the job of a killed worker is run again by the other one, and a new item is visible within ~5 s', async () => {
    const workers = Promise.all([startWorker(), startWorker()]); // they boot while the graph is written
    workers.catch(() => undefined); // awaited below; a failed start is reported there
    // the graph: wk_a followed by 600 readers and by wk_r; wk_r also follows wk_b
    const sql = await openPostgres(TEST_DATABASE_URL, { schema: t.schema! });
    try {
      await sql.query(
        `INSERT INTO users (id, created_at, last_active_at)
         SELECT 'wk_f' || lpad(i::text, 5, '0'), $1::bigint, $1::bigint FROM generate_series(1, ${FOLLOWERS}) i
         UNION ALL SELECT u, $1::bigint, NULL FROM unnest(ARRAY['wk_a', 'wk_b', 'wk_r']) u`,
        [T0],
      );
      await sql.query(
        `INSERT INTO follows (follower_id, followee_id, created_at)
         SELECT 'wk_f' || lpad(i::text, 5, '0'), 'wk_a', $1::bigint FROM generate_series(1, ${FOLLOWERS}) i
         UNION ALL SELECT 'wk_r', a, $1::bigint FROM unnest(ARRAY['wk_a', 'wk_b']) a`,
        [T0],
      );
      await sql.query(
        `UPDATE users SET followers = (SELECT count(*) FROM follows WHERE followee_id = users.id), following = (SELECT count(*) FROM follows WHERE follower_id = users.id)`,
      );
    } finally {
      await sql.close();
    }
    expect((await page(t, 'wk_r', T0)).rebuilt).toBe(true); // wk_r reads: its inbox is ready
    await workers;

    const k = await killMidJob('wk_big', 'wk_new', T0 + MIN);
    const [survivor] = alive();
    const r = await recovery(k.jobKey, survivor!.proc.pid!, 'wk_new', k.killedAt, T0 + 3 * MIN);
    printFigures('worker kill -9 mid-job, two workers', {
      followers: FOLLOWERS,
      done_at_kill: k.doneAtKill,
      into_job_ms: k.intoJobMs,
      taken_back_after_kill_ms: r.resumedMs,
      new_item_visible_after_kill_ms: r.visibleMs,
      goal_ms: GOAL_MS,
    });
    expect(r.visibleMs, 'the new item never became visible').toBeGreaterThan(0);
    expect(r.ids).toEqual(['wk_new', 'wk_big']);
    expect(r.visibleMs).toBeLessThan(GOAL_MS);
    // finished and removed, by the survivor: `recovery` returns once the new item shows, which can be
    // before the taken-back job has reached its last followers
    await expect.poll(() => redis.exists(k.jobKey), { timeout: 30_000 }).toBe(0);
  }, 120_000);

  it('the only worker killed: a worker started later takes its job back within lock + 2 × stalled interval of its start', async () => {
    expect(alive()).toHaveLength(1); // the survivor of the test above is now the only worker
    const k = await killMidJob('wk_big2', 'wk_new2', T0 + 4 * MIN);
    expect(alive()).toHaveLength(0);
    const booting = Date.now();
    const fresh = await startWorker();
    const startedAt = Date.now(); // it said it runs
    const r = await recovery(k.jobKey, fresh.proc.pid!, 'wk_new2', startedAt, T0 + 6 * MIN);
    printFigures('worker kill -9 mid-job, the only worker', {
      followers: FOLLOWERS,
      done_at_kill: k.doneAtKill,
      new_worker_boot_ms: startedAt - booting,
      taken_back_after_start_ms: r.resumedMs,
      new_item_visible_after_start_ms: r.visibleMs,
      new_item_visible_after_kill_ms: r.visibleMs < 0 ? -1 : startedAt + r.visibleMs - k.killedAt,
      goal_ms: TAKE_BACK_MS,
    });
    expect(r.resumedMs, 'the new worker never took the job').toBeGreaterThanOrEqual(0);
    expect(r.resumedMs).toBeLessThan(TAKE_BACK_MS);
    expect(r.visibleMs, 'the new item never became visible').toBeGreaterThan(0);
    expect(r.ids.slice(0, 2)).toEqual(['wk_new2', 'wk_big2']);
    // finished and removed: the new item can show before the taken-back job reaches its last followers
    await expect.poll(() => redis.exists(k.jobKey), { timeout: 30_000 }).toBe(0);
  }, 120_000);
});
