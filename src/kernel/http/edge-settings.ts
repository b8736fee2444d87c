/**
 * The HTTP edge's settings: the shape `loadConfig` (src/compose/config.ts) parses from the environment
 * and the server's limits (src/server/limits.ts) apply. Here, below both, so the composition never
 * imports the server.
 */

/** The edge's limits (`FRESHET_REQUEST_TIMEOUT_S`, `FRESHET_HEADERS_TIMEOUT_S`, `FRESHET_RATE_*`, …); durations in ms. */
export interface EdgeSettings {
  /** The whole request (headers and body) must arrive within this (`FRESHET_REQUEST_TIMEOUT_S`, 30 s). */
  requestTimeoutMs: number;
  /** The headers must arrive within this (`FRESHET_HEADERS_TIMEOUT_S`, 10 s; ≤ the request timeout). */
  headersTimeoutMs: number;
  /** The rate limit's window (`FRESHET_RATE_WINDOW_S`, 10 s). */
  rateWindowMs: number;
  /** Requests per window of one reader on the limited routes (`FRESHET_RATE_READER`, 30; 0 = no limit). */
  readerRequests: number;
  /** Requests per window of one reader on every other `/v1` route (`FRESHET_RATE_READER_OTHER`, 60; 0 = no limit). */
  readerOtherRequests: number;
  /** Requests per window of the service key on the limited routes (`FRESHET_RATE_SERVICE`, 0 = no limit). */
  serviceRequests: number;
  /** Feed pages of one reader in flight in one process (`FRESHET_READER_CONCURRENCY`, 2; 0 = no limit). */
  readerConcurrency: number;
}
