/**
 * The request body parser: JSON only, parsed by `secure-json-parse` (Fastify's own choice) with
 * `__proto__` and `constructor.prototype` keys refused — and, unlike Fastify's default parser, a
 * refusal that says why: a body holding such a key is valid JSON, so "not valid JSON"
 * would send the client looking for a syntax error that is not there.
 */
import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { fail } from '../kernel/errors.js';

/** Replaces the JSON parser of `app` and drops the text one (a text/plain body is MALFORMED_BODY). */
export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}

/**
 * Parses a request body.
 * @throws FreshetError `MALFORMED_BODY`: empty, not JSON (with the parser's position), or holding a
 *   `__proto__` / `constructor.prototype` key (refused, saying why).
 */
export function parseJsonBody(body: string): unknown {
  if (body.length === 0)
    throw fail(
      'MALFORMED_BODY',
      'body is empty but Content-Type is application/json; send a JSON value, or no Content-Type when there is no body',
    );
  try {
    return sjson.parse(body, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (/forbidden prototype property/i.test(message)) {
      throw fail(
        'MALFORMED_BODY',
        'body is valid JSON but holds a "__proto__" or "constructor": {"prototype": …} key, which is refused: such keys can rewrite object prototypes in JavaScript servers (prototype pollution); rename the field',
      );
    }
    throw fail('MALFORMED_BODY', `body is not valid JSON: ${message}`);
  }
}
