/**
 * The README's quick start and scripts/quickstart-check.mjs stay together: the check replays the
 * section's commands as written, so this fast test reads them the way the check does and fails when the
 * README loses a step the check verifies or gains one it would misread. (The replay itself — install,
 * start, import, token, curl on a fresh clone — is `npm run quickstart-check`, run by .ci/run.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  assignedVariable,
  classify,
  quickStartCommands,
  REQUIRED_KINDS,
  stripComment,
  withPort,
} from '../../scripts/quickstart-readme.mjs';
import { ROOT } from '../support/cli.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

describe("the README's quick start, as the check reads it", () => {
  const cmds = quickStartCommands(README);

  it('holds every step the check verifies, in the order a newcomer runs them', () => {
    expect(cmds.map((c) => c.kind)).toEqual(['install', 'server', 'skip', 'key', 'import', 'token', 'for-you']);
    for (const k of REQUIRED_KINDS) expect(cmds.some((c) => c.kind === k)).toBe(true);
    expect(cmds.find((c) => c.kind === 'server')!.text).toBe('npm start');
    expect(cmds.find((c) => c.kind === 'import')!.text).toBe(
      'npx freshet import hn ../shared/data/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz',
    );
  });

  it('joins continued lines into one command and leaves comments out (the simulate live hint is not run)', () => {
    const curl = cmds.find((c) => c.kind === 'for-you')!.text;
    expect(curl).toMatch(
      /^curl -s -XPOST localhost:8080\/v1\/feeds\/for-you .* -d '\{"action":"refresh","limit":5\}'$/,
    );
    expect(cmds.some((c) => c.text.includes('simulate live'))).toBe(false);
    expect(README).toMatch(/# optional, in a second terminal: npx freshet simulate live/);
  });

  it('moves the README port onto the one the check chose, and reads the variable an assignment sets', () => {
    expect(withPort('curl localhost:8080/v1/x http://127.0.0.1:8080/y', 41234)).toBe(
      'curl localhost:41234/v1/x http://127.0.0.1:41234/y',
    );
    expect(assignedVariable('TOKEN=$(npx freshet token alice | tail -1)')).toBe('TOKEN');
    expect(assignedVariable('export FRESHET_SERVICE_KEY=$(node -p "x")')).toBe('FRESHET_SERVICE_KEY');
    expect(assignedVariable('npx freshet import hn f')).toBeNull();
  });

  it('keeps a # inside quotes and drops a trailing comment', () => {
    expect(stripComment(`echo '# not a comment' "#nor this"   # a comment`)).toBe(`echo '# not a comment' "#nor this"`);
    expect(stripComment('npm install && npm start     # installs, builds')).toBe('npm install && npm start');
    expect(stripComment('curl -d "a\\"#b" x')).toBe('curl -d "a\\"#b" x');
  });

  it('a README that drifts is caught: a quick start without the for-you request lacks a required step', () => {
    const drifted = README.replace(/curl -s -XPOST localhost:8080\/v1\/feeds\/for-you[^`]*?limit":5\}'\n/, '');
    expect(drifted).not.toBe(README);
    const kinds = quickStartCommands(drifted).map((c) => c.kind);
    expect(REQUIRED_KINDS.filter((k) => !kinds.includes(k))).toEqual(['for-you']);
    expect(classify('node bin/freshet.js serve')).toBe('server');
    expect(classify('npm run test')).toBe('skip');
  });
});
