/**
 * Snapshot file of the in-process per-reader seen filters (note 3), so a restart of the embedded
 * server does not forget impressions (the Redis adapter needs none: Redis keeps them).
 *
 * Format (little-endian): "FSRS" magic u32, version u32, signature length u16 + UTF-8 (the geometry,
 * `geometrySignature`), reader count u32; then per reader: id length u16 + UTF-8, last activity f64
 * (epoch ms), sub-filter count u16, that many member counts u32, bitmap length u32, compressed length
 * u32, the bitmap DEFLATE-compressed (raw, level 1: node:zlib). A reader's first sub-filter is sized
 * for 100,000 items (164 KB at 1 %) but a typical reader has set a few hundred of its bits, so it
 * compresses ~100-fold; the file is rewritten every minute.
 * Written via `path.tmp` and a rename, so a crash leaves the previous file.
 */
import { open, readFile, rename } from 'node:fs/promises';
import { deflateRawSync, inflateRawSync } from 'node:zlib';

const MAGIC = 0x53525346; // "FSRS"
const VERSION = 2;

/** One reader's filter as saved. */
export interface SavedReaderFilter {
  readerId: string;
  lastActive: number;
  counts: number[];
  bitmap: Uint8Array;
}

/** Writes `filters` with the geometry `signature` to `path`. */
export async function writeReaderSeenSnapshot(
  path: string,
  signature: string,
  filters: Iterable<SavedReaderFilter>,
): Promise<void> {
  const tmp = `${path}.tmp`;
  const fh = await open(tmp, 'w', 0o600);
  try {
    const all = [...filters];
    const sig = Buffer.from(signature, 'utf8');
    const head = Buffer.alloc(4 + 4 + 2 + sig.length + 4);
    head.writeUInt32LE(MAGIC, 0);
    head.writeUInt32LE(VERSION, 4);
    head.writeUInt16LE(sig.length, 8);
    sig.copy(head, 10);
    head.writeUInt32LE(all.length, 10 + sig.length);
    await fh.write(head);
    for (const f of all) {
      const id = Buffer.from(f.readerId, 'utf8');
      const packed = deflateRawSync(f.bitmap, { level: 1 });
      const entry = Buffer.alloc(2 + id.length + 8 + 2 + 4 * f.counts.length + 8);
      let at = entry.writeUInt16LE(id.length, 0);
      at += id.copy(entry, at);
      at = entry.writeDoubleLE(f.lastActive, at);
      at = entry.writeUInt16LE(f.counts.length, at);
      for (const c of f.counts) at = entry.writeUInt32LE(c, at);
      at = entry.writeUInt32LE(f.bitmap.byteLength, at);
      entry.writeUInt32LE(packed.byteLength, at);
      await fh.write(entry);
      await fh.write(packed);
    }
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
}

/**
 * The filters saved in `path`: [] when the file is missing; null (with `onSkip` told why) when it is
 * unreadable, corrupt or written with another geometry — its bits would answer for other positions.
 */
export async function readReaderSeenSnapshot(
  path: string,
  signature: string,
  onSkip?: (reason: string) => void,
): Promise<SavedReaderFilter[] | null> {
  let buf: Buffer;
  try {
    buf = await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    onSkip?.(`${path}: unreadable: ${(err as Error).message}`);
    return null;
  }
  try {
    if (buf.readUInt32LE(0) !== MAGIC || buf.readUInt32LE(4) !== VERSION)
      throw new Error('not a reader seen-filter snapshot');
    const sigLen = buf.readUInt16LE(8);
    if (buf.toString('utf8', 10, 10 + sigLen) !== signature) throw new Error('written with another geometry');
    const n = buf.readUInt32LE(10 + sigLen);
    let at = 14 + sigLen;
    const out: SavedReaderFilter[] = [];
    for (let i = 0; i < n; i++) {
      const idLen = buf.readUInt16LE(at);
      const readerId = buf.toString('utf8', at + 2, at + 2 + idLen);
      at += 2 + idLen;
      const lastActive = buf.readDoubleLE(at);
      const levels = buf.readUInt16LE(at + 8);
      at += 10;
      const counts: number[] = [];
      for (let j = 0; j < levels; j++, at += 4) counts.push(buf.readUInt32LE(at));
      const len = buf.readUInt32LE(at);
      const packedLen = buf.readUInt32LE(at + 4);
      at += 8;
      if (at + packedLen > buf.length) throw new Error('truncated');
      const bitmap = new Uint8Array(inflateRawSync(buf.subarray(at, at + packedLen)));
      if (bitmap.byteLength !== len) throw new Error('corrupt bitmap');
      out.push({ readerId, lastActive, counts, bitmap });
      at += packedLen;
    }
    return out;
  } catch (err) {
    onSkip?.(`${path}: ${(err as Error).message}`);
    return null;
  }
}
