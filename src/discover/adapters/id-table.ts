/**
 * IdTable: a snapshot's slot → item id map and its inverse, packed — the part of a viewed vector index
 * (viewed-vector-index.ts) that every process must hold itself. The ids' UTF-8 bytes in one buffer,
 * a `Uint32Array` of offsets, and an open-addressing hash table (`Int32Array`, linear probing, load
 * ≤ 0.5) from id to slot: about `id length + 12` bytes an item, where a JS array of strings plus a
 * `Map` costs ~100 B. Immutable once built.
 */

/** FNV-1a, 32 bits, over `b[from, to)` (Fowler–Noll–Vo; the table's hash: fast on short keys). */
function fnv1a(b: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h >>> 0;
}

/** A packed, immutable slot ↔ id table. See the module doc. */
export class IdTable {
  private constructor(
    private readonly utf8: Buffer,
    /** `slots + 1` offsets into `utf8`; an empty range is a free slot. */
    private readonly offsets: Uint32Array,
    /** slot + 1 per bucket; 0 = empty. Length a power of 2. */
    private readonly buckets: Int32Array,
    /** Slots that hold an id. */
    readonly live: number,
  ) {}

  /**
   * Packs `ids` (item id per slot, null for a free slot; ids are non-empty and distinct).
   * @throws Error when the ids' bytes pass 4 GiB (the offsets are 32-bit).
   */
  static from(ids: readonly (string | null)[]): IdTable {
    let total = 0;
    for (const id of ids) if (id) total += Buffer.byteLength(id);
    if (total >= 2 ** 32) throw new Error(`ids take ${total} bytes; the table holds at most 4 GiB`);
    const utf8 = Buffer.allocUnsafe(total);
    const offsets = new Uint32Array(ids.length + 1);
    let at = 0;
    let live = 0;
    ids.forEach((id, slot) => {
      offsets[slot] = at;
      if (id) {
        at += utf8.write(id, at);
        live++;
      }
    });
    offsets[ids.length] = at;
    let size = 16;
    while (size < live * 2) size *= 2;
    const buckets = new Int32Array(size);
    const table = new IdTable(utf8, offsets, buckets, live);
    for (let slot = 0; slot < ids.length; slot++) {
      const from = offsets[slot]!;
      const to = offsets[slot + 1]!;
      if (from === to) continue;
      let b = fnv1a(utf8, from, to) & (size - 1);
      while (buckets[b] !== 0) b = (b + 1) & (size - 1);
      buckets[b] = slot + 1;
    }
    return table;
  }

  /** Slots in the table (free ones included). */
  get slots(): number {
    return this.offsets.length - 1;
  }

  /** The id in `slot`; null for a free slot. */
  idOf(slot: number): string | null {
    const from = this.offsets[slot];
    const to = this.offsets[slot + 1];
    if (from === undefined || to === undefined || from === to) return null;
    return this.utf8.toString('utf8', from, to);
  }

  /** The slot holding `id`; -1 when none does. */
  slotOf(id: string): number {
    const key = Buffer.from(id);
    const mask = this.buckets.length - 1;
    for (let b = fnv1a(key, 0, key.length) & mask; ; b = (b + 1) & mask) {
      const entry = this.buckets[b]!;
      if (entry === 0) return -1;
      const from = this.offsets[entry - 1]!;
      const to = this.offsets[entry]!;
      if (to - from === key.length && key.equals(this.utf8.subarray(from, to))) return entry - 1;
    }
  }

  /** Every slot's id (null for a free slot): what a snapshot's `ids.json` holds. */
  toArray(): (string | null)[] {
    return Array.from({ length: this.slots }, (_, s) => this.idOf(s));
  }

  /** The packed ids: slot s holds `utf8[offsets[s], offsets[s + 1])`, an empty range a free slot. */
  raw(): { utf8: Buffer; offsets: Uint32Array } {
    return { utf8: this.utf8, offsets: this.offsets };
  }

  /** Bytes held. */
  bytes(): number {
    return this.utf8.byteLength + this.offsets.byteLength + this.buckets.byteLength;
  }
}
