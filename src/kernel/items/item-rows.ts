/**
 * The one mapping between a row of `items` (src/kernel/sql/migrations.ts; times in epoch ms as `bigint`) and the
 * domain `Item`, shared by every adapter that reads items.
 */
import type { Item } from './item.js';

/** The columns an `Item` is read from, each qualified with `alias.` when an alias is given. */
export function itemColumns(alias?: string): string {
  const a = alias ? `${alias}.` : '';
  return ['id', 'author_id', 'title', 'text', 'url', 'tags', 'published_at', 'update_time', 'popularity', 'lang']
    .map((c) => a + c)
    .join(', ');
}

/** A row read with {@link itemColumns}; `bigint` and `float8` may arrive as strings (node-postgres). */
export interface ItemRow {
  id: string;
  author_id: string;
  title: string;
  text: string;
  url: string | null;
  tags: string[];
  published_at: number | string;
  update_time: number | string;
  popularity: number | string;
  lang: string;
}

/** The domain item of a row (epoch ms as numbers). */
export function rowToItem(r: ItemRow): Item {
  return {
    id: r.id,
    authorId: r.author_id,
    title: r.title,
    text: r.text,
    url: r.url,
    tags: r.tags,
    publishedAt: Number(r.published_at),
    updateTime: Number(r.update_time),
    popularity: Number(r.popularity),
    lang: r.lang,
  };
}
