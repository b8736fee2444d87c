/**
 * Freshet as a library — `import { openFreshet } from 'freshet-engine'`: the same engine as the HTTP service,
 * in process, on the embedded default (PGlite + in-process stores in a data folder) or on your own
 * PostgreSQL and Redis. Writes go through `freshet.useCases` (publish, delete, views, follow/block,
 * engagements, feedback); feeds are read from `forYou`, `discover.feed`, `following.timeline` and `hot`;
 * `explain` says why an item is or is not in one of them; `ranking` hooks add recall sources and re-rank
 * the feeds (docs/library.md "Ranking hooks"), over what the learning room learns (docs/learning.md).
 * docs/library.md has a runnable example. The HTTP face is `buildApp(freshet)` (Fastify).
 */
export { openFreshet, configFromOptions, type Freshet, type FreshetOptions, type OpenOptions } from './compose/open.js';
export { loadConfig, ensureSecrets, type Config } from './compose/config.js';
export { buildApp, type AppOptions } from './server/app.js';
export { UseCases, type PublishInput } from './use-cases/verbs.js';
export { FreshetError, ErrorCodes } from './kernel/errors.js';
export { ManualClock, systemClock, type Clock } from './kernel/clock.js';
export type { Item, ItemJson } from './kernel/items/item.js';
export type { ItemInput } from './kernel/items/content-store.js';
export type { FeedPage } from './for-you/service.js';
export type { DiscoverPage, DiscoverReRank } from './discover/service.js';
export type { RecallSource, SourceCandidate, SourceQuery, ReRank, RankedCandidate } from './for-you/sources.js';
export type { TimelinePage } from './following/service.js';
export type { HotPage } from './hot/service.js';
export type { ViewInput, ViewResult } from './hot/hot-counters.js';
export type { ExplainQuery } from './use-cases/explain.js';
export type { Explanation, ExplainRule, ExplainScore, ExplainFeed } from './kernel/explain.js';
export { mintReaderToken } from './kernel/http/tokens.js';
