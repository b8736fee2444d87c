/**
 * The exclusions' hot state in process (the embedded default, and the spec the Redis adapter is
 * tested against): each reader's recent views (the exclusions design: newest first, trimmed to N, gone `ttl` after the
 * last view in virtual time) and a cache of its durable exclusions with a generation counter.
 */
import { assertId } from '../../kernel/ids.js';
import type { DurableExclusions } from '../domain.js';
import type { CachedExclusions, ExclusionCache, ExclusionCacheSettings } from '../ports.js';

interface Views {
  ids: string[];
  /** Virtual ms of the last view. */
  at: number;
}

/** Pushes between two sweeps of expired recent-views lists. */
const SWEEP_EVERY = 4096;

/**
 * {@link ExclusionCache} in process. The durable cache never expires here (the process is its lifetime;
 * invalidations keep it exact); expired recent-views lists are dropped on access and by a sweep every
 * {@link SWEEP_EVERY} pushes.
 */
export class MemoryExclusionCache implements ExclusionCache {
  private readonly views = new Map<string, Views>();
  private pushes = 0;
  private readonly durable = new Map<string, DurableExclusions>();
  private readonly generations = new Map<string, number>();

  constructor(private readonly settings: ExclusionCacheSettings) {}

  async pushViews(views: readonly { readerId: string; itemId: string }[], nowMs: number): Promise<void> {
    for (const v of views) {
      assertId(v.readerId, 'reader id');
      assertId(v.itemId, 'item id');
    }
    if ((this.pushes += views.length) >= SWEEP_EVERY) this.sweep(nowMs);
    for (const { readerId, itemId } of views) {
      const live = this.liveViews(readerId, nowMs);
      // LREM + LPUSH + LTRIM 0 N-1: a repeat moves to the front
      const ids = [itemId, ...(live?.ids ?? []).filter((id) => id !== itemId)].slice(0, this.settings.recentViews);
      this.views.set(readerId, { ids, at: Math.max(nowMs, live?.at ?? nowMs) });
    }
  }

  async read(readerId: string, nowMs: number): Promise<CachedExclusions> {
    assertId(readerId, 'reader id');
    const live = this.liveViews(readerId, nowMs);
    return {
      recentViews: [...new Set(live?.ids ?? [])],
      durable: this.durable.get(readerId) ?? null,
      generation: String(this.generations.get(readerId) ?? 0),
    };
  }

  async fill(readerId: string, generation: string, durable: DurableExclusions): Promise<boolean> {
    if (String(this.generations.get(readerId) ?? 0) !== generation) return false;
    this.durable.set(readerId, durable);
    return true;
  }

  async invalidate(readerId: string): Promise<void> {
    assertId(readerId, 'reader id');
    this.generations.set(readerId, (this.generations.get(readerId) ?? 0) + 1);
    this.durable.delete(readerId);
  }

  async forget(readerId: string): Promise<void> {
    assertId(readerId, 'reader id');
    this.views.delete(readerId);
    this.durable.delete(readerId);
    this.generations.delete(readerId);
  }

  async close(): Promise<void> {}

  private sweep(nowMs: number): void {
    this.pushes = 0;
    for (const [reader, v] of this.views) if (nowMs - v.at >= this.settings.recentViewsTtlMs) this.views.delete(reader);
  }

  private liveViews(readerId: string, nowMs: number): Views | undefined {
    const v = this.views.get(readerId);
    if (v && nowMs - v.at >= this.settings.recentViewsTtlMs) {
      this.views.delete(readerId);
      return undefined;
    }
    return v;
  }
}
