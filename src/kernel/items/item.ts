/**
 * Items: what an application hands Freshet, and what feeds hydrate their ids into.
 *
 * Times inside Freshet are epoch milliseconds; the JSON API speaks epoch seconds for
 * `update_time` and `published_at` in responses (the API's envelope, docs/api.md), and accepts ISO 8601 or
 * epoch seconds for `published_at` in requests.
 */

/** An item as stored and served. */
export interface Item {
  id: string;
  authorId: string;
  title: string;
  text: string;
  url: string | null;
  tags: string[];
  /** Publication time, epoch ms. */
  publishedAt: number;
  /** Last write time, epoch ms (set by Freshet on every upsert). */
  updateTime: number;
  /** A non-negative popularity prior (e.g. points or likes) used for readers without interests. */
  popularity: number;
  /**
   * The item's language: a BCP-47 primary tag, lower-case (`en`, `de`, `zh`), or `und` when unknown
   * (src/kernel/items/lang.ts). Absent only on items built outside a store (read back, it is always set).
   */
  lang?: string;
}

/**
 * An item as a feed serves it to one reader: the item itself, or a copy carrying `filtered` — the reader's
 * muted phrases whose action is `warn` that the item holds (docs/preferences.md), so the client can
 * collapse it. Never stored, never shared between readers.
 */
export interface ServedItem extends Item {
  /** The reader's `warn` phrases the item holds, as the reader wrote them (absent: none). */
  filtered?: readonly string[];
}

/** The JSON shape of an item in API responses (snake_case, epoch seconds). */
export interface ItemJson {
  id: string;
  author_id: string;
  title: string;
  text: string;
  url: string | null;
  tags: string[];
  published_at: number;
  update_time: number;
  popularity: number;
  /** BCP-47 primary tag, or `und`. */
  lang: string;
  /** Feeds only: the reader's `warn` phrases the item holds (absent: none). */
  filtered?: string[];
}

/** Maps an item to its JSON shape (times in epoch seconds); `filtered` only when the served item carries it. */
export function itemToJson(item: ServedItem): ItemJson {
  const json: ItemJson = {
    id: item.id,
    author_id: item.authorId,
    title: item.title,
    text: item.text,
    url: item.url,
    tags: item.tags,
    published_at: Math.floor(item.publishedAt / 1000),
    update_time: Math.floor(item.updateTime / 1000),
    popularity: item.popularity,
    lang: item.lang ?? 'und',
  };
  if (item.filtered !== undefined && item.filtered.length > 0) json.filtered = [...item.filtered];
  return json;
}

/**
 * Parses `published_at` as accepted by the API: epoch seconds (number or digit string) or an
 * ISO 8601 string. Returns epoch ms, or `null` when the value is not a valid time.
 */
export function parsePublishedAt(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value * 1000) : null;
  if (typeof value !== 'string' || value.length === 0 || value.length > 40) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && ms >= 0 ? ms : null;
}
