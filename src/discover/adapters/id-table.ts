/**
 * IdTable: a snapshot's slot → item id map and its inverse, packed — the part of a viewed vector index
 * (viewed-vector-index.ts) that every process must hold itself. The ids' UTF-8 bytes in one buffer,
 * each followed by a newline (item ids never hold one: kernel/ids.ts), a `Uint32Array` of where each
 * slot starts, and an open-addressing hash table (`Int32Array`, linear probing, load ≤ 0.5) from id to
 * slot: about `id length + 13` bytes an item, where a JS array of strings plus a `Map` costs ~100 B.
 * Built with one join and one encode (200k ids: ~30 ms, where encoding each id alone took 130 ms).
 * Immutable once built.
 */

/** FNV-1a, 32 bits, over `b[from, to)` (Fowler–Noll–Vo; the table's hash: fast on short keys). */
function fnv1a(b: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h >>> 0;
}

/** The separator after each slot's id in the packed bytes. */
const NEWLINE = 10;

/** A packed, immutable slot ↔ id table. See the module doc. */
export class IdTable {
  private constructor(
    /** Slot after slot: the id's UTF-8 bytes (none for a free slot), then a newline. */
    private readonly utf8: Buffer,
    /** `slots + 1` offsets into `utf8`: slot s is `[starts[s], starts[s + 1] - 1)`. */
    private readonly starts: Uint32Array,
    /** slot + 1 per bucket; 0 = empty. Length a power of 2. */
    private readonly buckets: Int32Array,
    /** Slots that hold an id. */
    readonly live: number,
  ) {}

  /**
   * Packs `ids` (item id per slot, null for a free slot; ids are non-empty, distinct and hold no
   * newline — kernel/ids.ts).
   * @throws Error when an id holds a newline, or the ids' bytes pass 4 GiB (the offsets are 32-bit).
   */
  static from(ids: readonly (string | null)[]): IdTable {
    let joined = '';
    for (let at = 0; at < ids.length; at += 65_536) joined += `${ids.slice(at, at + 65_536).join('\n')}\n`;
    const utf8 = Buffer.from(joined, 'utf8');
    if (utf8.length >= 2 ** 32) throw new Error(`ids take ${utf8.length} bytes; the table holds at most 4 GiB`);
    const starts = new Uint32Array(ids.length + 1);
    let slot = 0;
    for (let i = 0; i < utf8.length; i++) if (utf8[i] === NEWLINE) starts[++slot] = i + 1;
    if (slot !== ids.length) throw new Error('an item id holds a newline');
    let live = 0;
    for (const id of ids) if (id) live++;
    return IdTable.index(utf8, starts, live);
  }

  /**
   * Packs the ids of a snapshot's `ids.json` straight from its bytes — one pass, no JSON.parse and no
   * string per id (200k ids: ~10 ms where parse, join and encode took 110–140 ms of one tick). Only
   * the form snapshots write: `[`, then `"id"` or `null` separated by `,`, then `]`, the ids without
   * escapes. @returns null for anything else (parse it and use {@link from}).
   */
  static fromJson(json: Buffer): IdTable | null {
    const QUOTE = 34;
    const end = json.length - 1; // the closing ]
    if (json[0] !== 91 || json[end] !== 93 || json.indexOf(92) >= 0 || json.indexOf(NEWLINE) >= 0) return null;
    const out = Buffer.allocUnsafe(json.length);
    const starts = new Uint32Array(json.length + 1);
    let slots = 0;
    let w = 0;
    let live = 0;
    for (let i = 1; i < end; ) {
      if (json[i] === QUOTE) {
        const close = json.indexOf(QUOTE, i + 1);
        if (close < 0 || close > end || close === i + 1) return null; // unterminated, or an empty id
        w += json.copy(out, w, i + 1, close);
        i = close + 1;
        live++;
      } else if (json[i] === 110 && json[i + 1] === 117 && json[i + 2] === 108 && json[i + 3] === 108) i += 4;
      else return null;
      out[w++] = NEWLINE;
      starts[++slots] = w;
      if (i < end && (json[i++] !== 44 || i === end)) return null; // a comma, and a token after it
    }
    return IdTable.index(out.subarray(0, w), starts.slice(0, slots + 1), live);
  }

  /** The table over packed ids (`utf8`, `starts`): builds the hash buckets. */
  private static index(utf8: Buffer, starts: Uint32Array, live: number): IdTable {
    let size = 16;
    while (size < live * 2) size *= 2;
    const buckets = new Int32Array(size);
    for (let s = 0; s + 1 < starts.length; s++) {
      const from = starts[s]!;
      const to = starts[s + 1]! - 1;
      if (from === to) continue;
      let b = fnv1a(utf8, from, to) & (size - 1);
      while (buckets[b] !== 0) b = (b + 1) & (size - 1);
      buckets[b] = s + 1;
    }
    return new IdTable(utf8, starts, buckets, live);
  }

  /** Slots in the table (free ones included). */
  get slots(): number {
    return this.starts.length - 1;
  }

  /** The id in `slot`; null for a free slot. */
  idOf(slot: number): string | null {
    if (!this.occupied(slot)) return null;
    return this.utf8.toString('utf8', this.starts[slot]!, this.starts[slot + 1]! - 1);
  }

  /** Whether `slot` holds an id (no string decoded: the scan's check of every slot). */
  occupied(slot: number): boolean {
    const from = this.starts[slot];
    const next = this.starts[slot + 1];
    return from !== undefined && next !== undefined && from !== next - 1;
  }

  /** The slot holding `id`; -1 when none does. */
  slotOf(id: string): number {
    const key = Buffer.from(id);
    const mask = this.buckets.length - 1;
    for (let b = fnv1a(key, 0, key.length) & mask; ; b = (b + 1) & mask) {
      const entry = this.buckets[b]!;
      if (entry === 0) return -1;
      const from = this.starts[entry - 1]!;
      const to = this.starts[entry]! - 1;
      if (to - from === key.length && key.equals(this.utf8.subarray(from, to))) return entry - 1;
    }
  }

  /** Every slot's id (null for a free slot): what a snapshot's `ids.json` holds. */
  toArray(): (string | null)[] {
    return Array.from({ length: this.slots }, (_, s) => this.idOf(s));
  }

  /** The packed ids: each slot's UTF-8 bytes followed by a newline (none for a free slot). */
  packed(): Buffer {
    return this.utf8;
  }

  /** Bytes held. */
  bytes(): number {
    return this.utf8.byteLength + this.starts.byteLength + this.buckets.byteLength;
  }
}
