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
export const UI_DIST_DIR = fileURLToPath(new URL('../../dist/ui/', import.meta.url));

/** Options of {@link uiRoutes}. */
export interface UiOptions {
  /** Folder holding index.html, app.js and app.css (default {@link UI_DIST_DIR}). */
  root?: string;
}

/** The icon: a drop of fresh water (Freshet), as SVG. */
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path d="M16 2C16 2 6 14 6 20a10 10 0 0 0 20 0C26 14 16 2 16 2z" fill="#1f6feb"/><path d="M11 20a5 5 0 0 0 5 5" stroke="#fff" stroke-width="2" fill="none" stroke-linecap="round"/></svg>';

/** Same-origin only; inline styles allowed for the charts' computed widths (no inline scripts). */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Registers `/` and `/ui` (redirects to `/ui/`), the favicon, and the static files under `/ui/`. */
export const uiRoutes: FastifyPluginAsync<UiOptions> = async (app, opts) => {
  const root = opts.root ?? UI_DIST_DIR;
  app.addHook('onSend', async (_req, reply) => {
    void reply.header('content-security-policy', CSP);
    void reply.header('x-content-type-options', 'nosniff');
  });
  app.get('/ui', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/ui/'));
  // the service's root is the explorer: a person who opens the printed URL lands on something to see
  app.get('/', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/ui/'));
  // browsers ask for /favicon.ico on every page: answer it rather than a 404 in every log
  for (const path of ['/favicon.ico', '/favicon.svg'])
    app.get(path, { schema: { hide: true } }, async (_req, reply) =>
      reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(FAVICON),
    );
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
