#!/usr/bin/env node
/**
 * Runs the image built by scripts/container-build.sh without a container runtime, where `podman run`
 * cannot start one (these machines: `crun: setrlimit RLIMIT_NPROC: Operation not permitted`): the image's
 * root file system (`podman create` + `podman mount`, nothing started) entered with chroot as the image's
 * user, with the image's environment, entrypoint and command — so what is checked is the image's own
 * files, user, volume folder and configuration; not checked: the runtime's isolation, cgroups, networking.
 *
 * 1. `freshet --version` prints package.json's version;
 * 2. the entrypoint + command (`serve`) starts on the embedded default in the image's data folder (/data,
 *    owned by the user), listening on a free loopback port (HOST and PORT overridden: the chroot shares the
 *    host's network);
 * 3. the image's HEALTHCHECK command, run in the chroot, exits 0 (it probes /readyz), and /healthz answers;
 * 4. SIGTERM stops it with exit 0.
 * Everything is undone at the end (mounts, the container). Bounded: 120 s in all.
 * Usage: `node scripts/container-check.mjs [image]` (default localhost/freshet:<package.json version>).
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
const image = process.argv[2] ?? `localhost/freshet:${version}`;
const deadline = Date.now() + 120_000;
const sh = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8' }).trim();
const log = (line) => console.log(`container-check: ${line}`);

const inspected = JSON.parse(sh('podman', ['image', 'inspect', image]))[0];
const config = inspected.Config;
const port = await new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});
const env = Object.fromEntries(config.Env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
Object.assign(env, { HOST: '127.0.0.1', PORT: String(port) });
const user = config.User || '0:0';
log(
  `${image}: user ${user}, volumes ${Object.keys(config.Volumes ?? {})}, entrypoint ${config.Entrypoint} ${config.Cmd}`,
);

const container = sh('podman', ['create', image]);
const root = sh('podman', ['mount', container]);
const mounts = [];
let server;
const cleanup = () => {
  if (server && server.exitCode === null) server.kill('SIGKILL');
  for (const m of mounts.reverse()) {
    try {
      execFileSync('umount', [m]);
    } catch {}
  }
  try {
    execFileSync('podman', ['umount', container]);
    execFileSync('podman', ['rm', '--force', container], { stdio: 'ignore' });
  } catch {}
};
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(1));

/** `cmd…` inside the image's root as its user, with its environment (and nothing of this process's). */
const inImage = (argv, opts = {}) =>
  spawn('/usr/sbin/chroot', [`--userspec=${user}`, root, ...argv], { env, cwd: '/', ...opts });
const exitOf = (child) => new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));

try {
  for (const dir of ['/proc', '/dev']) {
    execFileSync('mount', ['--bind', dir, `${root}${dir}`]);
    mounts.push(`${root}${dir}`);
  }
  const v = inImage([...config.Entrypoint, '--version'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let printed = '';
  v.stdout.on('data', (b) => (printed += b));
  if ((await exitOf(v)) !== 0 || printed.trim() !== version) throw new Error(`--version printed "${printed.trim()}"`);
  log(`freshet --version: ${printed.trim()}`);

  server = inImage([...config.Entrypoint, ...config.Cmd], { stdio: ['ignore', 'ignore', 'inherit'] });
  const health = (inspected.Healthcheck ?? config.Healthcheck)?.Test; // podman lists it beside Config
  if (health?.[0] !== 'CMD') throw new Error(`no exec-form HEALTHCHECK in the image: ${JSON.stringify(health)}`);
  const started = Date.now();
  for (;;) {
    if (server.exitCode !== null) throw new Error(`the server exited with ${server.exitCode}`);
    if ((await exitOf(inImage(health.slice(1), { stdio: 'ignore' }))) === 0) break;
    if (Date.now() > deadline) throw new Error('the HEALTHCHECK never passed');
    await new Promise((r) => setTimeout(r, 250));
  }
  log(`HEALTHCHECK (${health.slice(1, 3).join(' ')} … /readyz) passed ${Date.now() - started} ms after the start`);
  const res = await fetch(`http://127.0.0.1:${port}/healthz`);
  log(`GET /healthz: ${res.status} ${await res.text()}`);
  const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
  log(`GET /readyz: ${ready.status} ${await ready.text()}`);
  const data = sh('ls', ['-ln', `${root}/data`])
    .split('\n')
    .slice(1);
  log(
    `/data after the start (uid gid): ${data.map((l) => `${l.split(/\s+/).slice(2, 4).join(':')} ${l.split(/\s+/).pop()}`).join(', ')}`,
  );
  server.kill('SIGTERM');
  const code = await exitOf(server);
  if (code !== 0) throw new Error(`SIGTERM: exit ${code}`);
  log('SIGTERM: exit 0');
  log('passed');
} catch (err) {
  console.error(`container-check: FAILED: ${err.message}`);
  process.exitCode = 1;
}
process.exit(); // the cleanup runs on exit (a server still running is killed)
