/**
 * The layout's arrows (docs/architecture.md): edges → capabilities → kernel. The kernel imports no
 * capability, not the seen room and no edge; a capability imports only itself and the kernel (it
 * reaches another capability through a port the composition bridges, and the seen filters through the
 * kernel's ports `SeenFilter` / `ReaderSeenFilter`); the seen room (`src/seen/`, the never-twice promise) is a
 * room like the capabilities: it imports only itself and the kernel. Inside a capability, only `wire.ts` and
 * the adapters themselves import `adapters/` (the service and domain depend on ports). The explorer
 * (`src/ui/`) imports only itself and the typed client; the client (`src/client/`) imports only itself and
 * wire schemas (`schemas.ts` files), never the server side. The edge rooms run one way, top to bottom:
 * cli → server → compose → use-cases → observe ({@link EDGE_ORDER}; the CLI may also use the typed client),
 * and the CLI reaches a capability through the library or the use cases, never its `adapters/`. Checked
 * over the real import graph of src/, and over a small graph with known violations, so the check is shown
 * to bite.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
/** The rooms over the kernel: the feed capabilities and the seen filters. */
const CAPABILITIES = [
  'for-you',
  'hot',
  'discover',
  'following',
  'exclusions',
  'notifications',
  'seen',
  'content',
  'learn',
];
/** The edges: each its own room over the capabilities. */
const EDGES = ['server', 'compose', 'use-cases', 'observe', 'cli', 'ui', 'client'];
/**
 * The edge rooms a room of the server side may import (docs/architecture.md "The arrows"): each only those
 * below it, cli → server → compose → use-cases → observe; the CLI also the typed client.
 */
const EDGE_ORDER: Record<string, readonly string[]> = {
  cli: ['server', 'compose', 'use-cases', 'observe', 'client'],
  server: ['compose', 'use-cases', 'observe'],
  compose: ['use-cases', 'observe'],
  'use-cases': ['observe'],
  observe: [],
};

/** Every relative import of every .ts file under src/, as [from, to] paths relative to src/. */
function importGraph(): [string, string][] {
  const edges: [string, string][] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts')) {
        const text = readFileSync(path, 'utf8');
        for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
          const target = resolve(dirname(path), m[1]!).replace(/\.js$/, '.ts');
          edges.push([relative(SRC, path), relative(SRC, target)]);
        }
      }
    }
  };
  walk(SRC);
  return edges;
}

/** Lines of every .ts file under src/kernel/. */
function kernelLines(): number {
  return linesUnder(join(SRC, 'kernel'));
}

/** Lines of every .ts and .lua file under `root`. */
function linesUnder(root: string): number {
  let n = 0;
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts') || path.endsWith('.lua')) n += readFileSync(path, 'utf8').split('\n').length;
    }
  };
  walk(root);
  return n;
}

/** The arrows an import graph breaks, one line each (`from → to: why`). */
function violations(edges: readonly [string, string][]): string[] {
  const out: string[] = [];
  for (const [from, to] of edges) {
    const [a, ...restFrom] = from.split('/');
    const [b] = to.split('/');
    if (a === 'kernel' && b !== 'kernel') out.push(`${from} → ${to}: the kernel imports only the kernel`);
    if (CAPABILITIES.includes(a!) && b !== a && b !== 'kernel')
      out.push(`${from} → ${to}: a room imports only itself and the kernel`);
    if (a === 'ui' && b !== 'ui' && b !== 'client') out.push(`${from} → ${to}: the explorer imports only the client`);
    if (a === 'client' && b !== 'client' && !to.endsWith('/schemas.ts'))
      out.push(`${from} → ${to}: the client imports only itself and wire schemas`);
    const below = EDGE_ORDER[a!];
    if (below && b !== a && EDGES.includes(b!) && !below.includes(b!))
      out.push(`${from} → ${to}: the edge rooms run cli → server → compose → use-cases → observe`);
    if (a === 'cli' && CAPABILITIES.includes(b!) && to.split('/')[1] === 'adapters')
      out.push(`${from} → ${to}: the CLI reaches a capability through the library or the use cases`);
    if (CAPABILITIES.includes(a!) && b === a && to.split('/')[1] === 'adapters') {
      const inside = restFrom.join('/');
      if (inside !== 'wire.ts' && !inside.startsWith('adapters/'))
        out.push(`${from} → ${to}: only wire.ts and adapters import adapters`);
    }
  }
  return out;
}

describe('the layout keeps its arrows', () => {
  it('src/ has no import against edges → capabilities → kernel', () => {
    const edges = importGraph();
    expect(edges.length).toBeGreaterThan(300); // the walk really read the tree
    expect(violations(edges)).toEqual([]);
  });

  it('the check reports each kind of wrong arrow', () => {
    expect(
      violations([
        ['kernel/ids.ts', 'hot/domain.ts'],
        ['kernel/stores.ts', 'compose/config.ts'],
        ['discover/service.ts', 'hot/service.ts'],
        ['hot/routes.ts', 'compose/open.ts'],
        ['ui/main.ts', 'client/index.ts'],
        ['ui/main.ts', 'server/app.ts'],
        ['client/types.ts', 'hot/schemas.ts'],
        ['client/types.ts', 'server/routes/explain.ts'],
        ['hot/service.ts', 'hot/adapters/redis-hot-counters.ts'],
        ['hot/wire.ts', 'hot/adapters/redis-hot-counters.ts'],
        ['compose/open.ts', 'hot/wire.ts'],
        ['hot/service.ts', 'kernel/errors.ts'],
        ['kernel/redis/keys.ts', 'seen/bloom.ts'],
        ['for-you/service.ts', 'seen/redis-seen-filter.ts'],
        ['seen/wire.ts', 'discover/service.ts'],
        ['seen/bloom.ts', 'kernel/hash.ts'],
        ['compose/open.ts', 'seen/wire.ts'],
        ['compose/config.ts', 'server/limits.ts'],
        ['server/app.ts', 'compose/open.ts'],
        ['observe/overview-metrics.ts', 'use-cases/verbs.ts'],
        ['use-cases/verbs.ts', 'observe/overview-metrics.ts'],
        ['use-cases/verbs.ts', 'compose/open.ts'],
        ['compose/open.ts', 'cli/main.ts'],
        ['cli/serve.ts', 'server/app.ts'],
        ['cli/following/simulate.ts', 'following/adapters/memory-timeline-store.ts'],
        ['cli/following/simulate.ts', 'following/service.ts'],
        ['compose/migrations.ts', 'following/adapters/schema.ts'],
      ]),
    ).toEqual([
      'kernel/ids.ts → hot/domain.ts: the kernel imports only the kernel',
      'kernel/stores.ts → compose/config.ts: the kernel imports only the kernel',
      'discover/service.ts → hot/service.ts: a room imports only itself and the kernel',
      'hot/routes.ts → compose/open.ts: a room imports only itself and the kernel',
      'ui/main.ts → server/app.ts: the explorer imports only the client',
      'client/types.ts → server/routes/explain.ts: the client imports only itself and wire schemas',
      'hot/service.ts → hot/adapters/redis-hot-counters.ts: only wire.ts and adapters import adapters',
      'kernel/redis/keys.ts → seen/bloom.ts: the kernel imports only the kernel',
      'for-you/service.ts → seen/redis-seen-filter.ts: a room imports only itself and the kernel',
      'seen/wire.ts → discover/service.ts: a room imports only itself and the kernel',
      'compose/config.ts → server/limits.ts: the edge rooms run cli → server → compose → use-cases → observe',
      'observe/overview-metrics.ts → use-cases/verbs.ts: the edge rooms run cli → server → compose → use-cases → observe',
      'use-cases/verbs.ts → compose/open.ts: the edge rooms run cli → server → compose → use-cases → observe',
      'compose/open.ts → cli/main.ts: the edge rooms run cli → server → compose → use-cases → observe',
      'cli/following/simulate.ts → following/adapters/memory-timeline-store.ts: the CLI reaches a capability through the library or the use cases',
    ]);
  });

  it('the kernel stays the small shared floor: under 4,700 lines, and nothing in it imports src/seen/', () => {
    const lines = kernelLines();
    expect(lines).toBeGreaterThan(1000); // the count really read the kernel
    // 4,500 until the bounded text fold (items/fold.ts) and the data folder's modes (data-dir-modes.ts)
    // came here: each is used by two rooms, and the kernel is their one shared home
    expect(lines).toBeLessThan(4700);
    expect(importGraph().filter(([from, to]) => from.startsWith('kernel/') && to.startsWith('seen/'))).toEqual([]);
  });

  it('every folder of src/ is a room named here, and no room holds more than 30 % of the lines', () => {
    const rooms = readdirSync(SRC).filter((n) => statSync(join(SRC, n)).isDirectory());
    expect(rooms.filter((r) => r !== 'kernel' && !CAPABILITIES.includes(r) && !EDGES.includes(r))).toEqual([]);
    const lines = new Map(rooms.map((r) => [r, linesUnder(join(SRC, r))]));
    const total = [...lines.values()].reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(20_000); // the count really read the tree
    const over = [...lines]
      .filter(([, n]) => n / total > 0.3)
      .map(([r, n]) => `${r}: ${((100 * n) / total).toFixed(1)} %`);
    expect(over).toEqual([]);
  });
});
