/**
 * usearch, loaded through its CommonJS build — the one way Freshet gets it: the discover room's in-process
 * vector indexes and the learning room's factor model both use it, so it lives here, on the shared floor.
 *
 * usearch's ES module build finds its native binary by walking up from a folder it guesses: the global
 * `__dirname` when one exists, else the caller's file from a stack trace (the `bindings` package). Where a
 * global `__dirname` is a relative path — `node -e` and `node --input-type=module` set it to `"."` — that
 * walk (`getBuildDir` in usearch/javascript/dist/esm/usearch.js) joins `..` for ever and never reaches
 * `/`: `RangeError: Maximum call stack size exceeded`, after ~30 s of a spinning CPU, for an application
 * importing the package that way. The CommonJS build walks up from its own module `__dirname`, always the
 * absolute folder it sits in, to `node_modules/usearch/` and loads the binary shipped under
 * `prebuilds/<platform>-<arch>/` (`node-gyp-build`); no install script has to have run (npm 11 does not
 * run dependencies' install scripts unless they are allowed).
 *
 * The classes and enums are usearch's own (one copy: nothing else imports `usearch`; the rebase worker,
 * src/discover/adapters/rebase-worker.mjs, loads the same CommonJS build in its thread), typed by its
 * declarations.
 */
import { createRequire } from 'node:module';

type Usearch = typeof import('usearch');

const usearch = createRequire(import.meta.url)('usearch') as Usearch;

/** usearch's HNSW index class (`new Index(options)`, `view`, `load`, `save`, `search`, `add`, `remove`). */
export const Index: Usearch['Index'] = usearch.Index;
/** An HNSW index (usearch's `Index`). */
export type Index = import('usearch').Index;
/** usearch's distance metrics (`MetricKind.Cos`). */
export const MetricKind: typeof import('usearch').MetricKind = usearch.MetricKind;
/** usearch's scalar kinds of stored vectors (`ScalarKind.I8`). */
export const ScalarKind: typeof import('usearch').ScalarKind = usearch.ScalarKind;
/** usearch's brute-force search over a flat array of vectors (SIMD, exact). */
export const exactSearch: Usearch['exactSearch'] = usearch.exactSearch;
/** The keys and distances a search returns. */
export type Matches = import('usearch').Matches;
