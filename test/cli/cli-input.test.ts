/**
 * What the CLI accepts and says (issues 14.3, 14.6, 10.9, 14.10): argument ranges, the log format,
 * progress without a terminal, how a server is found, that a command which only talks to a server
 * leaves no secrets behind, and input files of the wrong kind.
 */
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { InvalidArgumentError } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/compose/config.js';
import { limitArg, MAX_TOKEN_TTL_S, ttlArg } from '../../src/cli/args.js';
import { cliLogger, logFormat } from '../../src/cli/log.js';
import { Progress } from '../../src/cli/progress.js';
import { findServer } from '../../src/cli/server.js';
import { runSimulate } from '../../src/cli/for-you/simulate.js';
import { runSimulateDiscover } from '../../src/cli/discover/simulate.js';
import { spawnCli } from '../support/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'freshet-cli-input-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const DATA = '../shared/data';

describe('arguments', () => {
  it('token --ttl: whole seconds up to 365 days; 1e99 and anything longer are refused, not minted', () => {
    expect(ttlArg('3600')).toBe(3600);
    expect(ttlArg(String(MAX_TOKEN_TTL_S))).toBe(365 * 86_400);
    for (const bad of ['1e99', String(MAX_TOKEN_TTL_S + 1), '0', '-5', '1.5', 'Infinity', 'abc']) {
      expect(() => ttlArg(bad), bad).toThrow(InvalidArgumentError);
    }
    expect(() => ttlArg('1e99')).toThrow(/1\.\.31536000 \(365 days\)/);
  });

  it('--limit: 1..100 as the API caps pages', () => {
    expect(limitArg('100')).toBe(100);
    expect(() => limitArg('1000')).toThrow(/must be an integer in 1\.\.100/);
    expect(() => limitArg('0')).toThrow(InvalidArgumentError);
  });
});

describe('log format', () => {
  it('pretty on a terminal, JSON otherwise, LOG_FORMAT wins, anything else is refused', () => {
    expect(logFormat({}, true)).toBe('pretty');
    expect(logFormat({}, false)).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'Pretty' }, false)).toBe('pretty');
    expect(() => logFormat({ LOG_FORMAT: 'xml' }, false)).toThrow(/LOG_FORMAT: must be pretty or json/);
  });

  it('a reporting command logs at warn, unless the level is stricter or LOG_LEVEL asks for more', () => {
    expect(cliLogger({ logLevel: 'info' }, {}).level).toBe('warn');
    expect(cliLogger({ logLevel: 'silent' }, {}).level).toBe('silent');
    expect(cliLogger({ logLevel: 'debug' }, { LOG_LEVEL: 'debug' }).level).toBe('debug');
  });
});

describe('progress without a terminal', () => {
  it('prints a line once per interval, never more often, with the share done and what it counted', () => {
    let now = 0;
    const lines: string[] = [];
    const p = new Progress({
      label: 'import hn',
      total: 1000,
      tty: false,
      timer: false,
      intervalMs: 5000,
      now: () => now,
      write: (l) => lines.push(l),
    });
    p.update(100, '100 items');
    now = 4999;
    p.update(200, '200 items');
    expect(lines).toEqual([]); // nothing within the first interval
    now = 5000;
    p.update(420, '420 items, 0 skipped');
    now = 6000;
    p.tick();
    now = 10_000;
    p.tick(); // the timer's call: still alive, though nothing was updated
    p.stop();
    expect(lines).toEqual([
      'import hn: 42% | 420 items, 0 skipped | 5 s',
      'import hn: 42% | 420 items, 0 skipped | 10 s',
    ]);
  });

  it('shows counts of things, and only the time when the total is unknown', () => {
    const lines: string[] = [];
    const counted = new Progress({
      label: 'simulate',
      total: 50,
      counts: true,
      tty: false,
      timer: false,
      intervalMs: 0,
      now: () => 2000,
      write: (l) => lines.push(l),
    });
    counted.update(10);
    const unknown = new Progress({
      label: 'discover embed',
      total: 0,
      tty: false,
      timer: false,
      intervalMs: 0,
      now: () => 2000,
      write: (l) => lines.push(l),
    });
    unknown.tick();
    expect(lines).toEqual(['simulate: 10/50 (20%) | 0 s', 'discover embed: 0 s']);
  });
});

describe('finding the server', () => {
  it('--url first, then the server.json of a live process, then HOST:PORT', () => {
    const dataDir = mkdtempSync(join(tmp, 'find-'));
    const config = loadConfig({ FRESHET_DATA_DIR: dataDir, HOST: '0.0.0.0', PORT: '9999' });
    expect(findServer(config)).toEqual({ url: 'http://127.0.0.1:9999', foundBy: 'HOST:PORT' });
    writeFileSync(
      join(dataDir, 'server.json'),
      JSON.stringify({ pid: 2 ** 22 + 12345, host: '127.0.0.1', port: 4321 }),
    );
    expect(findServer(config).foundBy).toBe('HOST:PORT'); // a dead server's marker is ignored
    writeFileSync(join(dataDir, 'server.json'), JSON.stringify({ pid: process.pid, host: '127.0.0.1', port: 4321 }));
    expect(findServer(config)).toEqual({
      url: 'http://127.0.0.1:4321',
      foundBy: `${join(dataDir, 'server.json')} (pid ${process.pid})`,
    });
    expect(findServer(config, 'http://example.test:1/')).toEqual({ url: 'http://example.test:1', foundBy: '--url' });
  });

  it('simulate says the key does not match and which variable sets it, before replaying anything', async () => {
    let feedRequests = 0;
    const server = createServer((req, res) => {
      if (req.url === '/healthz') return void res.end('{"code":0,"msg":"success","data":{"status":"ok"}}');
      if (req.url?.startsWith('/v1/feeds')) feedRequests++;
      res.writeHead(401).end('{"code":40101,"msg":"unauthenticated","data":null}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const run = runSimulate({
        url: `http://127.0.0.1:${port}`,
        serviceKey: 'not-the-servers-key-000',
        keySource: 'FRESHET_SERVICE_KEY',
        behaviorsPath: `${DATA}/mind/MINDsmall_train_sample_behaviors.tsv.gz`,
        sessions: 3,
        progress: false,
        out: () => {},
      });
      await expect(run).rejects.toThrow(
        /does not accept this command's service key \(401\): the key here comes from FRESHET_SERVICE_KEY\. Set FRESHET_SERVICE_KEY/,
      );
      expect(feedRequests).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('commands that only talk to a server', () => {
  /** Runs `freshet <args>` to its end; resolves with its exit code and output. */
  const run = (args: string[], env: NodeJS.ProcessEnv) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawnCli(args, env);
      let stderr = '';
      child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
      child.once('exit', (code) => resolve({ code, stderr }));
    });

  it('write no secrets.json into their data folder: with no key to send they fail first, naming what to set', async () => {
    const dataDir = join(tmp, 'client-only'); // never created
    const env = {
      ...process.env,
      FRESHET_DATA_DIR: dataDir,
      FRESHET_SERVICE_KEY: undefined,
      FRESHET_SECRET: undefined,
      LOG_LEVEL: 'silent',
    };
    const [simulate, imported] = await Promise.all([
      run(['simulate', '--url', 'http://127.0.0.1:9', '--sessions', '1'], env),
      run(['import', 'hn', `${DATA}/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz`, '--url', 'http://127.0.0.1:9'], env),
    ]);
    for (const r of [simulate, imported]) {
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `no service key to send to the server: FRESHET_SERVICE_KEY is not set and ${join(dataDir, 'secrets.json')} does not exist`,
      );
      expect(r.stderr).toContain('Set FRESHET_SERVICE_KEY');
    }
    expect(existsSync(dataDir)).toBe(false);
  }, 60_000);
});

describe('input files of the wrong kind', () => {
  const notMind = join(tmp, 'not-mind.tsv.gz');
  writeFileSync(notMind, gzipSync('userId,movieId,rating,timestamp\n1,1,4.0,964982703\n'));

  it('simulate --behaviors <not a MIND file> fails naming the file, the line and the expected format', async () => {
    const run = runSimulate({
      url: 'http://127.0.0.1:9',
      serviceKey: 'k'.repeat(20),
      behaviorsPath: notMind,
      out: () => {},
    });
    await expect(run).rejects.toThrow(
      /not-mind\.tsv\.gz: not a MIND behaviors file \(line 1: 1 fields, expected 5\); expected lines of 5 tab-separated fields/,
    );
  });

  it('simulate discover --behaviors <not a MIND file> fails before loading anything; so does a --ratings file that is not MovieLens', async () => {
    const config = loadConfig({
      FRESHET_DATA_DIR: join(tmp, 'discover'),
      FRESHET_SERVICE_KEY: 'k'.repeat(20),
      FRESHET_SECRET: 's'.repeat(20),
    });
    const base = {
      hnPath: `${DATA}/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz`,
      behaviorsPath: notMind,
      ratingsPath: `${DATA}/movielens/ml-latest-small/ratings.csv.gz`,
      out: () => {},
    };
    await expect(runSimulateDiscover(config, base)).rejects.toThrow(/not a MIND behaviors file/);
    const wrongRatings = {
      ...base,
      behaviorsPath: `${DATA}/mind/MINDsmall_train_sample_behaviors.tsv.gz`,
      ratingsPath: notMind.replace('not-mind', 'x'),
      sessions: 1,
    };
    writeFileSync(wrongRatings.ratingsPath, gzipSync('a\tb\n'));
    await expect(runSimulateDiscover(config, wrongRatings)).rejects.toThrow(
      /not a MovieLens ratings file \(first line "a\\tb", expected "userId,movieId,rating,timestamp"\)/,
    );
    await expect(
      runSimulateDiscover(config, { ...base, behaviorsPath: wrongRatings.behaviorsPath, limit: 1000 }),
    ).rejects.toThrow(/limit must be an integer in 1\.\.100/);
  });
});
