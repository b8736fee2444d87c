/**
 * The rebase of a viewed vector index (viewed-vector-index.ts), in a worker thread so the serving
 * process's event loop never waits for it: usearch's load and save of a graph are synchronous native
 * calls (2 s at 200k items, minutes at 10M). Plain JavaScript, so the same file runs from src/ under the
 * tests and from dist/ once built (scripts/copy-assets.mjs copies it).
 *
 * Input (`workerData`): `dim`, `graph` (usearch Index options), `threads`, `base` and `out` (snapshot
 * files: `{ codes, ids, graph }` paths), the base's ids packed (`ids`: each slot's UTF-8 bytes followed
 * by a newline, none for a free slot — id-table.ts), `dead` (base slots removed or superseded) and
 * `added` (`ids` and their `codes`, `dim` bytes each). Writes generation `out`: the codes file copied and
 * patched (zeros for a freed slot); `ids.json`; the base graph loaded, the dead slots removed, each added id
 * placed in a free slot (lowest first) or a new one at the end, saved — or, with `scrub` (an erase), a graph
 * built afresh from the live codes, so no removed item's vector stays in the file (usearch keeps it in a
 * removed node's slot). `buildOnly`: only that build, from `out.codes` and `out.ids` already written (a
 * private index's snapshot). Posts `{ slots }` when done; a failure is the worker's `error` event.
 */
import { copyFile, open, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

// usearch's CommonJS build, as src/kernel/usearch.ts loads it (its ES module build can search for its binary for ever)
const { Index } = createRequire(import.meta.url)('usearch');

const { dim, graph: options, threads, base, out, ids: packed, dead, added, scrub, buildOnly } = workerData;

/**
 * Builds a new graph of the live slots of `ids` from the codes file `out.codes` and saves it: no node of a
 * removed item is in it. usearch keeps a removed node's vector in its slot (and in a saved file) until the
 * slot is taken again, so a graph that removed an erased author's items holds their vectors until rebuilt.
 */
async function buildFresh(ids) {
  const buf = await readFile(out.codes);
  const codes = new Int8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  const live = [];
  for (let s = 0; s < ids.length; s++) if (ids[s] !== null) live.push(s);
  const vectors = new Int8Array(live.length * dim);
  live.forEach((s, i) => vectors.set(codes.subarray(s * dim, (s + 1) * dim), i * dim));
  const index = new Index(options);
  if (live.length > 0) index.add(BigUint64Array.from(live, BigInt), vectors, threads);
  index.save(out.graph);
}

if (buildOnly) {
  const ids = JSON.parse(await readFile(out.ids, 'utf8'));
  await buildFresh(ids);
  parentPort.postMessage({ slots: ids.length });
} else {
  const ids = Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength)
    .toString('utf8')
    .split('\n')
    .slice(0, -1)
    .map((id) => id || null);
  for (const s of dead) ids[s] = null;
  const free = [];
  for (let s = ids.length - 1; s >= 0; s--) if (ids[s] === null) free.push(s);
  const slots = added.ids.map((id) => {
    const s = free.pop() ?? ids.length;
    ids[s] = id;
    return s;
  });

  await copyFile(base.codes, out.codes);
  const file = await open(out.codes, 'r+');
  try {
    const zeros = new Int8Array(dim);
    for (const s of dead) await file.write(zeros, 0, dim, s * dim);
    for (let i = 0; i < slots.length; i++) await file.write(added.codes, i * dim, dim, slots[i] * dim);
    await file.truncate(ids.length * dim);
  } finally {
    await file.close();
  }
  await writeFile(out.ids, JSON.stringify(ids));

  if (scrub && dead.length > 0) await buildFresh(ids);
  else {
    const index = new Index(options);
    index.load(base.graph);
    if (dead.length > 0) index.remove(BigUint64Array.from(dead, BigInt));
    if (slots.length > 0) index.add(BigUint64Array.from(slots, BigInt), added.codes, threads);
    index.save(out.graph);
  }
  parentPort.postMessage({ slots: ids.length });
}
