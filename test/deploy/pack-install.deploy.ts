/**
 * The packed package where an application puts it: `npm pack` (with its `prepare`, as `npm publish` runs
 * it), then `npm install` of the tarball into a scratch application in a temp folder outside the
 * repository — offline, from the npm cache `npm install` in the checkout filled — and in that application:
 *
 * - `node -e "import('freshet-engine')"` loads (usearch's prebuilt binary, no install script run);
 * - a program importing `openFreshet` and `buildApp` from `freshet-engine` opens the embedded default,
 *   publishes, listens, and serves a for-you page to `FreshetClient` imported from `freshet-engine/client`;
 * - `npx freshet serve` starts, answers `/healthz` and `/readyz`, takes a publish through the client and
 *   serves the item on a reader's page (token from `npx freshet token`), and stops on SIGTERM with exit 0.
 *
 * Offline: a scratch application has no lock file, and npm resolves its dependencies' ranges from the
 * registry's metadata, which a checkout's `npm install` (from its lock file) never fetched. The
 * application gets a lock file made from the checkout's (its production entries, the tarball's own entry
 * with its integrity), so `npm install --offline` finds every tarball in the cache: the same versions the
 * suite tests. ~20–40 s on 2 cores; `.ci/run` runs it after `npm test` (`npm run test:deploy`), not the
 * suite. Every step is bounded; the temp folder and every process started are removed at the end.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onJsonLines, ROOT } from '../support/cli.js';
import { freePort } from '../support/redis-server.js';
import { stopGroup, untilOk } from './processes.js';

const run = promisify(execFile);
const NPM_ENV = {
  ...process.env,
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
};
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
const tmp = mkdtempSync(join(tmpdir(), 'freshet-pack-install-'));
const app = join(tmp, 'app');
let tarball = '';
const started: ChildProcess[] = [];

interface LockEntry {
  dev?: boolean;
  link?: boolean;
  [k: string]: unknown;
}

/** The scratch application's lock file: the tarball's entry and the checkout's production entries. */
function scratchLock(tgz: string): object {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const root = lock.packages['']!;
  const integrity = `sha512-${createHash('sha512').update(readFileSync(tgz)).digest('base64')}`;
  const spec = `file:../${tgz.split('/').pop()}`;
  const packages: Record<string, unknown> = {
    '': { name: 'scratch-app', version: '1.0.0', dependencies: { [pkg.name]: spec } },
    [`node_modules/${pkg.name}`]: {
      version: pkg.version,
      resolved: spec,
      integrity,
      license: root.license,
      dependencies: root.dependencies,
      bin: root.bin,
      engines: root.engines,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages))
    if (path !== '' && !entry.dev && !entry.link) packages[path] = entry;
  return { name: 'scratch-app', version: '1.0.0', lockfileVersion: 3, requires: true, packages };
}

/** Runs `node <args>` in the application; resolves with stdout. */
async function node(args: string[], env: NodeJS.ProcessEnv = process.env, timeout = 60_000): Promise<string> {
  const { stdout } = await run(process.execPath, args, { cwd: app, env, timeout });
  return stdout;
}

beforeAll(async () => {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', tmp], {
    cwd: ROOT,
    env: NPM_ENV,
    timeout: 280_000,
  });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string }[];
  tarball = join(tmp, packed!.filename);
  mkdirSync(app);
  const deps = { [pkg.name]: `file:../${packed!.filename}` };
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'scratch-app', version: '1.0.0', private: true, type: 'module', dependencies: deps }),
  );
  writeFileSync(join(app, 'package-lock.json'), JSON.stringify(scratchLock(tarball), null, 2));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund'], { cwd: app, env: NPM_ENV, timeout: 180_000 });
}, 480_000);

afterAll(async () => {
  await Promise.all(started.map((c) => stopGroup(c, 'SIGKILL')));
  rmSync(tmp, { recursive: true, force: true });
});

describe(`the packed ${pkg.name}, installed offline into a scratch application`, () => {
  it('installs its production dependencies only, and its command', () => {
    const installed = JSON.parse(readFileSync(join(app, 'node_modules', pkg.name, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(installed.version).toBe(pkg.version);
    expect(() => readFileSync(join(app, 'node_modules/.bin/freshet'))).not.toThrow();
    for (const dev of ['vitest', 'typescript', '@biomejs/biome', 'playwright-core'])
      expect(() => readFileSync(join(app, 'node_modules', dev, 'package.json')), dev).toThrow();
  });

  it('node -e imports it (usearch from its prebuilt binary)', async () => {
    const probe = `import('${pkg.name}').then((m) => console.log(typeof m.openFreshet, typeof m.buildApp))`;
    expect((await node(['-e', probe], process.env, 20_000)).trim()).toBe('function function');
  });

  it('the library opens the embedded default and serves a page to the client subpath', async () => {
    writeFileSync(
      join(app, 'library.mjs'),
      `import { openFreshet, buildApp, mintReaderToken } from '${pkg.name}';
import { FreshetClient } from '${pkg.name}/client';
const freshet = await openFreshet({ dataDir: './data-library' });
const server = await buildApp(freshet, { logger: false });
try {
  const now = Date.now();
  await freshet.useCases.publishItems(
    [{ id: 'p1', authorId: 'ada', title: 'Rust in production', text: '', url: null, tags: ['rust'], publishedAt: now - 60_000, popularity: 1 }],
    now,
  );
  const url = await server.listen({ host: '127.0.0.1', port: 0 });
  const token = await mintReaderToken(freshet.config.secret, 'reader_1', 600);
  const client = new FreshetClient({ baseUrl: url, token });
  const page = await client.forYou.refresh({ limit: 5 });
  console.log(JSON.stringify({ ids: page.items.map((i) => i.id) }));
} finally {
  await server.close();
  await freshet.close();
}
`,
    );
    const out = JSON.parse(await node(['library.mjs'])) as { ids: string[] };
    expect(out.ids).toEqual(['p1']);
  }, 90_000);

  it('npx freshet serve answers /healthz and /readyz, serves a published item, and stops on SIGTERM', async () => {
    const port = await freePort();
    const env = {
      ...NPM_ENV,
      npm_config_offline: 'true',
      PORT: String(port),
      HOST: '127.0.0.1',
      FRESHET_DATA_DIR: join(app, 'data-serve'),
      LOG_FORMAT: 'json',
    };
    const serve = spawn('npx', ['freshet', 'serve'], {
      cwd: app,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(serve);
    let pid = 0; // the server's own process (npx runs it as a child): its log lines name it
    let output = '';
    serve.stderr!.on('data', (b: Buffer) => (output += b.toString()));
    onJsonLines<{ pid?: number }>(serve.stdout!, (entry) => (pid ||= entry.pid ?? 0));
    const url = `http://127.0.0.1:${port}`;
    const health = await untilOk(`${url}/healthz`, 90_000);
    expect(health).toEqual({ code: 0, msg: 'success', data: { status: 'ok' } });
    expect(await untilOk(`${url}/readyz`, 10_000)).toMatchObject({ code: 0 });

    const { serviceKey } = JSON.parse(readFileSync(join(app, 'data-serve/secrets.json'), 'utf8')) as {
      serviceKey: string;
    };
    const token = (
      await run('npx', ['freshet', 'token', 'reader_1'], { cwd: app, env, timeout: 30_000 })
    ).stdout.trim();
    const reader = token.split('\n').pop()!; // the last line (the first start may log the generated secrets)
    const client = `import { FreshetClient } from '${pkg.name}/client';
const baseUrl = ${JSON.stringify(url)};
const svc = new FreshetClient({ baseUrl, serviceKey: ${JSON.stringify(serviceKey)} });
const published_at = Math.floor(Date.now() / 1000);
await svc.items.publish([{ id: 's1', author_id: 'bob', title: 'Postgres tuning', published_at }]);
const page = await new FreshetClient({ baseUrl, token: ${JSON.stringify(reader)} }).forYou.refresh({ limit: 5 });
console.log(JSON.stringify({ ready: (await svc.ready()).status, ids: page.items.map((i) => i.id) }));
`;
    writeFileSync(join(app, 'client.mjs'), client);
    const out = JSON.parse(await node(['client.mjs'], process.env, 30_000)) as { ready: string; ids: string[] };
    expect(out).toEqual({ ready: 'ready', ids: ['s1'] });

    // SIGTERM to the server (a signal to npx would end npm and orphan it): it closes, exits 0, and so does npx
    expect(pid).toBeGreaterThan(0);
    const exit = new Promise<number | null>((resolve) => serve.once('exit', (code) => resolve(code)));
    process.kill(pid, 'SIGTERM');
    expect(await exit, output).toBe(0);
  }, 180_000);
});
