/**
 * Where the test suite finds its real services, and unique names so parallel runs never collide.
 * Tests never skip when a service is missing: they fail, and `.ci/run` starts the services.
 */
import { randomBytes } from 'node:crypto';

/** Redis for tests (standalone). */
export const TEST_REDIS_URL = process.env.FRESHET_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
/** PostgreSQL server for tests (trust auth on loopback, database `test`). */
export const TEST_DATABASE_URL = process.env.FRESHET_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A fresh Redis key prefix such as `fst:3f9a1c:`. */
export function uniquePrefix(): string {
  return `fst:${randomBytes(4).toString('hex')}:`;
}

/** A fresh PostgreSQL schema name such as `t_3f9a1c2b`. */
export function uniqueSchema(): string {
  return `t_${randomBytes(4).toString('hex')}`;
}
