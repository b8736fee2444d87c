/**
 * The client side of `GET /v1/feeds/following/stream` (Server-Sent Events): an async iterator over the
 * timeline entries fan-out delivers (docs/following.md "Realtime"), read with `fetch` streaming (no `EventSource`, which cannot send
 * an `Authorization` header). Each `item` event carries `id:` = the timeline id; when the connection
 * ends or goes silent past `idleTimeoutMs` the iterator reconnects with `Last-Event-ID` = the last id
 * it yielded, so the server replays what was missed (no gap, no repeat). An error envelope before the
 * stream starts (401, 403, 429 over a connection limit, …) is thrown as a `FreshetClientError`; 503 and
 * a dropped connection are retried with backoff, at most `maxReconnects` times in a row without an event.
 */
import { FreshetClientError, transportError, type CallOptions, type Transport } from './transport.js';
import type { MarkerEvent, NotificationsEvent, StreamItem } from './types.js';

/**
 * What the stream yields: `item` — one new timeline entry, its `timeline_id` (also the SSE `id`) and the
 * item; `reset` — more was missed than the server replays (`FRESHET_STREAM_REPLAY_MAX`): reload the
 * timeline by paging (`following.page()`); the stream goes on after `timeline_id`; `notifications` — the
 * reader's notifications or notifications marker changed (on any device): the unread count and the newest
 * group; `marker` — the reader moved its following-timeline marker (on any device): the marker and the
 * unread count (neither is replayed on a reconnect: read the state with `notifications.page()`, `markers.get()`).
 */
export type StreamEvent =
  | ({ type: 'item' } & StreamItem)
  | { type: 'reset'; timeline_id: string }
  | ({ type: 'notifications' } & NotificationsEvent)
  | ({ type: 'marker' } & MarkerEvent);

/** Options of `following.stream()`. `reader`/`now`/`signal` as in every call; `timeoutMs` bounds the connect. */
export interface StreamOptions extends CallOptions {
  /** Deliver entries newer than this timeline id (exclusive) first, then live ones; default: only new ones. */
  sinceId?: string;
  /** Reconnect after the connection ends (default true). */
  reconnect?: boolean;
  /** Consecutive failed connections before giving up (default 5). */
  maxReconnects?: number;
  /** Reconnect when nothing (not even a heartbeat) arrives for this long, ms (default 60 000). */
  idleTimeoutMs?: number;
}

/** A connection that lasted this long (ms) is not a failed one, even without an event. */
const STABLE_MS = 10_000;

/** A parsed SSE message (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation). */
export interface SseMessage {
  event: string;
  data: string;
  id: string | undefined;
}

/**
 * Splits an SSE byte stream into messages: `field: value` lines, a blank line dispatches, `:` lines are
 * comments (heartbeats). Holds at most one unfinished line between chunks.
 */
export async function* parseSse(
  body: ReadableStream<Uint8Array>,
  onBytes: () => void = () => {},
): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      onBytes();
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', data: data.join('\n'), id };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const v = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = v;
        else if (field === 'data') data.push(v);
        else if (field === 'id' && !v.includes('\0')) id = v;
      }
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}

/** The iterator behind `client.following.stream()` (see the module doc). */
export async function* followingStream(t: Transport, opts: StreamOptions): AsyncGenerator<StreamEvent> {
  let lastId = opts.sinceId;
  let failures = 0;
  const label = 'GET /v1/feeds/following/stream';
  for (let attempt = 1; ; attempt++) {
    if (opts.signal?.aborted)
      throw new FreshetClientError('aborted', 0, 0, 'aborted by the caller', null, label, attempt);
    const ctl = new AbortController();
    const onAbort = () => ctl.abort(opts.signal?.reason);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const idleMs = opts.idleTimeoutMs ?? 60_000;
    let idle: ReturnType<typeof setTimeout> | undefined;
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => ctl.abort(new DOMException('idle', 'TimeoutError')), idleMs);
    };
    let delivered = false;
    let failedNow = false;
    const openedAt = Date.now();
    try {
      const res = await connect(t, opts, lastId, ctl, label, attempt);
      touch();
      for await (const m of parseSse(res.body!, touch)) {
        if (m.event === 'notifications' || m.event === 'marker') {
          yield { type: m.event, ...JSON.parse(m.data) } as StreamEvent;
          continue;
        }
        if (m.event !== 'item' && m.event !== 'reset') continue;
        const ev = { type: m.event, ...(JSON.parse(m.data) as StreamItem) } as StreamEvent & { timeline_id: string };
        lastId = m.id ?? ev.timeline_id;
        delivered = true;
        failures = 0;
        yield ev;
      }
    } catch (err) {
      const e = retryableFailure(err, opts, label, attempt);
      failedNow = true;
      if (opts.reconnect === false || ++failures > (opts.maxReconnects ?? 5)) throw e;
    } finally {
      clearTimeout(idle);
      opts.signal?.removeEventListener('abort', onAbort);
      ctl.abort();
    }
    if (opts.reconnect === false) return;
    // a connection the server ended at once without an event counts as a failure (no tight reconnect loop);
    // one that lasted a while (an idle stream ended by a server restart) does not
    if (!delivered && !failedNow && Date.now() - openedAt < STABLE_MS && ++failures > (opts.maxReconnects ?? 5)) {
      throw new FreshetClientError('network', 0, 0, endedMessage(failures), null, label, attempt);
    }
    if (!delivered) await new Promise((r) => setTimeout(r, t.backoff(Math.max(1, failures))));
  }
}

/** Why the stream gave up after `failures` connections ended at once without an event. */
function endedMessage(failures: number): string {
  return `the stream ended ${failures} times in a row without an event`;
}

/**
 * A failed connection's error when it is retried (a 503, the network, a timeout).
 * @throws it when it is not: an abort by the caller, another HTTP error, a bad response.
 */
function retryableFailure(err: unknown, opts: StreamOptions, label: string, attempt: number): FreshetClientError {
  if (opts.signal?.aborted) throw transportError(err, opts, label, attempt);
  const e = err instanceof FreshetClientError ? err : transportError(err, {}, label, attempt);
  if (e.kind === 'http' && e.status !== 503) throw e;
  if (e.kind === 'bad-response') throw e;
  return e;
}

/**
 * Opens the stream (aborting `ctl` when the headers do not come within the timeout); an answer that is
 * not `text/event-stream` is read as an error envelope and thrown.
 */
async function connect(
  t: Transport,
  opts: StreamOptions,
  lastId: string | undefined,
  ctl: AbortController,
  label: string,
  attempt: number,
): Promise<Response> {
  const headers: Record<string, string> = {
    ...t.headers({ reader: true, now: true }, opts, false),
    accept: 'text/event-stream',
  };
  if (lastId !== undefined) headers['last-event-id'] = lastId;
  const timer = setTimeout(
    () => ctl.abort(new DOMException('no answer within the timeout', 'TimeoutError')),
    opts.timeoutMs ?? t.opts.timeoutMs ?? 30_000,
  );
  let res: Response;
  try {
    res = await (t.opts.fetch ?? globalThis.fetch)(t.url('/v1/feeds/following/stream'), {
      headers,
      signal: ctl.signal,
    });
  } finally {
    clearTimeout(timer);
  }
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream') && res.ok && res.body) return res;
  const text = await res.text();
  let env: { code?: unknown; msg?: unknown; data?: unknown } = {};
  try {
    env = JSON.parse(text) as typeof env;
  } catch {
    throw new FreshetClientError(
      'bad-response',
      res.status,
      0,
      `not an event stream: ${text.slice(0, 120)}`,
      null,
      label,
      attempt,
    );
  }
  throw new FreshetClientError(
    'http',
    res.status,
    typeof env.code === 'number' ? env.code : 0,
    String(env.msg ?? ''),
    env.data ?? null,
    label,
    attempt,
  );
}
