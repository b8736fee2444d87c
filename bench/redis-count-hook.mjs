/**
 * Preloaded into `freshet serve` by bench/request-cost.ts (`node --import ./bench/redis-count-hook.mjs …`):
 * counts what the process sends to Redis through ioredis — every command by name (EVALSHA by its script:
 * `evalsha feedPop`); calls: a command sent on its own is one, a pipeline (or MULTI … EXEC) one however many
 * commands it holds; and round trips (below). Commands a Lua script runs inside Redis are not sent, hence not
 * counted. Any request to 127.0.0.1:$FRESHET_BENCH_REDIS_COUNTS_PORT is answered
 * `{calls, roundTrips, commands: {name: n}}` as JSON.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Redis } = require('ioredis');
const Pipeline = require('ioredis/built/Pipeline.js').default;

const counts = { calls: 0, roundTrips: 0, commands: {} };
// Round trips: a call that starts while none is in flight opens one; calls sent together (Promise.all)
// share it. With one request at a time, these are the round trips a request waits for in turn.
// Commands that block by design (a queue worker's BZPOPMIN) are never in flight for this count.
const BLOCKING = new Set(['bzpopmin', 'bzpopmax', 'blpop', 'brpop', 'brpoplpush', 'blmove', 'xread', 'xreadgroup']);
let inFlight = 0;
function track(promise) {
  if (inFlight === 0) counts.roundTrips++;
  inFlight++;
  const done = () => {
    inFlight--;
  };
  promise.then(done, done);
  return promise;
}
// a script's SHA-1 → its command name (ioredis defineCommand), so EVALSHA is counted by script
const scripts = new Map();
const defineCommand = Redis.prototype.defineCommand;
Redis.prototype.defineCommand = function (name, definition) {
  scripts.set(createHash('sha1').update(definition.lua).digest('hex'), name);
  return defineCommand.call(this, name, definition);
};
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (command, stream, ...rest) {
  const script =
    command.name === 'evalsha' || command.name === 'eval' ? scripts.get(String(command.args[0])) : undefined;
  const name = script ? `${command.name} ${script}` : command.name;
  counts.commands[name] = (counts.commands[name] ?? 0) + 1;
  // a pipeline's commands arrive with the stream it writes them to: exec counted the round trip
  if (stream !== undefined) return sendCommand.call(this, command, stream, ...rest);
  counts.calls++;
  const reply = sendCommand.call(this, command, stream, ...rest);
  return BLOCKING.has(command.name) ? reply : track(reply);
};
const exec = Pipeline.prototype.exec;
Pipeline.prototype.exec = function (...args) {
  counts.calls++;
  return track(exec.apply(this, args));
};

// the counts on a loopback port of their own (FRESHET_BENCH_REDIS_COUNTS_PORT), apart from the server's
const port = Number(process.env.FRESHET_BENCH_REDIS_COUNTS_PORT);
if (port > 0) {
  const server = createServer((_req, res) => res.end(JSON.stringify(counts)));
  server.listen(port, '127.0.0.1');
  server.unref();
}
