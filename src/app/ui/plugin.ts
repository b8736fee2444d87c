/**
 * The web explorer at `/ui` (docs/ui.md): a Fastify plugin serving the prebuilt static bundle
 * (`dist/ui/`: index.html, app.js, app.css — built by `scripts/build-ui.mjs` at `npm run build`, which
 * `prepare` runs at `npm install`) with @fastify/static. The explorer is a client of the public `/v1`
 * API only: it has no routes of its own and no privileges; the browser keeps the key it signs in with.
 *
 * Every answer carries a Content-Security-Policy allowing only this origin: nothing is fetched from
 * anywhere else at run time (no CDN scripts or fonts). When the bundle is missing (a checkout that was
 * never built), `/ui` answers 503 with a plain sentence saying how to build it, and the API is unaffected.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync } from 'fastify';
import fastifyStatic from '@fastify/static';

/** Where `npm run build` writes the bundle: `<package>/dist/ui` (the same from src/ and from dist/). */
export const UI_DIST_DIR = fileURLToPath(new URL('../../../dist/ui/', import.meta.url));

/** Options of {@link uiRoutes}. */
export interface UiOptions {
  /** Folder holding index.html, app.js and app.css (default {@link UI_DIST_DIR}). */
  root?: string;
}

/** Same-origin only; inline styles allowed for the charts' computed widths (no inline scripts). */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Registers `/ui` (redirect to `/ui/`) and the static files under `/ui/`. */
export const uiRoutes: FastifyPluginAsync<UiOptions> = async (app, opts) => {
  const root = opts.root ?? UI_DIST_DIR;
  app.addHook('onSend', async (_req, reply) => {
    void reply.header('content-security-policy', CSP);
    void reply.header('x-content-type-options', 'nosniff');
  });
  app.get('/ui', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/ui/'));
  if (!existsSync(`${root}/index.html`)) {
    app.get('/ui/*', { schema: { hide: true } }, async (_req, reply) =>
      reply
        .status(503)
        .type('text/plain; charset=utf-8')
        .send('The web explorer is not built: run `npm run build` (it writes dist/ui/).\n'),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/ui/',
    decorateReply: false, // @fastify/swagger-ui registers its own instance
    index: ['index.html'],
    cacheControl: true,
    maxAge: 0, // small files; a rebuilt bundle is picked up on reload
    schemaHide: true,
  });
};
