/**
 * The client's one HTTP path: builds the request (bearer token, `X-Freshet-Reader`, `X-Freshet-Now`),
 * bounds it by a per-request timeout (an `AbortSignal`), unwraps the `{code, msg, data}` envelope and
 * throws a {@link FreshetClientError} for anything else. Only a 503 (a store did not answer, 50301) is
 * retried, with capped exponential backoff and jitter; every other failure is thrown at once.
 * Uses nothing but `fetch`, `AbortSignal` and `setTimeout`: runs in Node ≥ 20 and in browsers.
 */

/** Why a request failed: the server answered an error envelope (`http`), or no usable answer came. */
export type FailureKind = 'http' | 'network' | 'timeout' | 'aborted' | 'bad-response';

/**
 * A failed call. `code`/`msg` are the server's envelope (docs/api.md "Error codes", e.g. 40001, 50301),
 * `status` the HTTP status, `data` the envelope's `data` (null for errors, the store map of `/readyz`).
 * When no envelope came (`kind` ≠ `http`), `code` is 0 and `status` the HTTP status or 0.
 */
export class FreshetClientError extends Error {
  override readonly name = 'FreshetClientError';
  constructor(
    readonly kind: FailureKind,
    readonly status: number,
    readonly code: number,
    readonly msg: string,
    readonly data: unknown,
    /** `METHOD /path` of the request. */
    readonly request: string,
    /** How many times it was sent (more than 1 after 503 retries). */
    readonly attempts: number,
    options?: { cause?: unknown; retryAfterMs?: number | null },
  ) {
    super(`${request}: ${kind === 'http' ? `${status} ${code} ${msg}` : `${kind}: ${msg}`}`, options);
    this.retryAfterMs = options?.retryAfterMs ?? null;
  }

  /**
   * How long the server asked the caller to wait before sending again (its `Retry-After`, in ms: a 429 over a
   * rate limit, 42901), or null when it named no time. The client never waits by itself on a 429: the caller
   * decides (drop, queue, or wait this long).
   */
  readonly retryAfterMs: number | null;
}

/**
 * A `Retry-After` header in ms (RFC 9110 §10.2.3: delay-seconds, or an HTTP-date counted from `nowMs`), or
 * null when absent or not one of those forms. A date in the past is 0.
 */
export function retryAfterMs(header: string | null, nowMs = Date.now()): number | null {
  if (header === null) return null;
  const v = header.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (!/ GMT$/.test(v)) return null; // an HTTP-date is written in GMT (IMF-fixdate)
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** Retries of 503 answers: up to `attempts` sends in all, delays `baseMs · 2^(n−1)` capped at `maxMs`, each drawn uniformly from [½, 1] of that (jitter). */
export interface RetryPolicy {
  /** Sends in all, 1 = no retry (default 3). */
  attempts?: number;
  /** First delay, ms (default 100). */
  baseMs?: number;
  /** Longest delay, ms (default 2 000). */
  maxMs?: number;
}

/** Options of one call (every method takes them last). */
export interface CallOptions {
  /** The reader the service key acts for (`X-Freshet-Reader`); overrides the client's. */
  reader?: string;
  /** The request's virtual time, epoch ms (`X-Freshet-Now`, service key only); overrides the client's. */
  now?: number;
  /** Aborts the call (the per-request timeout applies too). */
  signal?: AbortSignal;
  /** This call's timeout, ms; overrides the client's. */
  timeoutMs?: number;
}

/** Transport settings (see `FreshetClientOptions`). */
export interface TransportOptions {
  baseUrl: string;
  token: string;
  reader?: string;
  now?: number | (() => number);
  timeoutMs?: number;
  retry?: RetryPolicy;
  fetch?: typeof fetch;
  onRetry?: (info: { request: string; attempt: number; delayMs: number; error: FreshetClientError }) => void;
  random?: () => number;
}

/** One request. `query` values are dropped when undefined. */
export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Send `X-Freshet-Reader` / `X-Freshet-Now` when set (only routes that read them). */
  reader?: boolean;
  now?: boolean;
}

/** A parsed answer: the envelope's `data` and the response headers. */
export interface Answer<T> {
  data: T;
  headers: Headers;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** The HTTP path shared by every method of the client. */
export class Transport {
  readonly baseUrl: string;
  constructor(readonly opts: TransportOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
  }

  /** The URL of a path with its query (undefined values dropped). */
  url(path: string, query?: RequestSpec['query']): string {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) q.set(k, String(v));
    const s = q.toString();
    return `${this.baseUrl}${path}${s ? `?${s}` : ''}`;
  }

  /** The headers of a request: bearer token, reader and virtual time where the route reads them. */
  headers(spec: Pick<RequestSpec, 'reader' | 'now'>, call: CallOptions, json: boolean): Record<string, string> {
    const h: Record<string, string> = { authorization: `Bearer ${this.opts.token}`, accept: 'application/json' };
    if (json) h['content-type'] = 'application/json';
    const reader = call.reader ?? this.opts.reader;
    if (spec.reader && reader !== undefined) h['x-freshet-reader'] = reader;
    const now = call.now ?? (typeof this.opts.now === 'function' ? this.opts.now() : this.opts.now);
    if (spec.now && now !== undefined) h['x-freshet-now'] = String(Math.floor(now));
    return h;
  }

  /**
   * Sends a request, retrying 503 answers by the retry policy.
   * @throws FreshetClientError on an error envelope, a non-JSON answer, a network failure, a timeout or an abort.
   */
  async request<T>(spec: RequestSpec, call: CallOptions = {}): Promise<Answer<T>> {
    const label = `${spec.method} ${spec.path}`;
    const attempts = Math.max(1, this.opts.retry?.attempts ?? 3);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once<T>(spec, call, label, attempt);
      } catch (err) {
        if (!(err instanceof FreshetClientError) || err.status !== 503 || attempt >= attempts) throw err;
        const delayMs = this.backoff(attempt);
        this.opts.onRetry?.({ request: label, attempt, delayMs, error: err });
        await sleep(delayMs, call.signal);
      }
    }
  }

  /** The delay before retry `attempt` (1-based): capped exponential, equal jitter. */
  backoff(attempt: number): number {
    const base = this.opts.retry?.baseMs ?? 100;
    const cap = this.opts.retry?.maxMs ?? 2_000;
    const full = Math.min(cap, base * 2 ** (attempt - 1));
    return Math.round(full / 2 + (full / 2) * (this.opts.random ?? Math.random)());
  }

  /** A signal that aborts on the caller's signal or after the timeout, and which of the two it was. */
  signal(call: CallOptions): AbortSignal {
    const timeout = AbortSignal.timeout(call.timeoutMs ?? this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    return call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
  }

  private async once<T>(spec: RequestSpec, call: CallOptions, label: string, attempt: number): Promise<Answer<T>> {
    const fetchFn = this.opts.fetch ?? globalThis.fetch;
    const json = spec.body !== undefined;
    let res: Response;
    let text: string;
    try {
      const init: RequestInit = {
        method: spec.method,
        headers: this.headers(spec, call, json),
        signal: this.signal(call),
      };
      if (json) init.body = JSON.stringify(spec.body);
      res = await fetchFn(this.url(spec.path, spec.query), init);
      text = await res.text();
    } catch (err) {
      throw transportError(err, call, label, attempt);
    }
    let envelope: { code?: unknown; msg?: unknown; data?: unknown };
    try {
      envelope = JSON.parse(text) as typeof envelope;
    } catch (err) {
      throw new FreshetClientError(
        'bad-response',
        res.status,
        0,
        `not JSON: ${text.slice(0, 120)}`,
        null,
        label,
        attempt,
        { cause: err },
      );
    }
    if (typeof envelope !== 'object' || envelope === null || typeof envelope.code !== 'number') {
      throw new FreshetClientError(
        'bad-response',
        res.status,
        0,
        `not an envelope: ${text.slice(0, 120)}`,
        null,
        label,
        attempt,
      );
    }
    if (envelope.code !== 0 || !res.ok) {
      throw new FreshetClientError(
        'http',
        res.status,
        envelope.code,
        String(envelope.msg ?? ''),
        envelope.data ?? null,
        label,
        attempt,
        { retryAfterMs: retryAfterMs(res.headers.get('retry-after')) },
      );
    }
    return { data: envelope.data as T, headers: res.headers };
  }
}

/** Maps a thrown fetch/read failure to a client error: caller abort, timeout, or network. */
export function transportError(err: unknown, call: CallOptions, label: string, attempt: number): FreshetClientError {
  const name = (err as { name?: string } | null)?.name;
  if (call.signal?.aborted)
    return new FreshetClientError('aborted', 0, 0, 'aborted by the caller', null, label, attempt, { cause: err });
  if (name === 'TimeoutError' || name === 'AbortError')
    return new FreshetClientError('timeout', 0, 0, 'no answer within the timeout', null, label, attempt, {
      cause: err,
    });
  return new FreshetClientError(
    'network',
    0,
    0,
    err instanceof Error ? err.message : String(err),
    null,
    label,
    attempt,
    { cause: err },
  );
}

/** Waits `ms`, or rejects when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
