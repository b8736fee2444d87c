/**
 * Item inputs for tests that write through a `ContentStore` (library shape, times in ms): one item of
 * given age, or a run of items one hour apart. The HTTP shape is `item()` in app.ts.
 */
import { HOUR_MS } from '../../src/kernel/clock.js';
import type { ItemInput } from '../../src/kernel/items/content-store.js';

/**
 * The item `id` by `author`, published `ageH` hours (default 1) before `nowMs`, no text, URL or tags,
 * popularity 0; `o` overrides any field.
 */
export function itemInput(id: string, nowMs: number, o: Partial<ItemInput> & { ageH?: number } = {}): ItemInput {
  const { ageH = 1, ...rest } = o;
  return {
    id,
    authorId: 'author',
    title: `title ${id}`,
    text: '',
    url: null,
    tags: [],
    publishedAt: nowMs - ageH * HOUR_MS,
    popularity: 0,
    ...rest,
  };
}

/**
 * `n` items `<prefix>_0` … `<prefix>_<n−1>` by author `a`: item i published i hours before `nowMs`, with
 * popularity n − i (the newest is the most popular), so every ranking orders them the same way.
 */
export function hourlyItems(prefix: string, n: number, nowMs: number): ItemInput[] {
  return Array.from({ length: n }, (_, i) =>
    itemInput(`${prefix}_${i}`, nowMs, { authorId: 'a', title: `t ${i}`, ageH: i, popularity: n - i }),
  );
}
