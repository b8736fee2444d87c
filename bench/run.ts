/**
 * `npm run bench`: every benchmark of bench/, one after the other, in one process (about 3–4
 * minutes on 2 cores, and 1–2 more for `evaluate`). Each prints its own tables; nothing asserts.
 * Each file also runs alone (`npx tsx bench/<name>.ts`). Needs Redis and PostgreSQL on loopback (see bench/README.md).
 */
import { run as bloomAccuracy } from './bloom-accuracy.js';
import { run as feed } from './feed.js';
import { run as seenFilter } from './seen-filter.js';
import { runMain } from './support.js';

const BENCHMARKS: [string, () => Promise<void>][] = [
  ['seen-filter', seenFilter],
  ['bloom-accuracy', bloomAccuracy],
  ['seen-stall', async () => (await import('./seen-stall.js')).run()],
  ['feed', feed],
  ['hot', async () => (await import('./hot.js')).run()],
  ['fanout', async () => (await import('./fanout.js')).run()],
  ['seen-strategies', async () => (await import('./seen-strategies.js')).run()],
  ['discover', async () => (await import('./discover.js')).run()],
  ['notifications', async () => (await import('./notifications.js')).run()],
  ['http', async () => (await import('./http.js')).run([1, 2])],
  ['request-cost', async () => (await import('./request-cost.js')).run(false)],
  ['memory', async () => (await import('./memory.js')).run()],
  ['learn', async () => (await import('./learn.js')).run([['100k', 100_000]])],
  ['evaluate', async () => (await import('./evaluate.js')).run(['random'])],
];

await runMain(async () => {
  for (const [name, bench] of BENCHMARKS) {
    const t = performance.now();
    await bench();
    console.log(`\n(${name}: ${((performance.now() - t) / 1000).toFixed(0)} s)`);
  }
});
