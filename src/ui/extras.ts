/**
 * Small helpers of the explorer's pages over the typed client: the for-you "peek" badge (null when the
 * server does not offer the route — an older server answers 404) and error sentences.
 */
import type { FreshetClient, ExclusionListData } from '../client/index.js';
import { FreshetClientError } from '../client/index.js';

/** `GET /v1/exclusions`, as the client types it. */
export type ExclusionList = ExclusionListData;

/** The reader's exclusions (recent views, engaged, not interested, blocked authors). */
export async function exclusions(c: FreshetClient): Promise<ExclusionList> {
  return c.exclusions.list();
}

/**
 * How many fresh unseen candidates a refresh would bring now (`{count, capped}`; `capped`: the check hit
 * its bound, there may be more), or null when the server does not offer the route (404).
 */
export async function peek(c: FreshetClient): Promise<{ count: number; capped: boolean } | null> {
  try {
    const data = await c.forYou.peek({ timeoutMs: 5_000 });
    return { count: data.count, capped: data.capped === true };
  } catch (err) {
    if (err instanceof FreshetClientError && (err.status === 404 || err.status === 405)) return null;
    throw err;
  }
}

/** A short sentence for an error shown on a page. */
export function describe(err: unknown): string {
  if (err instanceof FreshetClientError)
    return err.kind === 'http' ? `${err.status} · ${err.code} · ${err.msg}` : `${err.kind}: ${err.msg}`;
  return err instanceof Error ? err.message : String(err);
}
