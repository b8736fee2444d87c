import { defineConfig } from 'vitest/config';

/**
 * The deployment checks `.ci/run` runs after `npm test` (`npm run test:deploy`): the packed tarball in a
 * scratch application and the rehearsal on three hosts, in test/deploy/*.deploy.ts. They start real
 * processes, install packages and make network namespaces, so they run one file at a time, apart from the
 * suite (which runs test/deploy/*.test.ts: the fast checks of the same files and manifests).
 */
export default defineConfig({
  test: {
    include: ['test/deploy/**/*.deploy.ts'],
    testTimeout: 240_000,
    hookTimeout: 480_000,
    pool: 'forks',
    maxWorkers: 1,
    minWorkers: 1,
    fileParallelism: false,
  },
});
