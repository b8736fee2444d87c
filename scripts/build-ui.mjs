/**
 * Builds the web explorer (docs/ui.md) into dist/ui/: esbuild bundles src/ui/main.ts (and the
 * typed client it imports) into one ES module app.js; index.html and app.css are copied as they are.
 * Run by `npm run build` (so by `prepare` at `npm install`); the UI test calls `buildUi()` itself.
 * Usage: `node scripts/build-ui.mjs [outDir]`.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const WEB = fileURLToPath(new URL('../src/ui/', import.meta.url));
export const UI_OUT = fileURLToPath(new URL('../dist/ui/', import.meta.url));

/** Bundles the explorer into `outDir` (default dist/ui/). Resolves when the files are written. */
export async function buildUi(outDir = UI_OUT) {
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: [`${WEB}main.ts`],
    outfile: `${outDir}/app.js`,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    minify: true,
    sourcemap: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  copyFileSync(`${WEB}index.html`, `${outDir}/index.html`);
  copyFileSync(`${WEB}app.css`, `${outDir}/app.css`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildUi(process.argv[2] ?? UI_OUT);
}
