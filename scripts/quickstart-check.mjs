#!/usr/bin/env node
/**
 * Replays the README's "Quick start" on a fresh clone and checks each promised output (issue 25):
 *
 * 1. `git clone` of this checkout's HEAD into a temp folder (committed work only: uncommitted changes are
 *    not in the clone, and the check says so), with `../shared/data` beside it linked to the real one;
 * 2. the section's shell blocks, read from the clone's README (scripts/quickstart-readme.mjs), run as
 *    written in the clone: `npm install` (it builds dist/), `npm start` in the background on a free port
 *    (the README's 8080 is replaced by it in the commands; the embedded default, in the clone's fresh
 *    `.freshet/`), `npm test` skipped (the whole suite), then the rest in one bash session so their
 *    variables carry over — the service key, `freshet import hn`, a token, the for-you `curl`;
 * 3. each step's promise checked (see quickstart-readme.mjs), the server stopped with SIGTERM;
 * 4. the timing of each step printed; the temp folder removed (kept with `--keep`).
 *
 * Every step is bounded (its process group is killed past its limit), and so is the whole run. The
 * inherited FRESHET_*, PORT, HOST and npm_* variables are dropped, so the replay sees what a newcomer's
 * shell would. Exit 0 when every step kept its promise, 1 otherwise (the failing step's output is shown).
 *
 * Usage: `npm run quickstart-check` or `node scripts/quickstart-check.mjs [--keep]`. Needs git, bash, curl
 * and the npm registry (or npm's cache) for `npm install`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assignedVariable, quickStartCommands, REQUIRED_KINDS, withPort } from './quickstart-readme.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Bounds, in seconds: each step of its kind, and the whole run. */
const LIMIT_S = { clone: 120, install: 600, server: 90, step: 300, stop: 20, total: 1500 };
/** Posts in the HN sample the quick start imports (README: "20,100 posts"). */
const HN_POSTS = 20_100;

const keep = process.argv.includes('--keep');
const started = performance.now();
/** @type {Set<import('node:child_process').ChildProcess>} */
const children = new Set();
/** @type {{ status: 'ok'|'FAIL'|'skip', seconds: number|null, step: string, detail: string }[]} */
const rows = [];
let tmp = '';

function say(line) {
  process.stdout.write(`${line}\n`);
}

/** Records a step's outcome and prints it at once. */
function record(status, seconds, step, detail) {
  rows.push({ status, seconds, step, detail });
  const secs = seconds === null ? '' : `${seconds.toFixed(1)} s`;
  say(`  ${status.padEnd(4)} ${secs.padStart(8)}  ${shorten(step, 70).padEnd(70)}  ${detail}`);
}

function shorten(text, n) {
  const one = text.replace(/\s+/g, ' ');
  return one.length <= n ? one : `${one.slice(0, n - 1)}…`;
}

/** A failed promise of the README: stops the run. */
class CheckFailed extends Error {}

/** The environment of every step: the caller's, without what would steer Freshet or npm. */
function cleanEnv(port) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(FRESHET_|npm_)/i.test(k) || ['PORT', 'HOST', 'INIT_CWD', 'LOG_LEVEL', 'LOG_FORMAT'].includes(k)) continue;
    env[k] = v;
  }
  return { ...env, PORT: String(port), npm_config_update_notifier: 'false', npm_config_fund: 'false' };
}

/** A TCP port nothing listens on now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Starts `bash -c cmd` in its own process group, output (stdout + stderr) collected and passed to `onData`. */
function startShell(cmd, cwd, env, onData = () => {}) {
  const child = spawn('bash', ['--noprofile', '--norc', '-c', cmd], {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const out = { text: '' };
  const take = (b) => {
    out.text += b.toString();
    onData(out.text);
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, out, exited };
}

/** Whether any process of the group led by `pid` is alive. */
function groupAlive(pid) {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * Stops a child's whole process group (`npm start` → sh → node: the server outlives npm by its graceful
 * shutdown): SIGTERM, SIGKILL after `graceMs`; resolves with the child's exit once no process of the group
 * is left.
 */
async function stopGroup(child, exited, graceMs) {
  const kill = (sig) => {
    try {
      process.kill(-child.pid, sig);
    } catch {}
  };
  kill('SIGTERM');
  const t0 = performance.now();
  let killed = false;
  while (groupAlive(child.pid)) {
    if (!killed && performance.now() - t0 > graceMs) {
      kill('SIGKILL');
      killed = true;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { ...(await exited), killed };
}

/** Runs `bash -c cmd` to its end within `limitS`. */
async function runShell(cmd, cwd, env, limitS) {
  const t0 = performance.now();
  const { child, out, exited } = startShell(cmd, cwd, env);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void stopGroup(child, exited, 2000);
  }, limitS * 1000);
  const { code } = await exited;
  clearTimeout(timer);
  return { code, timedOut, output: out.text, seconds: (performance.now() - t0) / 1000 };
}

function tail(text, lines = 15) {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

function git(args, cwd = ROOT) {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new CheckFailed(`git ${args.join(' ')} failed: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

/** 1. The clone, and the data folder beside it. */
function cloneCheckout() {
  const sha = git(['rev-parse', 'HEAD']);
  const dirty = git(['status', '--porcelain', '--untracked-files=no']);
  if (dirty) say(`note: ${ROOT} has uncommitted changes; the clone holds only the committed ${sha.slice(0, 10)}`);
  const data = join(ROOT, '..', 'shared', 'data');
  if (!existsSync(data))
    throw new CheckFailed(`${data} does not exist — the quick start imports ../shared/data/hn/…, beside the checkout`);
  mkdirSync(join(tmp, 'shared'));
  symlinkSync(realpathSync(data), join(tmp, 'shared', 'data'));
  const t0 = performance.now();
  const clone = join(tmp, 'freshet');
  git(['clone', '--quiet', '--no-checkout', ROOT, clone], tmp);
  git(['checkout', '--quiet', sha], clone);
  record('ok', (performance.now() - t0) / 1000, 'git clone', `${sha.slice(0, 10)} into ${clone}`);
  return clone;
}

/** 2a. A command before the server (`npm install`, …), checked by its kind. */
async function runAlone(c, clone, env) {
  const r = await runShell(c.text, clone, env, c.kind === 'install' ? LIMIT_S.install : LIMIT_S.step);
  if (r.timedOut || r.code !== 0) {
    record('FAIL', r.seconds, c.text, r.timedOut ? `no end within ${LIMIT_S.install} s` : `exit ${r.code}`);
    throw new CheckFailed(tail(r.output));
  }
  if (c.kind === 'install' && !existsSync(join(clone, 'dist/cli/main.js'))) {
    record('FAIL', r.seconds, c.text, 'dist/ was not built');
    throw new CheckFailed(tail(r.output));
  }
  record('ok', r.seconds, c.text, c.kind === 'install' ? 'exit 0, dist/ built' : 'exit 0');
}

/** 2b. The server in the background, ready when `/healthz` answers 200; checks the generated key. */
async function startServer(c, clone, env, port) {
  const t0 = performance.now();
  const server = startShell(c.text, clone, env);
  const deadline = t0 + LIMIT_S.server * 1000;
  let ready = false;
  while (!ready && performance.now() < deadline && server.child.exitCode === null) {
    ready = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) })
      .then((res) => res.ok)
      .catch(() => false);
    if (!ready) await new Promise((r) => setTimeout(r, 250));
  }
  const seconds = (performance.now() - t0) / 1000;
  if (!ready) {
    record(
      'FAIL',
      seconds,
      c.text,
      server.child.exitCode === null ? `no /healthz within ${LIMIT_S.server} s` : 'exited',
    );
    throw new CheckFailed(tail(server.out.text));
  }
  const secrets = join(clone, '.freshet', 'secrets.json');
  if (!existsSync(secrets) || !server.out.text.includes(secrets)) {
    record('FAIL', seconds, c.text, `${secrets} was not written or not logged`);
    throw new CheckFailed(tail(server.out.text));
  }
  record('ok', seconds, c.text, `/healthz 200 on port ${port}; .freshet/secrets.json generated and logged`);
  return server;
}

/** The bash script of the session: each command between markers, its variable printed when it assigns one. */
function sessionScript(cmds, port) {
  const lines = ['exec 2>&1', 'set -o pipefail'];
  cmds.forEach((c, i) => {
    lines.push(`printf '\\n@@qs-begin ${i}\\n'`, withPort(c.text, port), '__rc=$?');
    const v = assignedVariable(c.text);
    if (v) lines.push(`printf '\\n@@qs-var ${i} %s\\n' "\${${v}}"`);
    lines.push(`printf '\\n@@qs-end ${i} %s\\n' "$__rc"`, '[ "$__rc" -eq 0 ] || exit "$__rc"');
  });
  return lines.join('\n');
}

/** Checks one session command's promise; returns the detail, or throws. */
function checkStep(c, { output, value }, clone) {
  if (c.kind === 'import') {
    const m = /imported (\d+) items from hn \((\d+) inserted, (\d+) updated, (\d+) skipped\)/.exec(output);
    if (!m || Number(m[1]) !== HN_POSTS || m[4] !== '0')
      throw new CheckFailed(`expected "imported ${HN_POSTS} items from hn (…, 0 skipped)"`);
    return m[0];
  }
  if (c.kind === 'token') {
    if (!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(value ?? ''))
      throw new CheckFailed('the variable does not hold a signed token');
    return 'a signed reader token';
  }
  if (c.kind === 'key') {
    const key = JSON.parse(readFileSync(join(clone, '.freshet', 'secrets.json'), 'utf8')).serviceKey;
    if (!value || value !== key) throw new CheckFailed("FRESHET_SERVICE_KEY is not the server's key");
    return "the server's service key";
  }
  if (c.kind === 'for-you') {
    const last = output.trim().split('\n').at(-1) ?? '';
    let body;
    try {
      body = JSON.parse(last);
    } catch {
      throw new CheckFailed(`the answer is not JSON: ${shorten(last, 200)}`);
    }
    const items = body?.data?.items;
    if (body?.code !== 0 || !Array.isArray(items) || items.length === 0)
      throw new CheckFailed(`expected a non-empty feed: ${shorten(last, 300)}`);
    return `code 0, ${items.length} items (first ${items[0].id}), has_more ${body.data.has_more}`;
  }
  return 'exit 0';
}

/** 2c. The commands after the server, in one bash session, each timed and checked. */
async function runSession(cmds, clone, env, port) {
  const marks = []; // [{ i, at, kind: begin|end|var, rest }]
  let seen = 0;
  let stepStartedAt = performance.now();
  const session = startShell(sessionScript(cmds, port), clone, env, (text) => {
    for (const m of text.slice(seen).matchAll(/@@qs-(begin|end|var) (\d+)(?: ([^\n]*))?\n/g)) {
      marks.push({ i: Number(m[2]), kind: m[1], rest: m[3] ?? '', at: performance.now(), offset: seen + m.index });
      if (m[1] === 'begin') stepStartedAt = performance.now();
    }
    const lastNl = text.lastIndexOf('\n');
    if (lastNl + 1 > seen) seen = lastNl + 1;
  });
  const watchdog = setInterval(() => {
    if (performance.now() - stepStartedAt > LIMIT_S.step * 1000) void stopGroup(session.child, session.exited, 2000);
  }, 500);
  await session.exited;
  clearInterval(watchdog);
  const text = session.out.text;
  cmds.forEach((c, i) => {
    const begin = marks.find((m) => m.i === i && m.kind === 'begin');
    const end = marks.find((m) => m.i === i && m.kind === 'end');
    if (!begin) throw new CheckFailed(`the session stopped before \`${c.text}\``);
    const seconds = ((end?.at ?? performance.now()) - begin.at) / 1000;
    const output = text.slice(text.indexOf('\n', begin.offset) + 1, end?.offset ?? text.length).trim();
    if (end?.rest !== '0') {
      record('FAIL', seconds, c.text, end ? `exit ${end.rest}` : `no end within ${LIMIT_S.step} s`);
      throw new CheckFailed(tail(output));
    }
    const value = marks.find((m) => m.i === i && m.kind === 'var')?.rest;
    try {
      record('ok', seconds, c.text, checkStep(c, { output: output.replace(/\n?@@qs-var[^\n]*/, ''), value }, clone));
    } catch (err) {
      record('FAIL', seconds, c.text, err.message);
      throw new CheckFailed(tail(output));
    }
  });
}

async function main() {
  tmp = mkdtempSync(join(tmpdir(), 'freshet-quickstart-'));
  say(`quickstart-check: ${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, Node ${process.version}, in ${tmp}`);
  const total = setTimeout(() => {
    say(`quickstart-check: FAILED — the whole run took over ${LIMIT_S.total} s`);
    cleanup();
    process.exit(1);
  }, LIMIT_S.total * 1000);
  let server = null;
  try {
    const clone = cloneCheckout();
    const cmds = quickStartCommands(readFileSync(join(clone, 'README.md'), 'utf8'));
    const missing = REQUIRED_KINDS.filter((k) => !cmds.some((c) => c.kind === k));
    if (missing.length > 0)
      throw new CheckFailed(
        `the README's quick start has no ${missing.join(', ')} step — update the README or scripts/quickstart-readme.mjs`,
      );
    const port = await freePort();
    const env = cleanEnv(port);
    const at = cmds.findIndex((c) => c.kind === 'server');
    for (const c of cmds.slice(0, at)) {
      if (c.kind === 'skip') record('skip', null, c.text, 'the whole test suite: `npm test` / .ci/run run it');
      else await runAlone(c, clone, env);
    }
    server = await startServer(cmds[at], clone, env, port);
    const rest = cmds.slice(at + 1);
    for (const c of rest.filter((r) => r.kind === 'skip'))
      record('skip', null, c.text, 'the whole test suite: `npm test` / .ci/run run it');
    await runSession(
      rest.filter((c) => c.kind !== 'skip'),
      clone,
      env,
      port,
    );
  } catch (err) {
    if (!(err instanceof CheckFailed)) throw err;
    say(`\nquickstart-check: FAILED\n${err.message}`);
    process.exitCode = 1;
  } finally {
    if (server) {
      const t0 = performance.now();
      const { killed } = await stopGroup(server.child, server.exited, LIMIT_S.stop * 1000);
      const seconds = (performance.now() - t0) / 1000;
      if (killed) {
        record('FAIL', seconds, 'stop the server (SIGTERM)', `still running after ${LIMIT_S.stop} s: killed`);
        process.exitCode = 1;
      } else record('ok', seconds, 'stop the server (SIGTERM)', 'every process of `npm start` exited');
    }
    clearTimeout(total);
    cleanup();
  }
  const secs = (performance.now() - started) / 1000;
  say(
    `quickstart-check: ${process.exitCode ? 'FAILED' : 'passed'} in ${secs.toFixed(0)} s${keep ? ` (kept ${tmp})` : ''}`,
  );
}

function cleanup() {
  for (const child of children) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
  }
  if (tmp && !keep) rmSync(tmp, { recursive: true, force: true, maxRetries: 5 });
}

for (const sig of ['SIGINT', 'SIGTERM'])
  process.once(sig, () => {
    cleanup();
    process.exit(130);
  });

await main();
