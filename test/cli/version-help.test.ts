/**
 * What `freshet` says about itself: `--version` (and `-V`) print package.json's version and exit 0; `simulate
 * --help` says the command without a subcommand replays MIND sessions on virtual time and points to `live`
 * for demo traffic at wall time (it read as if the MIND replay were the live one).
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, spawnCli } from '../support/cli.js';

/** Runs `freshet <args>` to its end: exit code and stdout. */
async function cli(args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawnCli(args, { ...process.env, LOG_LEVEL: 'silent' });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, out };
}

describe('freshet about itself', () => {
  it('--version and -V print the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) expect(await cli([flag])).toEqual({ code: 0, out: `${version}\n` });
  });

  it('simulate --help tells the MIND replay from live demo traffic', async () => {
    const { code, out } = await cli(['simulate', '--help']);
    expect(code).toBe(0);
    const description = out.split('\nOptions:')[0]!.replace(/\s+/g, ' ');
    expect(description).toMatch(/MIND/);
    expect(description).toMatch(/wall time.*`freshet simulate live`/);
    expect(out).toMatch(/live \[options\]\s+demo traffic at wall time/);
  });
});
