/**
 * The one timeline publish (the following design's 发布Feed流程, before the queue): committed items get their
 * timeline ids, their authors' outboxes take them, and one fan-out job each is enqueued. Both callers
 * use it — `FollowingTimeline.publish` (the `publishItems` use case, after the content commit) and the
 * fan-out sweep (`FanoutWorker`, for committed items whose publish failed after the commit).
 */
import type { Published } from './timeline-index.js';
import type { TimelineDeps } from './service.js';

/** What the publish writes with: the timeline's ports and its outbox settings (ms). */
export interface PublishTarget {
  deps: Pick<TimelineDeps, 'index' | 'store' | 'queue' | 'log'>;
  /** Entries kept per outbox. */
  outboxLength: number;
  /** An outbox lives this long after its author's last publish (wall clock, ms). */
  activeWindowMs: number;
}

/**
 * Assigns timeline ids to the items of `itemIds` never published (idempotent: re-sent ids get none),
 * appends them to their authors' outboxes and enqueues their fan-out jobs, at `nowMs` (the publish time,
 * epoch ms, virtual in replays). Once the ids are committed, an outbox or queue failure is logged, not
 * thrown: the pending rows make the fan-out sweep finish the job (the job appends to the outbox again).
 * @returns the items published by this call.
 * @throws store errors of the id assignment (nothing committed then).
 */
export async function publishToTimeline(
  target: PublishTarget,
  itemIds: readonly string[],
  nowMs: number,
): Promise<Published[]> {
  const { index, store, queue, log } = target.deps;
  const published = await index.publish(itemIds, nowMs);
  if (published.length === 0) return published;
  const enqueuedAtMs = Date.now();
  try {
    await Promise.all(
      published.map((p) => store.appendToOutbox(p.authorId, p.tid, target.outboxLength, target.activeWindowMs)),
    );
    await queue.enqueue(published.map((p) => ({ ...p, nowMs, enqueuedAtMs })));
  } catch (err) {
    log.warn({ err, items: published.length }, 'publish: outbox or enqueue failed; the fan-out sweep will retry');
  }
  return published;
}
