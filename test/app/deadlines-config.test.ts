/**
 * The store deadlines' settings (docs/operations.md "Deadlines"): defaults of at most 1 s on the request
 * path and 5 min for jobs, their ranges, and `forJobs` giving a long-work process the job deadline
 * everywhere (what the CLI commands other than `serve` open with).
 */
import { describe, expect, it } from 'vitest';
import { forJobs, loadConfig } from '../../src/compose/config.js';

describe('store deadlines', () => {
  it('default to 1 s per request-path call and 5 min per job call', () => {
    expect(loadConfig({}).deadlines).toEqual({ redisMs: 1_000, sqlMs: 1_000, jobMs: 300_000 });
  });

  it('are read from FRESHET_REDIS_TIMEOUT_MS, FRESHET_SQL_TIMEOUT_MS and FRESHET_JOB_TIMEOUT_MS, within their ranges', () => {
    const env = { FRESHET_REDIS_TIMEOUT_MS: '250', FRESHET_SQL_TIMEOUT_MS: '750', FRESHET_JOB_TIMEOUT_MS: '60000' };
    expect(loadConfig(env).deadlines).toEqual({ redisMs: 250, sqlMs: 750, jobMs: 60_000 });
    expect(() => loadConfig({ FRESHET_REDIS_TIMEOUT_MS: '0' })).toThrow(/FRESHET_REDIS_TIMEOUT_MS/);
    expect(() => loadConfig({ FRESHET_SQL_TIMEOUT_MS: 'soon' })).toThrow(/FRESHET_SQL_TIMEOUT_MS/);
    expect(() => loadConfig({ FRESHET_JOB_TIMEOUT_MS: '999' })).toThrow(/FRESHET_JOB_TIMEOUT_MS/);
  });

  it('forJobs gives every client the job deadline and leaves the rest alone', () => {
    const config = loadConfig({ FRESHET_JOB_TIMEOUT_MS: '60000', FRESHET_KEY_PREFIX: 'x:' });
    const jobs = forJobs(config);
    expect(jobs.deadlines).toEqual({ redisMs: 60_000, sqlMs: 60_000, jobMs: 60_000 });
    expect({ ...jobs, deadlines: config.deadlines }).toEqual(config);
  });
});
