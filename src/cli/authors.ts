/**
 * Ranking the authors of a set of items, for the simulations that map data-set authors onto users
 * (`simulate following`: the most prolific authors publish as the most followed users; `simulate
 * discover`: readers follow some of the most prolific authors).
 */
import type { ItemInput } from '../kernel/items/content-store.js';
import { compareIds } from '../kernel/ids.js';

/** The authors of `items`, most items first, ties by id ({@link compareIds}): a deterministic order. */
export function authorsByItems(items: readonly Pick<ItemInput, 'authorId'>[]): string[] {
  const counts = new Map<string, number>();
  for (const i of items) counts.set(i.authorId, (counts.get(i.authorId) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || compareIds(a[0], b[0])).map(([author]) => author);
}
