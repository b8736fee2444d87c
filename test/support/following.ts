/**
 * Helpers for following-timeline tests over HTTP (through `freshet-engine/client` on `app.inject`): publish items as an author at a virtual time, wait for
 * the fan-out, follow, read pages, page through a whole timeline, and the SQL truth to compare with.
 */
import { expect } from 'vitest';
import { SERVICE_KEY, T0, type TestApp } from './app.js';

export const svc = { authorization: `Bearer ${SERVICE_KEY}` };
export const MIN = 60_000;
export const DAY = 86_400_000;

/** A fan-out test app: a worker runs (the embedded one, or one started here on Redis). */
export function withWorker(t: TestApp): TestApp {
  if (!t.f.following.inlineWorker) t.f.following.startWorker(2);
  return t;
}

/** Publishes items `ids` by `author` at virtual time `nowMs` (published_at = now unless `publishedAt`). */
export async function publish(
  t: TestApp,
  author: string,
  ids: string[],
  nowMs: number,
  publishedAt = nowMs,
): Promise<void> {
  const items = ids.map((id) => ({
    id,
    author_id: author,
    title: `${author} ${id}`,
    published_at: Math.floor(publishedAt / 1000),
  }));
  await t.client({ now: nowMs }).items.publish(items);
}

/** Waits until every fan-out job is done (a bound against a hang: a busy 2-core machine may need a minute). */
export async function settle(t: TestApp): Promise<void> {
  await t.f.following.queue.idle(60_000);
}

export async function graphCall(
  t: TestApp,
  method: 'PUT' | 'DELETE',
  url: string,
  nowMs = T0,
  headers: Record<string, string> = svc,
) {
  return t.app.inject({ method, url, headers: { ...headers, 'x-freshet-now': String(nowMs) } });
}

/** Follows through the API and asserts success. */
export async function follow(t: TestApp, reader: string, author: string, nowMs = T0): Promise<void> {
  await t.client({ now: nowMs }).follows.follow(reader, author);
}

/** Registers users. */
export async function register(t: TestApp, ...ids: string[]): Promise<void> {
  for (const id of ids) await t.client().users.register(id);
}

export interface Page {
  ids: string[];
  tids: string[];
  next: string | null;
  /** The inbox was regenerated for this read. */
  rebuilt: boolean;
}

/** One page of the reader's timeline at virtual time `nowMs`. */
export async function page(
  t: TestApp,
  reader: string,
  nowMs: number,
  q: Record<string, string | number> = {},
): Promise<Page> {
  const data = await t.client({ reader, now: nowMs }).following.page({
    limit: q.limit === undefined ? undefined : Number(q.limit),
    maxId: q.max_id?.toString(),
    sinceId: q.since_id?.toString(),
  });
  return {
    ids: data.items.map((i) => i.id),
    tids: data.items.map((i) => i.timeline_id),
    next: data.next_max_id,
    rebuilt: data.rebuilt,
  };
}

/** Pages through the whole timeline with `limit` per page; asserts strictly decreasing tids. */
export async function pageAll(t: TestApp, reader: string, nowMs: number, limit = 7): Promise<string[]> {
  const ids: string[] = [];
  let maxId: string | null | undefined;
  let last = Infinity;
  for (let guard = 0; guard < 1_000; guard++) {
    const p = await page(t, reader, nowMs, { limit, ...(maxId ? { max_id: maxId } : {}) });
    for (const tid of p.tids) {
      expect(Number(tid)).toBeLessThan(last);
      last = Number(tid);
    }
    ids.push(...p.ids);
    if (!p.next) return ids;
    maxId = p.next;
  }
  throw new Error('timeline did not end');
}

/** What the reader should see, straight from SQL (newest first). */
export async function truth(t: TestApp, reader: string): Promise<string[]> {
  const rows = await t.f.following.index.timeline(reader, Infinity, 0, 100_000);
  return rows.map((r) => r.item.id);
}
