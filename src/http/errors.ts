/**
 * Maps every failure to the error envelope `{code, msg, data: null}` with its HTTP status:
 * FreshetErrors keep their code; schema failures become INVALID_INPUT (or INVALID_ID for an id
 * pattern); body-parser failures MALFORMED_BODY / BODY_TOO_LARGE; store outages STORE_UNAVAILABLE;
 * anything else INTERNAL (logged with its stack, never sent to the client).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCodes, FreshetError, type ErrorName } from '../domain/errors.js';

function send(reply: FastifyReply, name: ErrorName, msg: string) {
  const { code, status } = ErrorCodes[name];
  return reply.status(status).send({ code, msg, data: null });
}

const STORE_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '08006', '08001']);

function isStoreOutage(err: { code?: unknown; name?: unknown; message?: unknown }): boolean {
  if (typeof err.code === 'string' && STORE_ERRORS.has(err.code)) return true;
  const name = String(err.name ?? '');
  const msg = String(err.message ?? '');
  return name === 'MaxRetriesPerRequestError' || /Connection is closed|ClusterAllFailedError|Stream isn't writeable/i.test(msg);
}

/** Installs the error and not-found handlers on `app`. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((req: FastifyRequest, reply: FastifyReply) => send(reply, 'NOT_FOUND', `no route ${req.method} ${req.url.split('?')[0]}`));

  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof FreshetError) return send(reply, err.name_, err.message);
    if (err.validation) {
      const idPattern = err.validation.some((v) => v.keyword === 'pattern' && /\bid\b|_id\b|reader/.test(`${v.instancePath} ${err.validationContext ?? ''}`));
      return send(reply, idPattern ? 'INVALID_ID' : 'INVALID_INPUT', `${err.validationContext ?? 'input'}: ${err.message}`);
    }
    switch (err.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return send(reply, 'BODY_TOO_LARGE', 'request body too large');
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return send(reply, 'MALFORMED_BODY', 'Content-Type must be application/json');
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return send(reply, 'MALFORMED_BODY', 'body is not valid JSON');
    }
    if (err instanceof SyntaxError || err.statusCode === 400) return send(reply, 'MALFORMED_BODY', 'body is not valid JSON');
    if (isStoreOutage(err)) {
      req.log.error({ err }, 'store unavailable');
      return send(reply, 'STORE_UNAVAILABLE', 'a store is unavailable; retry later');
    }
    req.log.error({ err }, 'unhandled error');
    return send(reply, 'INTERNAL', 'internal error');
  });
}
