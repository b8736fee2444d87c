/**
 * The learning room's background builder: keeps the engagement graph (engagement-graph.ts) current from
 * the interactions' change feed and, from it, each item's co-engagement neighbours (neighbours.ts) and
 * the engine's own popularity (popularity.ts), written to the {@link ModelStore} every serving process
 * reads. One process builds (the one running maintenance: `startWorkers`); the others only read.
 *
 * A tick:
 * 1. catches up: the pairs changed since the watermark are applied to the graph (a first tick, or one
 *    after an erase anywhere — `InteractionStore.erasures` moved — reloads the whole graph instead, so an
 *    erased reader leaves every row without the store keeping who it was);
 * 2. marks stale rows: the items of the readers that changed (`direct`: their own rows and popularity)
 *    and the items sharing a reader with those (`indirect`: a direct item's norm is in their similarity);
 * 3. recomputes stale rows, direct ones first, within `budget` additions (a row of item i costs
 *    Σ_{u ∈ U_i} |I_u|) — so a new engagement reaches its items' rows at the next tick, and a burst is
 *    spread over several ticks — and writes them.
 * Recomputing a row reads the current graph only, so once nothing is stale the stored rows are exactly
 * those of a full rebuild (test/learn/neighbour-builder.test.ts checks it).
 */
import type { Logger } from '../kernel/observability.js';
import { EngagementGraph, type CompactGraph, type Interaction } from './engagement-graph.js';
import { interactionWeight, type InteractionRow, type InteractionStore } from './interactions.js';
import type { ModelStore } from './model-store.js';
import { neighbourRow, rowContext, rowCost, staleRows, type NeighbourSettings } from './neighbours.js';
import { logAdd, logContribution } from './popularity.js';

/** Tunables of the builder; durations in ms. */
export interface BuilderSettings extends NeighbourSettings {
  /** Interactions kept per reader (the newest). */
  historyCap: number;
  /** Additions one tick may spend on rows (its bound on CPU: ~2–5 ns each). */
  budget: number;
  /** Half-life of the engine's popularity. */
  popularityHalfLifeMs: number;
}

/** What one tick did. */
export interface TickReport {
  /** Whether the graph was reloaded whole. */
  reloaded: boolean;
  /** Changed pairs read. */
  changes: number;
  /** Rows recomputed and written. */
  rows: number;
  /** Rows still stale (left for the next ticks). */
  stale: number;
  /** Additions spent. */
  work: number;
}

/** Additions between two yields to the event loop (~5–10 ms of work). */
const WORK_PER_SLICE = 2_000_000;

const toInteraction = (r: InteractionRow): Interaction => ({
  readerId: r.readerId,
  itemId: r.itemId,
  weight: interactionWeight(r.kinds),
  atMs: r.atMs,
});

/** Builds neighbours and popularity (see the module doc). */
export class LearnBuilder {
  private graph: EngagementGraph;
  private watermark: string | null = null;
  private erasures = -1;
  private readonly direct = new Set<number>();
  private readonly indirect = new Set<number>();
  /** Bumped by every change the graph takes (the factor trainer trains again when it moved). */
  generation = 0;

  constructor(
    private readonly interactions: InteractionStore,
    private readonly models: ModelStore,
    readonly settings: BuilderSettings,
    private readonly log: Logger,
  ) {
    this.graph = new EngagementGraph(settings.historyCap);
  }

  /** The current graph (the factor trainer reads it between ticks). */
  get current(): EngagementGraph {
    return this.graph;
  }

  /** Rows waiting to be recomputed. */
  get pending(): number {
    return this.direct.size + this.indirect.size;
  }

  /** One tick at `nowMs` (see the module doc). Store errors propagate (the worker retries next tick). */
  async tick(nowMs: number): Promise<TickReport> {
    const erasures = await this.interactions.erasures();
    const reloaded = erasures !== this.erasures;
    const changes = reloaded ? await this.reload(erasures) : await this.catchUp();
    const { rows, work } = await this.recompute(nowMs);
    return { reloaded, changes, rows, stale: this.pending, work };
  }

  /** Ticks until nothing is stale (a replay's "settle" step; tests). @returns the ticks run. */
  async settle(nowMs: number, maxTicks = 1000): Promise<number> {
    let n = 0;
    do {
      await this.tick(nowMs);
      n++;
    } while (this.pending > 0 && n < maxTicks);
    return n;
  }

  /** Reads every pair into a new graph; every row it holds is stale, rows of items it lost are deleted. */
  private async reload(erasures: number): Promise<number> {
    const watermark = await this.interactions.watermark();
    const graph = new EngagementGraph(this.settings.historyCap);
    const n = await this.interactions.changes(null, (rows) => {
      graph.apply(rows.map(toInteraction));
    });
    this.graph = graph;
    this.watermark = watermark;
    this.erasures = erasures;
    this.generation++;
    this.direct.clear();
    this.indirect.clear();
    for (let i = 0; i < graph.items.size; i++) if (graph.readersOf(i).size > 0) this.direct.add(i);
    const held = new Set(graph.items.ids.filter((_, i) => graph.readersOf(i).size > 0));
    const gone = (await this.models.neighbourItems()).filter((id) => !held.has(id));
    await this.models.writeNeighbours(
      gone.map((itemId) => ({ itemId, neighbours: [] })),
      0,
    );
    await this.models.writePopularity(gone.map((itemId) => ({ itemId, logScore: null })));
    this.log.info({ pairs: n, items: held.size, readers: graph.readers.size }, 'learn: engagement graph loaded');
    return n;
  }

  /** Applies the pairs changed since the watermark; marks the rows they make stale. */
  private async catchUp(): Promise<number> {
    const watermark = await this.interactions.watermark();
    const readers = new Set<number>();
    const left = new Set<number>();
    const n = await this.interactions.changes(this.watermark, (rows) => {
      const r = this.graph.apply(rows.map(toInteraction));
      for (const u of r.readers) readers.add(u);
      for (const i of r.left) left.add(i);
    });
    this.watermark = watermark;
    // a trimmed reader that lost a pair below the cap: its older pairs come back, as a reload would read them
    for (const u of [...readers].filter((x) => this.graph.belowCap(x))) {
      const back = await this.interactions.history(this.graph.readers.ids[u]!, this.settings.historyCap);
      for (const i of this.graph.apply(back.map(toInteraction)).left) left.add(i);
    }
    if (readers.size === 0) return n;
    this.generation++;
    const stale = staleRows(this.graph.compact(), readers, left);
    for (const i of stale.direct) {
      this.direct.add(i);
      this.indirect.delete(i);
    }
    for (const i of stale.indirect) if (!this.direct.has(i)) this.indirect.add(i);
    return n;
  }

  /** Recomputes stale rows within the budget (direct first) and writes them with their popularity. */
  private async recompute(nowMs: number): Promise<{ rows: number; work: number }> {
    if (this.pending === 0) return { rows: 0, work: 0 };
    const g = this.graph.compact();
    const ctx = rowContext(g);
    const rows: { itemId: string; neighbours: ReturnType<typeof neighbourRow> }[] = [];
    const popular: { itemId: string; logScore: number | null }[] = [];
    let work = 0;
    let sincePause = 0;
    for (const queue of [this.direct, this.indirect]) {
      for (const i of queue) {
        const cost = rowCost(g, i);
        if (work > 0 && work + cost > this.settings.budget) break;
        work += cost;
        sincePause += cost;
        if (sincePause > WORK_PER_SLICE) {
          sincePause = 0;
          await new Promise((r) => setImmediate(r)); // a serving process is never held for long
        }
        queue.delete(i);
        rows.push({ itemId: g.itemIds[i]!, neighbours: neighbourRow(ctx, i, this.settings) });
        if (queue === this.direct) popular.push({ itemId: g.itemIds[i]!, logScore: this.popularity(g, i) });
      }
      if (queue.size > 0) break; // the budget ran out
    }
    await this.models.writeNeighbours(rows, nowMs);
    await this.models.writePopularity(popular);
    return { rows: rows.length, work };
  }

  /** log2 of item i's decayed popularity (popularity.ts); null when no reader holds it. */
  private popularity(g: CompactGraph, i: number): number | null {
    if (g.itemPtr[i + 1] === g.itemPtr[i]) return null;
    let s = Number.NEGATIVE_INFINITY;
    for (let k = g.itemPtr[i]!; k < g.itemPtr[i + 1]!; k++) {
      const e = this.graph.itemsOf(g.itemReaders[k]!).get(i)!;
      s = logAdd(s, logContribution(e.w, e.at, this.settings.popularityHalfLifeMs));
    }
    return s;
  }
}
