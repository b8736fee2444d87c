/**
 * Assertions on `freshet-engine/client` calls in tests: what a call that must fail failed with, so an error
 * case reads as one line (`expect(await failure(c.items.delete('x'))).toMatchObject({status: 404, code: 40401})`).
 */
import { expect } from 'vitest';
import { FreshetClientError } from '../../src/client/index.js';

/** The parts of a failed call tests compare: HTTP status, the envelope's code, message and data, the failure kind. */
export type Failure = Pick<FreshetClientError, 'kind' | 'status' | 'code' | 'msg' | 'data'>;

/**
 * Awaits a client call that must fail and returns what it failed with.
 * Fails the test when the call succeeds or throws anything but a `FreshetClientError`.
 */
export async function failure(call: Promise<unknown>): Promise<Failure> {
  const err = await call.then(
    (data: unknown) => new Error(`expected a failure, got ${JSON.stringify(data)?.slice(0, 200)}`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FreshetClientError);
  const e = err as FreshetClientError;
  return { kind: e.kind, status: e.status, code: e.code, msg: e.msg, data: e.data };
}
