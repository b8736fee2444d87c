/**
 * Opens a Freshet in this process for a one-shot command that writes through the stores directly (import,
 * erase, export) when no server answers: job settings (`forJobs`), secrets made if missing, the CLI's
 * logger, no default process metrics, no hot recovery and no discover warm-up (a command needs neither).
 */
import { ensureSecrets, forJobs, type Config } from '../compose/config.js';
import type { Freshet } from '../compose/open.js';
import { cliLogger } from './log.js';

/** The opened Freshet; the caller closes it. Throws what `openFreshet` throws (a store that cannot be reached). */
export async function openDirect(config: Config): Promise<Freshet> {
  const { openFreshet } = await import('../compose/open.js');
  return openFreshet(forJobs(ensureSecrets(config).config), {
    log: cliLogger(config),
    defaultMetrics: false,
    recoverHot: false,
    warmDiscover: false,
  });
}
