/**
 * Restoring per-reader seen filters (docs/discover.md) from their PostgreSQL checkpoints into Redis, for
 * seen-checkpointer.ts: a reader with no state in Redis (new, idle past the TTL, or lost with Redis)
 * gets back its live filter — folded from its checkpoint under whichever geometry (signature) it was
 * written — or an empty state of the settings' geometry.
 *
 * A reader's checkpoint subject names its signature (`r:<signature>:<reader>`, seen-fold.ts), so a
 * restore looks the reader up under every signature the database holds (the list PostgreSQL keeps,
 * postgres-seen-checkpoints.ts `readerSignatures`, re-read each minute) and takes the live filter with
 * the latest activity. The state is put only if the reader still has none (lua/readerSeenRestore-2+N.lua):
 * a concurrent restore wins and nothing is overwritten.
 */
import type { ReaderSeenSettings } from '../kernel/reader-seen-filter.js';
import type { RedisClient } from '../kernel/redis/client.js';
import type { Keys } from '../kernel/redis/keys.js';
import { LuaScripts } from '../kernel/redis/lua.js';
import type { SavedReaderFilter } from './memory-reader-seen-filter.js';
import type { PostgresSeenCheckpoints } from './postgres-seen-checkpoints.js';
import { geometrySignature, levelBytes, parseSignature, scalableGeometry } from './scalable-bloom.js';
import { foldReader, parseReaderSubject, readerSubject } from './seen-fold.js';

/** The restore script (./lua/). */
export const READER_RESTORE_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), ['readerSeenRestore-2+N']);

/** How long the list of reader signatures is reused before it is read again, ms. */
const SIGNATURES_TTL_MS = 60_000;

/** Restores and forgets per-reader filters' checkpoints for one process. */
export class ReaderRestores {
  private readonly lua;
  /** Reader signatures checkpointed (the settings' first), and when they were read. */
  private signatures: { list: string[]; at: number } | null = null;
  /** Signatures this process recorded in the database's list (each once). */
  private readonly known = new Set<string>();

  constructor(
    redis: RedisClient,
    private readonly keys: Keys,
    private readonly store: PostgresSeenCheckpoints,
    private readonly settings: ReaderSeenSettings,
  ) {
    this.lua = READER_RESTORE_SCRIPTS.on(redis);
  }

  /**
   * Puts the reader's checkpointed filter live at `nowMs` (or an empty state) into Redis unless it has
   * a state there. @returns whether a checkpointed filter was put.
   * @throws FreshetError `STORE_UNAVAILABLE` when PostgreSQL or Redis fails.
   */
  async restore(readerId: string, nowMs: number): Promise<boolean> {
    const sigs = await this.readerSignatures();
    const found = await this.store.load(sigs.map((sig) => readerSubject(sig, readerId)));
    // the live filter with the latest activity, whatever geometry it was checkpointed under
    let saved: SavedReaderFilter | undefined;
    for (const [subject, c] of found) {
      const sig = parseReaderSubject(subject)?.signature;
      if (!sig || !parseSignature(sig)) continue;
      const s = foldReader(this.settings, sig, readerId, c);
      if (s && nowMs - s.lastActive < this.settings.ttlMs && (!saved || s.lastActive > saved.lastActive)) saved = s;
    }
    await this.put(readerId, saved, nowMs);
    return saved !== undefined;
  }

  /** Deletes the reader's checkpoints under every signature. */
  async forget(readerId: string): Promise<void> {
    for (const sig of await this.readerSignatures()) await this.store.forget(readerSubject(sig, readerId));
  }

  /** The signatures of reader `subjects` this process has not recorded in the database's list yet. */
  unrecorded(subjects: Iterable<string>): string[] {
    const out = new Set<string>();
    for (const subject of subjects) {
      const sig = parseReaderSubject(subject)?.signature;
      if (sig && !this.known.has(sig)) out.add(sig);
    }
    return [...out];
  }

  /** Notes signatures the database's list now holds (an append that recorded them committed). */
  recorded(sigs: readonly string[]): void {
    for (const s of sigs) this.known.add(s);
  }

  /** The reader's state put into Redis unless it has one (nothing checkpointed: an empty state of the settings' geometry). */
  private async put(readerId: string, saved: SavedReaderFilter | undefined, nowMs: number): Promise<void> {
    const { keys, settings } = this;
    const g =
      (saved && parseSignature(saved.signature)) || scalableGeometry(settings.initialCapacity, settings.errorRate);
    const levelKeys = g.levels.slice(1).map((l) => keys.readerSeenLevel(readerId, l.level));
    const parts: Buffer[] = [];
    if (saved) {
      const bytes = Buffer.from(saved.bitmap.buffer, saved.bitmap.byteOffset, saved.bitmap.byteLength);
      for (let i = 0; i < saved.counts.length; i++) parts.push(bytes.subarray(...levelBytes(g.levels[i]!)));
    }
    await this.lua.readerSeenRestore(
      [keys.readerSeen(readerId), keys.readerSeenMeta(readerId), ...levelKeys],
      [
        Math.floor(saved ? saved.lastActive : nowMs),
        g.signature,
        saved ? saved.counts.join(',') : '0',
        Math.floor(settings.ttlMs),
        ...parts,
      ],
    );
  }

  /** Every signature reader subjects are checkpointed under, the settings' first (re-read each minute). */
  private async readerSignatures(): Promise<string[]> {
    const now = performance.now();
    if (!this.signatures || now - this.signatures.at >= SIGNATURES_TTL_MS) {
      const own = geometrySignature(this.settings.initialCapacity, this.settings.errorRate);
      const list = await this.store.readerSignatures();
      this.signatures = { list: [own, ...list.filter((s) => s !== own)], at: now };
    }
    return this.signatures.list;
  }
}
