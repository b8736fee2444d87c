/**
 * Snapshot file of the in-process per-reader seen filters (docs/discover.md), so a restart of the embedded
 * server does not forget impressions (the Redis adapter needs none: Redis keeps them).
 *
 * Format 3 (little-endian): "FSRS" magic u32, version u32 = 3, reader count u32; then per
 * reader: id length u16 + UTF-8, signature length u16 + UTF-8 (its geometry, `geometrySignature`: a
 * filter keeps the geometry it was started with), last activity f64 (epoch ms), sub-filter count
 * u16, that many member counts u32, bitmap length u32, compressed length u32, the bitmap
 * DEFLATE-compressed (raw, level 1: node:zlib). (Format 2, one signature for the file, was never released.)
 * A typical reader has set a few hundred bits, so even a large first sub-filter compresses ~100-fold;
 * the file is rewritten every minute. Written via `path.tmp` and a rename, so a crash leaves the
 * previous file.
 */
import { open, readFile, rename } from 'node:fs/promises';
import { deflateRawSync, inflateRawSync } from 'node:zlib';

const MAGIC = 0x53525346; // "FSRS"
const VERSION = 3;

/** One reader's filter as saved. */
export interface SavedReaderFilter {
  readerId: string;
  lastActive: number;
  counts: number[];
  bitmap: Uint8Array;
  /** Its geometry (`geometrySignature`). */
  signature: string;
}

/** Writes `filters` to `path` (format 3). */
export async function writeReaderSeenSnapshot(path: string, filters: Iterable<SavedReaderFilter>): Promise<void> {
  const tmp = `${path}.tmp`;
  const fh = await open(tmp, 'w', 0o600);
  try {
    const all = [...filters];
    const head = Buffer.alloc(12);
    head.writeUInt32LE(MAGIC, 0);
    head.writeUInt32LE(VERSION, 4);
    head.writeUInt32LE(all.length, 8);
    await fh.write(head);
    for (const f of all) {
      const id = Buffer.from(f.readerId, 'utf8');
      const sig = Buffer.from(f.signature, 'utf8');
      const packed = deflateRawSync(f.bitmap, { level: 1 });
      const entry = Buffer.alloc(2 + id.length + 2 + sig.length + 8 + 2 + 4 * f.counts.length + 8);
      let at = entry.writeUInt16LE(id.length, 0);
      at += id.copy(entry, at);
      at = entry.writeUInt16LE(sig.length, at);
      at += sig.copy(entry, at);
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
 * The filters saved in `path` (format 3): [] when the file is missing; null
 * (with `onSkip` told why) when it is unreadable or corrupt.
 */
export async function readReaderSeenSnapshot(
  path: string,
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
    if (buf.length < 12 || buf.readUInt32LE(0) !== MAGIC) throw new Error('not a reader seen-filter snapshot');
    const version = buf.readUInt32LE(4);
    if (version !== VERSION) throw new Error(`snapshot format ${version} is not one this version reads`);
    const n = buf.readUInt32LE(8);
    let at = 12;
    const out: SavedReaderFilter[] = [];
    for (let i = 0; i < n; i++) {
      const r = readEntry(buf, at);
      out.push(r.saved);
      at = r.next;
    }
    return out;
  } catch (err) {
    onSkip?.(`${path}: ${(err as Error).message}`);
    return null;
  }
}

/** One reader's entry at `at`. */
function readEntry(buf: Buffer, at: number): { saved: SavedReaderFilter; next: number } {
  const idLen = buf.readUInt16LE(at);
  const readerId = buf.toString('utf8', at + 2, at + 2 + idLen);
  at += 2 + idLen;
  const sigLen = buf.readUInt16LE(at);
  const signature = buf.toString('utf8', at + 2, at + 2 + sigLen);
  at += 2 + sigLen;
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
  return { saved: { readerId, lastActive, counts, bitmap, signature }, next: at + packedLen };
}
