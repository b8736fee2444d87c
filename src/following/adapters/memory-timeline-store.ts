/**
 * The following timeline's inboxes and outboxes in process (the embedded default): the executable
 * spec of the TimelineStore contract. Each box is a tid array kept sorted newest first; JavaScript
 * runs each call to the end before the next starts, so every operation is atomic like its Lua twin.
 * Inboxes and outboxes have no time to live here (they live until the process ends; each holds at most
 * `maxLen`); an outbox this process has not seen reads as missing ({@link MISSING_FLOOR}), as on Redis.
 */
import { assertId } from '../../kernel/ids.js';
import {
  MISSING_FLOOR,
  type InboxSlice,
  type InboxStats,
  type InboxState,
  type OutboxSlice,
  type TidRange,
  type TimelineStore,
} from '../timeline-store.js';

/** One box of tids (an inbox or outbox) with its floor. */
interface Box {
  /** Newest first, distinct. */
  tids: number[];
  floor: number;
}

interface Inbox extends Box {
  state: Exclude<InboxState, 'missing'>;
}

/** Index of the first element < t in a descending array (binary search). */
function firstBelow(tids: readonly number[], t: number): number {
  let lo = 0;
  let hi = tids.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (tids[mid]! >= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Adds tids above the floor (idempotent), then trims to `maxLen`, raising the floor. */
function addAll(box: Box, tids: readonly number[], maxLen: number): number {
  let added = 0;
  for (const t of tids) {
    if (t <= box.floor) continue;
    const i = firstBelow(box.tids, t);
    if (i > 0 && box.tids[i - 1] === t) continue;
    box.tids.splice(i, 0, t);
    added++;
  }
  trim(box, maxLen);
  return added;
}

function trim(box: Box, maxLen: number): void {
  if (box.tids.length <= maxLen) return;
  const removed = box.tids.splice(maxLen);
  box.floor = Math.max(box.floor, removed[0]!);
}

function raiseFloor(box: Box, floor: number): void {
  if (floor <= box.floor) return;
  box.floor = floor;
  box.tids.length = firstBelow(box.tids, floor + 1); // keep only tids > floor
}

function slice(box: Box | undefined, r: TidRange): number[] {
  if (!box) return [];
  const out: number[] = [];
  for (let i = firstBelow(box.tids, r.hi); i < box.tids.length && out.length < r.count; i++) {
    const t = box.tids[i]!;
    if (t <= r.lo) break;
    out.push(t);
  }
  return out;
}

function removeAll(box: Box | undefined, tids: readonly number[]): void {
  if (!box || tids.length === 0) return;
  const drop = new Set(tids);
  box.tids = box.tids.filter((t) => !drop.has(t));
}

/** {@link TimelineStore} over Maps. */
export class MemoryTimelineStore implements TimelineStore {
  private readonly inboxes = new Map<string, Inbox>();
  private readonly outboxes = new Map<string, Box>();

  async appendToOutbox(authorId: string, tid: number, maxLen: number, _ttlMs: number): Promise<void> {
    assertId(authorId, 'authorId');
    let box = this.outboxes.get(authorId);
    // a new outbox (first publish since the start): older tids may be missing
    if (!box) this.outboxes.set(authorId, (box = { tids: [], floor: tid - 1 }));
    addAll(box, [tid], maxLen);
  }

  async pushToInboxes(readerIds: readonly string[], tid: number, maxLen: number): Promise<number> {
    readerIds.forEach((r) => assertId(r, 'readerId'));
    let delivered = 0;
    for (const r of readerIds) {
      const box = this.inboxes.get(r);
      if (!box || tid <= box.floor) continue;
      addAll(box, [tid], maxLen);
      delivered++;
    }
    return delivered;
  }

  async readInbox(readerId: string, range: TidRange): Promise<InboxSlice> {
    assertId(readerId, 'readerId');
    const box = this.inboxes.get(readerId);
    if (!box) return { state: 'missing', floor: 0, tids: [] };
    return { state: box.state, floor: box.floor, tids: slice(box, range) };
  }

  async readOutboxes(authorIds: readonly string[], range: TidRange): Promise<OutboxSlice[]> {
    authorIds.forEach((a) => assertId(a, 'authorId'));
    return authorIds.map((a) => {
      const box = this.outboxes.get(a);
      return { floor: box?.floor ?? MISSING_FLOOR, tids: slice(box, range) };
    });
  }

  async beginRebuild(readerId: string, _ttlMs: number): Promise<void> {
    assertId(readerId, 'readerId');
    const box = this.inboxes.get(readerId);
    if (box) box.state = 'building';
    else this.inboxes.set(readerId, { tids: [], floor: 0, state: 'building' });
  }

  async completeRebuild(
    readerId: string,
    tids: readonly number[],
    floor: number,
    maxLen: number,
    _ttlMs: number,
  ): Promise<void> {
    assertId(readerId, 'readerId');
    const box = this.inboxes.get(readerId);
    if (!box) return; // not prepared (as on Redis when the state expired meanwhile): the next read rebuilds
    raiseFloor(box, floor);
    addAll(box, tids, maxLen);
    box.state = 'ready';
  }

  async mergeIntoInbox(readerId: string, tids: readonly number[], floor: number, maxLen: number): Promise<boolean> {
    assertId(readerId, 'readerId');
    const box = this.inboxes.get(readerId);
    if (!box) return false;
    raiseFloor(box, floor);
    addAll(box, tids, maxLen);
    return true;
  }

  async removeFromInbox(readerId: string, tids: readonly number[]): Promise<void> {
    assertId(readerId, 'readerId');
    removeAll(this.inboxes.get(readerId), tids);
  }

  async removeFromOutbox(authorId: string, tids: readonly number[]): Promise<void> {
    assertId(authorId, 'authorId');
    removeAll(this.outboxes.get(authorId), tids);
  }

  async dropInboxes(readerIds: readonly string[]): Promise<void> {
    readerIds.forEach((r) => assertId(r, 'readerId'));
    for (const r of readerIds) this.inboxes.delete(r);
  }

  async forget(userId: string): Promise<void> {
    assertId(userId, 'userId');
    this.inboxes.delete(userId);
    this.outboxes.delete(userId);
  }

  async touch(readerId: string, _ttlMs: number): Promise<void> {
    assertId(readerId, 'readerId');
  }

  async close(): Promise<void> {
    this.inboxes.clear();
    this.outboxes.clear();
  }

  /** Inboxes and the tids in them (no bytes or time to live in process). */
  async inboxStats(): Promise<InboxStats> {
    let entries = 0;
    for (const b of this.inboxes.values()) entries += b.tids.length;
    return { count: this.inboxes.size, entries, bytes: null, withoutTtl: null };
  }
}
