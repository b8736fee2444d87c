/**
 * Snapshot file of the in-process per-reader seen filters (note 3), so a restart of the embedded
 * server does not forget impressions (the Redis adapter needs none: Redis keeps them).
 *
 * Format (little-endian): "FSRS" magic u32, version u32, signature length u16 + UTF-8 (the geometry,
 * `geometrySignature`), reader count u32; then per reader: id length u16 + UTF-8, last activity f64
 * (epoch ms), sub-filter count u16, that many member counts u32, bitmap length u32, bitmap bytes.
 * Written via `path.tmp` and a rename, so a crash leaves the previous file.
 */
import { open, readFile, rename } from 'node:fs/promises';

const MAGIC = 0x53525346; // "FSRS"
const VERSION = 1;

/** One reader's filter as saved. */
export interface SavedReaderFilter {
  readerId: string;
  lastActive: number;
  counts: number[];
  bitmap: Uint8Array;
}

/** Writes `filters` with the geometry `signature` to `path`. */
export async function writeReaderSeenSnapshot(path: string, signature: string, filters: Iterable<SavedReaderFilter>): Promise<void> {
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
      const entry = Buffer.alloc(2 + id.length + 8 + 2 + 4 * f.counts.length + 4);
      let at = entry.writeUInt16LE(id.length, 0);
      at += id.copy(entry, at);
      at = entry.writeDoubleLE(f.lastActive, at);
      at = entry.writeUInt16LE(f.counts.length, at);
      for (const c of f.counts) at = entry.writeUInt32LE(c, at);
      entry.writeUInt32LE(f.bitmap.byteLength, at);
      await fh.write(entry);
      await fh.write(f.bitmap);
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
    if (buf.readUInt32LE(0) !== MAGIC || buf.readUInt32LE(4) !== VERSION) throw new Error('not a reader seen-filter snapshot');
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
      at += 4;
      if (at + len > buf.length) throw new Error('truncated');
      out.push({ readerId, lastActive, counts, bitmap: new Uint8Array(buf.subarray(at, at + len)) });
      at += len;
    }
    return out;
  } catch (err) {
    onSkip?.(`${path}: ${(err as Error).message}`);
    return null;
  }
}
