/**
 * Where the test suite finds its real services, and unique names so parallel runs never collide.
 * Tests never skip when a service is missing: they fail, and `.ci/run` starts the services.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Redis for tests (standalone). */
export const TEST_REDIS_URL = process.env.FRESHET_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
/** PostgreSQL server for tests (trust auth on loopback, database `test`). */
export const TEST_DATABASE_URL = process.env.FRESHET_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * The shared real data (HN, MIND, MovieLens, follow graphs), read in place and never copied:
 * `<repo>/../shared/data`, or FRESHET_TEST_DATA_DIR (a checkout elsewhere, e.g. a worktree).
 */
export const TEST_DATA_DIR =
  process.env.FRESHET_TEST_DATA_DIR ?? fileURLToPath(new URL('../../../shared/data', import.meta.url));

/** A file of {@link TEST_DATA_DIR}, e.g. `dataFile('hn/hn_posts_2015-09_to_2016-09_sample.csv.gz')`. */
export function dataFile(path: string): string {
  return join(TEST_DATA_DIR, path);
}

/** A fresh Redis key prefix such as `fst:3f9a1c:`. */
export function uniquePrefix(): string {
  return `fst:${randomBytes(4).toString('hex')}:`;
}

/** A fresh PostgreSQL schema name such as `t_3f9a1c2b`. */
export function uniqueSchema(): string {
  return `t_${randomBytes(4).toString('hex')}`;
}
