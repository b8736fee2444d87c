import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Bounds against a hang, never speed checks (speed is measured in bench/): files run in parallel
    // on a shared 2-core machine, where a test can take several times what it takes alone.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
    // Builds the migrated PGlite template the tests copy instead of creating a database each.
    globalSetup: ['./test/support/global-setup.ts'],
    pool: 'forks',
    // A fork keeps its module cache from one file to the next instead of importing the engine (and
    // compiling PGlite's WebAssembly) again for every file: measured 415 s → 290 s for the suite on this
    // 2-core machine, with the same results. Files therefore leave no global state behind — env
    // variables they set are restored, fake timers are put back, every store is closed.
    isolate: false,
    // Files run in parallel: each keeps to its own key prefix, schema and temp folders. Vitest's
    // default is one fork per core minus one — a single fork on this 2-core machine, one core idle
    // whenever a file waits on Redis, PostgreSQL, a cluster starting or a queue's backoff. Two forks
    // keep both cores busy; a third measured no faster on the shared machine and made the slowest
    // tests slower still (pool and hook timeouts), so one fork per core.
    maxWorkers: 2,
    minWorkers: 1,
  },
});
