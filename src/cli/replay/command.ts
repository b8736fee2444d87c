/**
 * The command-line side of the hot ranking: `freshet replay views` (opens the configured stores and
 * runs {@link replayViews}) and `freshet hot rebuild` (restores lost hot-counter shards from the
 * PostgreSQL checkpoints). Both open the stores themselves, so with the embedded default (PGlite,
 * single-process) they refuse to run while `freshet serve` holds the data folder.
 */
import { loadConfig, ensureSecrets, type Config } from '../../config.js';
import { openFreshet } from '../../container.js';
import { liveServer } from '../import/index.js';
import { MIND_COLUMNS, parseFilter, type ViewLogColumns } from './view-log.js';
import { replayViews, type ReplayReport } from './views.js';

/** Options of `freshet replay views` as parsed by commander. */
export interface ReplayCliOptions {
  log: string;
  hn: string;
  map: 'hn' | 'direct';
  itemCol: string;
  visitorCol: string;
  timeCol: string;
  filter?: string;
  rows?: number;
  start?: string;
  rescoreMin: number;
  reportHours: number;
  top: number;
  concurrency: number;
  visitorBudget?: number;
}

/** The config to open, refusing an embedded data folder a running server holds. */
function configFor(overrides: (c: Config) => Config = (c) => c): Config {
  const config = overrides(ensureSecrets(loadConfig()).config);
  if (!config.databaseUrl) {
    const server = liveServer(config.dataDir);
    if (server) throw new Error(`a Freshet server (pid ${server.pid}) holds ${config.dataDir}: stop it first (PGlite is single-process)`);
  }
  return config;
}

/** `freshet replay views`. */
export async function runReplayCommand(o: ReplayCliOptions): Promise<ReplayReport> {
  const config = configFor((c) => (o.visitorBudget ? { ...c, hot: { ...c.hot, visitorBudgetPerMinute: o.visitorBudget } } : c));
  if (o.map !== 'hn' && o.map !== 'direct') throw new Error(`--map must be hn or direct`);
  const columns: ViewLogColumns = { item: o.itemCol ?? MIND_COLUMNS.item, visitor: o.visitorCol ?? MIND_COLUMNS.visitor, time: o.timeCol ?? MIND_COLUMNS.time };
  const f = await openFreshet(config);
  try {
    return await replayViews(
      { hot: f.hot, maintenance: f.hotMaintenance, counters: f.hotCounters, content: f.content },
      {
        logPath: o.log,
        columns,
        filter: o.filter ? parseFilter(o.filter) : undefined,
        maxRows: o.rows,
        mapping: o.map,
        hnPath: o.hn,
        start: o.start,
        rescoreEveryMs: o.rescoreMin * 60_000,
        reportEveryMs: o.reportHours * 3_600_000,
        top: o.top,
        concurrency: o.concurrency,
      },
    );
  } finally {
    await f.close();
  }
}

/** `freshet hot rebuild`: prints which shards were restored and how many items. */
export async function runHotRebuild(): Promise<void> {
  const f = await openFreshet(configFor(), { recoverHot: false });
  try {
    const lost = await f.hotCounters.lostShards();
    if (lost.length === 0) {
      console.log('no hot-counter shard has lost its state: nothing to rebuild');
      return;
    }
    const t0 = performance.now();
    const r = await f.hotMaintenance.recover(f.clock.now());
    console.log(`rebuilt ${r.shards.length} shard(s) [${r.shards.join(', ')}] from the checkpoints: ${r.restored} items in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    await f.close();
  }
}
