/**
 * `freshet-engine/client`: the typed HTTP client of Freshet's v1 API (docs/client.md). Depends on nothing but
 * `fetch`; runs in Node ≥ 20 and in browsers. Types come from the server's TypeBox schemas (type-only
 * imports), so a request or answer the server would refuse does not compile.
 */
export { FreshetClient, type FreshetClientOptions, type ListOptions, type TimelineOptions } from './client.js';
export { FreshetClientError, type CallOptions, type FailureKind, type RetryPolicy } from './transport.js';
export { parseSse, type SseMessage, type StreamEvent, type StreamOptions } from './stream.js';
export type * from './types.js';
