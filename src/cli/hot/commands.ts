/**
 * The command-line side of the hot ranking: `freshet replay views` (opens the configured stores and
 * runs {@link replayViews}) and `freshet hot rebuild` (restores lost hot-counter shards from the
 * PostgreSQL checkpoints). Both open the stores themselves, so with the embedded default (PGlite,
 * single-process) they refuse to run while `freshet serve` (or any process) holds the data folder.
 * They log to stderr (src/cli/log.ts); the replay prints progress (src/cli/progress.ts).
 */
import { loadConfig, ensureSecrets, forJobs, type Config } from '../../compose/config.js';
import { openFreshet } from '../../compose/open.js';
import { refuseBesideServer } from '../server.js';
import { cliLogger } from '../log.js';
import { Progress } from '../progress.js';
import { MIND_COLUMNS, parseFilter, type ViewLogColumns } from './view-log.js';
import { replayViews, type ReplayReport } from './replay-views.js';

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

/** The config to open, refusing an embedded data folder another process holds. */
function configFor(command: string, hint: string, overrides: (c: Config) => Config = (c) => c): Config {
  const config = overrides(ensureSecrets(loadConfig()).config);
  refuseBesideServer(config, command, hint);
  return config;
}

/** `freshet replay views`. */
export async function runReplayCommand(o: ReplayCliOptions): Promise<ReplayReport> {
  const config = configFor(
    'replay views',
    'stop it first (the replay rescores on virtual time in this process), or use FRESHET_DATABASE_URL',
    (c) => (o.visitorBudget ? { ...c, hot: { ...c.hot, visitorBudgetPerMinute: o.visitorBudget } } : c),
  );
  if (o.map !== 'hn' && o.map !== 'direct') throw new Error(`--map must be hn or direct`);
  const columns: ViewLogColumns = {
    item: o.itemCol ?? MIND_COLUMNS.item,
    visitor: o.visitorCol ?? MIND_COLUMNS.visitor,
    time: o.timeCol ?? MIND_COLUMNS.time,
  };
  const f = await openFreshet(forJobs(config), { log: cliLogger(config) });
  try {
    return await replayViews(
      {
        recordViews: (v) => f.useCases.recordViews(v),
        hot: f.hot,
        maintenance: f.hotMaintenance,
        counters: f.hotCounters,
        content: f.content,
      },
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
  const config = configFor(
    'hot rebuild',
    'the server restores lost hot-counter shards from the checkpoints itself when it starts: restart it instead',
  );
  const f = await openFreshet(forJobs(config), { recoverHot: false, log: cliLogger(config) });
  try {
    const lost = await f.hotCounters.lostShards();
    if (lost.length === 0) {
      console.log('no hot-counter shard has lost its state: nothing to rebuild');
      return;
    }
    const t0 = performance.now();
    const progress = new Progress({ label: 'hot rebuild', total: 0 }); // one long step: a line every 5 s says it runs
    const r = await f.hotMaintenance.recover(f.clock.now()).finally(() => progress.stop());
    console.log(
      `rebuilt ${r.shards.length} shard(s) [${r.shards.join(', ')}] from the checkpoints: ${r.restored} items in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
  } finally {
    await f.close();
  }
}
