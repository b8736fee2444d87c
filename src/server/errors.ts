/**
 * Maps every failure to the error envelope `{code, msg, data: null}` with its HTTP status:
 * FreshetErrors keep their code (store outages arrive here already classified by their adapter as
 * STORE_UNAVAILABLE: src/kernel/redis/errors.ts, src/kernel/sql/sql.ts — this layer never reads a
 * store's message); schema failures become INVALID_INPUT (or INVALID_ID for an id pattern) with a
 * message naming the field (src/server/validation.ts); body-parser failures MALFORMED_BODY /
 * BODY_TOO_LARGE; other client errors of Fastify and its plugins (a bad URL, a path parameter over 100
 * characters, a refused static path, oversized headers on the socket) their own codes (every
 * response is an envelope, no 5xx from input); anything else INTERNAL (logged with its stack, never sent
 * to the client).
 */
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { ErrorCodes, FreshetError, type ErrorName } from '../kernel/errors.js';
import { describeValidation, type SchemaError } from './validation.js';
import { errorBody } from '../kernel/http/schemas.js';

/** Sends the error envelope of `name` with its status; `data` only where the route documents it (`/readyz`). */
export function sendError(reply: FastifyReply, name: ErrorName, msg: string, data: unknown = null) {
  return reply.status(ErrorCodes[name].status).send(errorBody(name, msg, data));
}

/** Installs the error and not-found handlers on `app`. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((req: FastifyRequest, reply: FastifyReply) =>
    sendError(reply, 'NOT_FOUND', `no route ${req.method} ${req.url.split('?')[0]}; the routes are listed at /docs`),
  );

  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    try {
      return answerError(err, req, reply);
    } catch (inner) {
      // the answer itself failed (a message that could not be built): still an envelope, and logged
      req.log.error({ err: inner, cause: err }, 'the error handler failed');
      return sendError(reply, 'INTERNAL', 'internal error');
    }
  });
}

/** Answers one failure with its envelope (see the module doc). */
function answerError(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  if (err instanceof FreshetError) {
    // an outage is logged with what the store said (details, cause); the client reads only msg
    if (err.status >= 500) req.log.error({ err, details: err.details }, err.message);
    return sendError(reply, err.name_, err.message);
  }
  if (err.validation) {
    const { name, msg } = describeValidation(err.validation as unknown as SchemaError[], err.validationContext);
    return sendError(reply, name, msg);
  }
  const client = clientMistake(err, req);
  if (client) return sendError(reply, client[0], client[1]);
  req.log.error({ err }, 'unhandled error');
  return sendError(reply, 'INTERNAL', 'internal error');
}

/**
 * The code and message of a client mistake reported by Fastify, its body parser or a plugin
 * (@fastify/static under `/docs`), or null when `err` is not one.
 */
function clientMistake(err: FastifyError, req: FastifyRequest): [ErrorName, string] | null {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return [
        'BODY_TOO_LARGE',
        `request body over the limit of ${req.routeOptions.bodyLimit ?? '?'} bytes (FRESHET_BODY_LIMIT_BYTES); send fewer items per request`,
      ];
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return [
        'MALFORMED_BODY',
        `Content-Type ${JSON.stringify(req.headers['content-type'] ?? '')} is not accepted; send the body as application/json`,
      ];
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return [
        'MALFORMED_BODY',
        'body is empty but Content-Type is application/json; send a JSON value, or no Content-Type when there is no body',
      ];
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return ['MALFORMED_BODY', 'body length does not match the Content-Length header'];
  }
  if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY')
    return ['MALFORMED_BODY', 'body is not valid JSON'];
  const status = err.statusCode ?? (err as { status?: number }).status;
  if (typeof status !== 'number' || status < 400 || status >= 500) return null;
  // 4xx from a plugin, e.g. @fastify/static refusing `/docs/static/../..` (403): answered, never a 500
  if (status === 403 || status === 404 || status === 405)
    return ['NOT_FOUND', `no such resource ${req.method} ${req.url.split('?')[0]}`];
  if (status === 413) return ['BODY_TOO_LARGE', 'request body too large'];
  if (status === 414) return ['URI_TOO_LONG', 'request URL too long'];
  return ['MALFORMED_REQUEST', `the request was refused: ${err.message}`];
}

/**
 * Fastify's `frameworkErrors`: failures before a route is chosen — a URL that is not valid
 * percent-encoding (`%zz`) and a path parameter over `maxParamLength` (100) — as envelopes.
 */
export const frameworkErrors: NonNullable<FastifyServerOptions['frameworkErrors']> = (err, req, reply) => {
  const path = req.url.split('?')[0] ?? '';
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return sendError(
      reply,
      'URI_TOO_LONG',
      `a path segment of ${path.slice(0, 60)}… is over 100 characters; ids are 1 to 64 characters`,
    );
  }
  if (err.code === 'FST_ERR_BAD_URL')
    return sendError(
      reply,
      'MALFORMED_REQUEST',
      `the URL ${JSON.stringify(path.slice(0, 80))} is not valid percent-encoding (write % as %25)`,
    );
  return sendError(reply, 'MALFORMED_REQUEST', `the request was refused: ${err.message}`);
};

/**
 * Fastify's `clientErrorHandler`: what Node's HTTP parser refuses before Fastify sees a request —
 * headers over the size limit (431), a request that timed out (408), bytes that are not HTTP (400) —
 * written to the socket as an envelope (the same shape as Fastify's default, with our codes).
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [name, msg]: [ErrorName, string] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [
          'HEADERS_TOO_LARGE',
          'request headers are over the size limit (16 KiB by default); send fewer or shorter headers',
        ]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['REQUEST_TIMEOUT', 'the request was not received in time']
        : ['MALFORMED_REQUEST', 'the request is not valid HTTP'];
  const { status } = ErrorCodes[name];
  const body = JSON.stringify(errorBody(name, msg));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Bad Request'}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};
