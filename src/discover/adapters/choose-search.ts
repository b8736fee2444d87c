/**
 * Which VectorSearch a deployment gets (config `FRESHET_DISCOVER_INDEX`):
 * - `auto` (default): pgvector when the PostgreSQL server has or can install the `vector` extension
 *   at version 0.8 or later (iterative index scans, adapters/pgvector-search.ts) and its set-up
 *   succeeds; else the in-process index, with a log line naming why when an older pgvector is there.
 *   The embedded PGlite is opened without extensions, so the embedded default is always in-process —
 *   measured better there (200k items: pgvector HNSW on PGlite reached recall 0.89–0.94 at
 *   38 / 152 ms p50 / p99 after a 375 s build at 1.9 GB RSS, where usearch in process answers in a few
 *   ms at recall ≥ 0.95).
 * - `pgvector`: pgvector or fail: {@link resolveVectorSearch} throws `STORE_UNAVAILABLE` naming why
 *   (no extension, one older than 0.8, a dimension above its limit, a failed set-up).
 * - `memory`: the in-process index even when pgvector is there.
 *
 * The choice needs the database, and wiring is synchronous: {@link LazyVectorSearch} decides on its
 * first use or {@link LazyVectorSearch.warm} (the app warms it at open), once; a failed detection
 * (store down) is retried by the next use.
 */
import { fail } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/observability.js';
import type { Sql } from '../../kernel/sql/sql.js';
import type { VectorHit, VectorSearch, VectorSearchStats } from '../vector-search.js';
import { InProcessSearch, type InProcessSettings } from './in-process-search.js';
import { PgvectorSearch, type PgvectorSettings } from './pgvector-search.js';

/** The `FRESHET_DISCOVER_INDEX` values. */
export type VectorIndexChoice = 'auto' | 'pgvector' | 'memory';

/** Everything either implementation needs. */
export interface VectorSearchSettings {
  choice: VectorIndexChoice;
  memory: InProcessSettings;
  pgvector: PgvectorSettings;
}

/**
 * Which implementation `s.choice` gets on this database: `pgvector` or `memory` (see the module doc).
 * Quick: one catalogue query, no set-up.
 * @throws FreshetError `STORE_UNAVAILABLE` when `pgvector` is asked for and cannot be had.
 */
export async function chooseVectorSearch(
  sql: Sql,
  dim: number,
  s: VectorSearchSettings,
  log?: Logger,
): Promise<'pgvector' | 'memory'> {
  if (s.choice === 'memory') return 'memory';
  const version = await PgvectorSearch.detect(sql);
  const why = PgvectorSearch.unusable(version, dim);
  if (!why) return 'pgvector';
  if (s.choice === 'pgvector')
    throw fail(
      'STORE_UNAVAILABLE',
      `FRESHET_DISCOVER_INDEX=pgvector, but ${why}: install pgvector 0.8 or later, or set FRESHET_DISCOVER_INDEX=auto`,
    );
  if (version) log?.info({ version }, `discover index: in process (${why})`);
  return 'memory';
}

/**
 * Picks, sets up and returns the implementation (see the module doc). The in-process index starts
 * in the background (`isReady` says when it is done); pgvector's set-up (backfill, HNSW build) is
 * awaited here.
 * @throws FreshetError `STORE_UNAVAILABLE` when `pgvector` is asked for and cannot be had or set up.
 */
export async function resolveVectorSearch(
  sql: Sql,
  dim: number,
  s: VectorSearchSettings,
  log?: Logger,
): Promise<VectorSearch> {
  if ((await chooseVectorSearch(sql, dim, s, log)) === 'pgvector') {
    const pg = new PgvectorSearch(sql, dim, s.pgvector);
    try {
      await pg.setup();
      log?.info({}, 'discover index: pgvector');
      return pg;
    } catch (err) {
      if (s.choice === 'pgvector')
        throw fail('STORE_UNAVAILABLE', 'FRESHET_DISCOVER_INDEX=pgvector, but pgvector could not be set up', {
          message: String(err),
        });
      log?.warn({ err }, 'discover index: pgvector is there but could not be set up; using the in-process index');
    }
  }
  return new InProcessSearch(sql, dim, s.memory, log);
}

/** A VectorSearch that resolves its implementation on first use or warm-up (see the module doc). */
export class LazyVectorSearch implements VectorSearch {
  private resolved: VectorSearch | null = null;
  private resolving: Promise<VectorSearch> | null = null;

  constructor(
    private readonly sql: Sql,
    readonly dim: number,
    private readonly settings: VectorSearchSettings,
    private readonly log?: Logger,
  ) {}

  /** The implementation, deciding on the first call. */
  get(): Promise<VectorSearch> {
    if (this.resolved) return Promise.resolve(this.resolved);
    this.resolving ??= resolveVectorSearch(this.sql, this.dim, this.settings, this.log).then(
      (v) => (this.resolved = v),
      (err: unknown) => {
        this.resolving = null;
        throw err;
      },
    );
    return this.resolving;
  }

  /** Whether a search answers now without waiting for the choice, a set-up or the index's start. */
  isReady(): boolean {
    return this.resolved?.isReady() ?? false;
  }

  /**
   * Starts the choice, the set-up and the index's start in the background, when not done or under
   * way (a failed one again); a failure is logged, and the next warm-up or search retries.
   */
  warm(): void {
    if (this.resolved) {
      this.resolved.warm();
      return;
    }
    void this.get().catch((err: unknown) =>
      this.log?.error({ err }, 'discover index: could not be started; phase 2 serves the newest items until it is'),
    );
  }

  async search(query: Float32Array, k: number): Promise<VectorHit[]> {
    if (query.length !== this.dim)
      throw fail('INVALID_INPUT', `query has ${query.length} components, the index ${this.dim}`);
    return (await this.get()).search(query, k);
  }

  async sync(): Promise<void> {
    await (await this.get()).sync();
  }

  /** Before the choice is made nothing is indexed yet: the start reads these rows from the table. */
  wrote(records: readonly { itemId: string; vector: Int8Array }[]): void {
    this.resolved?.wrote(records);
  }

  /** The implementation's purge (deciding on it first: an erase run by a command that never searched). */
  async purge(): Promise<number> {
    return (await this.get()).purge();
  }

  stats(): VectorSearchStats {
    return this.resolved?.stats() ?? { kind: 'exact', size: 0, bytes: 0 };
  }

  async close(): Promise<void> {
    const v = this.resolved ?? (await this.resolving?.catch(() => null));
    await v?.close();
  }
}
