/**
 * `freshet simulate live` (issue 25): the HN sample's points and comments as views and replies at wall
 * time, rate-limited and bounded. The plan's promises (pure), the runner on a manual clock against an
 * in-process server (what the server counted matches what the run reports; it stops at its bound, on
 * Ctrl-C after the requests in flight, on a server that stops answering, on a refused key; a 429 pauses
 * it), and the real command as a process against a server on a loopback port.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apportion, FEED_EVERY, LivePlan, RELOAD_EVERY, type LiveEvent } from '../../src/cli/live/plan.js';
import { readLivePosts, type LivePost } from '../../src/cli/live/posts.js';
import { runLive, TICK_MS, type LiveOptions } from '../../src/cli/live/run.js';
import type { ManualClock } from '../../src/kernel/clock.js';
import { injectFetch, SERVICE_KEY, startTestApp, type TestApp } from '../support/app.js';
import { spawnCli } from '../support/cli.js';
import { dataFile } from '../support/env.js';

const HN = dataFile('hn/hn_posts_2015-09_to_2016-09_sample.csv.gz');

/** A synthetic post (publishedAt in HN order by index). */
function post(i: number, points: number, comments: number): LivePost {
  const item = {
    id: `hn_${1000 + i}`,
    authorId: `a${i}`,
    title: `Post ${i}`,
    text: '',
    url: null,
    tags: [],
    publishedAt: Date.UTC(2016, 0, 1) + i * 60_000,
    popularity: points,
    lang: 'en',
  };
  return { item, points, comments };
}

/** Drains a plan as the runner would at `rate` over `durationMs`: every event, with the share of the run it was taken at. */
function drain(plan: LivePlan, rate: number, durationMs: number) {
  const events: { ev: LiveEvent; fraction: number }[] = [];
  for (let sent = 0; ; ) {
    const fraction = sent / ((rate * durationMs) / 1000);
    const ev = plan.next(fraction);
    if (ev === null) break;
    events.push({ ev, fraction });
    if (ev.kind !== 'publish') sent++;
  }
  return events;
}

describe('the plan', () => {
  it('apportions a budget in proportion, in integers that add up to it', () => {
    expect(apportion([2553, 781, 100], 100)).toEqual([74, 23, 3]); // 74.3, 22.7, 2.9
    expect(apportion([1, 1, 1], 2)).toEqual([1, 1, 0]);
    expect(apportion([0, 0], 5)).toEqual([0, 0]);
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 5000 }), { minLength: 1, maxLength: 40 }),
        fc.nat({ max: 100_000 }),
        (w, n) => {
          const out = apportion(w, n);
          const sum = w.reduce((a, b) => a + b, 0);
          expect(out.reduce((a, b) => a + b, 0)).toBe(sum === 0 ? 0 : n);
          out.forEach((x, i) => expect(Math.abs(x - (w[i]! * n) / (sum || 1))).toBeLessThan(1));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('spends exactly rate × duration events: every point and comment scaled alike, one feed page in 20, nothing twice per visitor', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat({ max: 3000 }), fc.nat({ max: 1000 })), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 60 }),
        fc.nat(),
        (counts, rate, seconds, seed) => {
          const posts = counts.map(([p, c], i) => post(i, p, c));
          const plan = new LivePlan(posts, { rate, durationMs: seconds * 1000, seed, tag: 't' });
          const budget = Math.round(rate * seconds);
          const raw = counts.reduce((s, [p, c]) => s + p + c, 0);
          const events = drain(plan, rate, seconds * 1000);
          const sent = events.filter((e) => e.ev.kind !== 'publish');
          if (plan.scale < 1) {
            expect(sent.length).toBe(budget);
            expect(plan.feeds).toBe(Math.floor(budget / FEED_EVERY));
          } else {
            expect(sent.length).toBe(raw + plan.feeds); // all of it fits
            expect(plan.feeds).toBeLessThanOrEqual(Math.floor(raw / (FEED_EVERY - 1)));
          }
          expect(sent.length).toBeLessThanOrEqual(budget);
          expect(plan.done).toBe(true);
          expect(plan.left).toBe(0);
          const feeds = sent.filter((e) => e.ev.kind === 'feed').length;
          expect(feeds).toBe(plan.feeds);
          // every post published once, before its first event
          const publishedAt = new Map<string, number>();
          events.forEach(({ ev }, i) => {
            if (ev.kind === 'publish') for (const p of ev.posts) publishedAt.set(p.id, i);
          });
          expect(publishedAt.size).toBe(posts.length);
          events.forEach(({ ev }, i) => {
            if (ev.kind === 'view' || ev.kind === 'reply') expect(publishedAt.get(ev.post.id)!).toBeLessThan(i);
          });
          const byPost = new Map(plan.posts.map((p) => [p, { views: [] as string[], reloads: 0, replies: 0 }]));
          for (const { ev } of sent) {
            if (ev.kind === 'reply') byPost.get(ev.post)!.replies++;
            else if (ev.kind === 'view' && ev.reload) byPost.get(ev.post)!.reloads++;
            else if (ev.kind === 'view') byPost.get(ev.post)!.views.push(ev.visitor);
          }
          for (const p of plan.posts) {
            const { views, reloads, replies } = byPost.get(p)!;
            expect(views.length + reloads).toBe(p.plannedViews);
            expect(replies).toBe(p.plannedReplies);
            expect(new Set(views).size).toBe(views.length); // distinct visitors: PV and UV both count
            expect(reloads).toBe(Math.max(0, Math.floor((p.plannedViews - 1) / RELOAD_EVERY)));
            // proportion: scaled alike (largest remainder: within one event of the ideal share)
            expect(Math.abs(p.plannedViews - p.source.points * plan.scale)).toBeLessThanOrEqual(1);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('publishes the older half at once and the rest over the first half of the run, so posts keep arriving', async () => {
    const posts = await readLivePosts(HN, 30);
    expect(posts.map((p) => p.points)).toEqual([...posts.map((p) => p.points)].sort((a, b) => b - a));
    expect(posts[0]).toMatchObject({
      points: 2553,
      comments: 781,
      item: { id: 'hn_12494998', title: 'Pardon Snowden' },
    });
    const plan = new LivePlan(posts, { rate: 20, durationMs: 600_000, seed: 1, tag: 't' });
    const at = new Map<string, number>();
    for (const { ev, fraction } of drain(plan, 20, 600_000))
      if (ev.kind === 'publish') for (const p of ev.posts) at.set(p.id, fraction);
    const times = plan.posts.map((p) => at.get(p.id)!);
    expect(times.slice(0, 15).every((f) => f === 0)).toBe(true);
    expect(times.slice(15).every((f) => f > 0 && f <= 0.51)).toBe(true);
    expect(new Set(times.slice(15)).size).toBe(15); // one by one
    // the newest HN post of the 30 (HN order) is published last
    expect(plan.posts.at(-1)!.source.item.publishedAt).toBe(Math.max(...posts.map((p) => p.item.publishedAt)));
  });
});

describe('the run, on a manual clock against an in-process server', () => {
  let t: TestApp;
  let posts: LivePost[];
  beforeAll(async () => {
    t = await startTestApp();
    posts = await readLivePosts(HN, 5);
  });
  afterAll(() => t.close());

  /** Options that drive the run on `t`'s clock: sleeping advances it. */
  const onClock = (clock: ManualClock, extra: Partial<LiveOptions> = {}): LiveOptions => ({
    url: 'http://inject',
    foundBy: '--url',
    serviceKey: SERVICE_KEY,
    keySource: 'FRESHET_SERVICE_KEY',
    posts,
    rate: 20,
    durationMs: 3000,
    clock,
    sleep: async (ms) => clock.advance(ms),
    fetch: injectFetch(t.app),
    progress: false,
    out: () => {},
    ...extra,
  });

  /** The hot counters and reply rows of one run's live posts. */
  async function counted(tag: string) {
    const [{ n } = { n: 0 }] = await t.sql.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM engagements WHERE kind = 'reply' AND item_id LIKE $1",
      [`live\\_${tag}\\_%`],
    );
    const published = await t.sql.query<{ id: string }>('SELECT id FROM items WHERE id LIKE $1', [`live\\_${tag}\\_%`]);
    const ids = published.map((r) => r.id);
    const hot = await Promise.all(ids.map((id) => t.client().hot.item(id)));
    return { ids, pv: hot.reduce((s, h) => s + h.pv, 0), uv: hot.reduce((s, h) => s + h.uv, 0), replies: n };
  }

  it('sends rate × duration events over the duration and stops there; the server counted what it reports', async () => {
    const started = t.clock.now();
    const { summary, failure } = await runLive(onClock(t.clock));
    expect(failure).toBeNull();
    expect(summary.reason).toBe('duration');
    expect(t.clock.now() - started).toBe(3000); // stopped at its bound, not a tick later
    const s = summary.stats;
    expect(s.answered).toBe(60); // 20/s × 3 s
    expect(s.failures).toBe(0);
    expect(s.feeds).toBe(3); // one page in 20 events
    expect(s.published).toBe(5);
    const c = await counted(summary.tag);
    expect(c.ids).toHaveLength(5);
    expect(s.views.counted).toBeGreaterThan(30);
    expect(c.pv).toBe(s.views.counted); // hot counters: what the run says was counted
    expect(c.uv).toBe(c.pv); // distinct visitors (small counts: the HyperLogLog is exact here)
    expect(c.replies).toBe(s.replies);
    expect(s.replies).toBeGreaterThan(0);
    // a visitor's reply is an engagement: the item leaves that visitor's feeds (exclusions)
    const [row] = await t.sql.query<{ reader_id: string; item_id: string }>(
      'SELECT reader_id, item_id FROM engagements WHERE item_id LIKE $1 LIMIT 1',
      [`live\\_${summary.tag}\\_%`],
    );
    const ex = await t.client({ reader: row!.reader_id }).exclusions.list();
    expect(ex.engaged).toContain(row!.item_id);
    // the hot ranking at wall time lists the republished posts (published now, inside the default 72h range)
    expect('page' in summary.hot && summary.hot.page.items.map((i) => i.id).some((id) => c.ids.includes(id))).toBe(
      true,
    );
  });

  it('Ctrl-C stops it after the requests in flight: nothing sent goes unreported', async () => {
    const stop = new AbortController();
    const start = t.clock.now();
    const { summary } = await runLive(
      onClock(t.clock, {
        durationMs: 60_000,
        signal: stop.signal,
        sleep: async (ms) => {
          t.clock.advance(ms);
          if (t.clock.now() - start >= 1000) stop.abort();
        },
      }),
    );
    expect(summary.reason).toBe('interrupted');
    expect(summary.elapsedMs).toBe(1000);
    expect(summary.stats.answered).toBe(20); // 1 s of events at 20/s
    const c = await counted(summary.tag);
    expect(c.pv).toBe(summary.stats.views.counted);
    expect(c.replies).toBe(summary.stats.replies);
  });

  it('a server that stops answering stops the run within stallMs, with the last error', async () => {
    let calls = 0;
    const inject = injectFetch(t.app);
    const fetchFn: typeof fetch = async (input, init) => {
      if (++calls > 3) throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:8080') });
      return inject(input, init);
    };
    const start = t.clock.now();
    const { summary, failure } = await runLive(
      onClock(t.clock, { durationMs: 600_000, fetch: fetchFn, stallMs: 5000 }),
    );
    expect(summary.reason).toBe('stalled');
    expect(t.clock.now() - start).toBeLessThanOrEqual(5000 + TICK_MS);
    expect(failure).toMatch(/the server at http:\/\/inject has not answered for 5 s \(last: network: .*\) — check it/);
    expect(summary.stats.failed.get('network')).toBeGreaterThan(0);
  });

  it('a refused service key stops it at once, naming where the key comes from', async () => {
    const { summary, failure } = await runLive(onClock(t.clock, { serviceKey: 'not-the-key-0123456789' }));
    expect(summary.reason).toBe('refused');
    expect(summary.elapsedMs).toBeLessThanOrEqual(TICK_MS);
    expect(failure).toMatch(
      /does not accept this command's service key \(401\): the key here comes from FRESHET_SERVICE_KEY/,
    );
  });
});

describe('the rate limit of the service key', () => {
  it('a 429 pauses sending for a second (no burst after it), and the summary names FRESHET_RATE_SERVICE', async () => {
    const t = await startTestApp({ env: { FRESHET_RATE_SERVICE: '10', FRESHET_RATE_WINDOW_S: '60' } });
    try {
      const lines: string[] = [];
      const { summary, failure } = await runLive({
        url: 'http://inject',
        foundBy: '--url',
        serviceKey: SERVICE_KEY,
        keySource: 'FRESHET_SERVICE_KEY',
        posts: await readLivePosts(HN, 3),
        rate: 20,
        durationMs: 3000,
        clock: t.clock,
        sleep: async (ms) => t.clock.advance(ms),
        fetch: injectFetch(t.app),
        progress: false,
        out: (l) => lines.push(l),
      });
      expect(failure).toBeNull();
      expect(summary.reason).toBe('duration');
      expect(summary.stats.rateLimited).toBeGreaterThan(0);
      // paused a second after each 429, its events dropped rather than sent in a burst later: without the
      // pause 31 of the 60 events are refused here
      expect(summary.stats.behind).toBeGreaterThan(0);
      expect(summary.stats.failed.get('429/42901')).toBeLessThanOrEqual(20);
      expect(summary.stats.answered).toBeLessThan(60);
      expect(lines.join('\n')).toMatch(/answered 429: the server limits the service key \(FRESHET_RATE_SERVICE\)/);
    } finally {
      await t.close();
    }
  });
});

describe('the command', () => {
  /** Runs `freshet <args>` to its end. */
  const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawnCli(args, { ...process.env, LOG_LEVEL: 'silent', FRESHET_SERVICE_KEY: SERVICE_KEY, ...env });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
      child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
      child.once('exit', (code) => resolve({ code, stdout, stderr }));
    });

  it('runs against a server on a loopback port for its --duration, and the server counted its views and replies', async () => {
    const t = await startTestApp();
    t.clock.set(Date.now()); // the command publishes at wall time: the server's clock follows it
    const follow = setInterval(() => t.clock.set(Date.now()), 50);
    try {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = t.app.server.address() as { port: number };
      const r = await run([
        'simulate',
        'live',
        '--url',
        `http://127.0.0.1:${port}`,
        '--duration',
        '0.05',
        '--posts',
        '5',
        '--hn',
        HN,
      ]);
      expect(r.stderr).not.toMatch(/freshet:/);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/ran {10}\d+s of 3s \(reached --duration\)/); // it stops at the first tick past 3 s
      const tag = /as live_(\d{14})_hn_<id>/.exec(r.stdout)![1]!;
      const answered = Number(/events {7}(\d+) answered/.exec(r.stdout)![1]);
      expect(answered).toBeGreaterThan(0);
      expect(answered).toBeLessThanOrEqual(60); // never more than rate × duration
      const counted = Number(/: (\d+) counted/.exec(r.stdout)![1]);
      const ids = (await readLivePosts(HN, 5)).map((p) => `live_${tag}_${p.item.id}`);
      const hot = await Promise.all(ids.map((id) => t.client().hot.item(id)));
      expect(hot.reduce((s, h) => s + h.pv, 0)).toBe(counted);
      expect(counted).toBeGreaterThan(0);
    } finally {
      clearInterval(follow);
      await t.close();
    }
  }, 60_000);

  it('says in one line when no server runs (exit 1) or an option is wrong (exit 2)', async () => {
    const [none, usage] = await Promise.all([
      run(['simulate', 'live', '--url', 'http://127.0.0.1:9', '--hn', HN]),
      run(['simulate', 'live', '--rate', '0']),
    ]);
    expect(none.code).toBe(1);
    expect(none.stderr.trim().split('\n')).toHaveLength(1);
    expect(none.stderr).toMatch(
      /^freshet: no Freshet server answers at http:\/\/127\.0\.0\.1:9 \(found by --url\): .* — start one with `freshet serve`, or pass --url\n$/,
    );
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(
      /^freshet: option '--rate <events\/s>' argument '0' is invalid\. must be an integer in 1\.\.1000 — see `freshet simulate live --help`\n$/,
    );
  }, 60_000);
});
