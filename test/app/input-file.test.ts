/**
 * The CLI's input files read one way (src/cli/input-file.ts): a view log cut short inside its gzip
 * data (the first bytes of the real MIND log) yields its rows up to the cut and then stops with the file
 * and the last line read whole, and `replay views` says so and that nothing was recorded (it reads the
 * whole log before sending the first view). Lines of a plain and a gzip file read alike.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { ImportReadError, inputLines, openInput } from '../../src/cli/input-file.js';
import { MIND_COLUMNS, readViewLog } from '../../src/cli/hot/view-log.js';
import { replayViews, type ReplayDeps } from '../../src/cli/hot/replay-views.js';
import { dataFile } from '../support/env.js';

const dir = mkdtempSync(join(tmpdir(), 'freshet-input-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The first `bytes` of the real MIND impressions log, as a `.gz` file that ends inside its gzip data. */
function truncatedMind(bytes: number): string {
  const path = join(dir, `mind_truncated_${bytes}.csv.gz`);
  writeFileSync(path, readFileSync(dataFile('mind/mind_impressions_long.csv.gz')).subarray(0, bytes));
  return path;
}

describe('input files', () => {
  it('reads the lines of a plain and a gzip file alike (CRLF too)', async () => {
    const text = 'a\tb\r\nc\td\n\ne';
    const lines = async (path: string) => {
      const out: string[] = [];
      for await (const l of inputLines(openInput(path), path)) out.push(`${l.line}:${l.text}`);
      return out;
    };
    writeFileSync(join(dir, 'plain.tsv'), text);
    writeFileSync(join(dir, 'zipped.tsv.gz'), gzipSync(text));
    expect(await lines(join(dir, 'plain.tsv'))).toEqual(['1:a\tb', '2:c\td', '3:', '4:e']);
    expect(await lines(join(dir, 'zipped.tsv.gz'))).toEqual(['1:a\tb', '2:c\td', '3:', '4:e']);
  });

  it('a truncated view log yields its rows up to the cut, then names the file and the last line', async () => {
    const path = truncatedMind(40_000);
    let rows = 0;
    let error: unknown;
    try {
      for await (const _ of readViewLog(path, { columns: MIND_COLUMNS })) rows++;
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ImportReadError);
    const e = error as ImportReadError;
    expect(e.file).toBe(path);
    expect(e.lastLine).toBe(rows + 1); // the header, then one view per line
    expect(rows).toBeGreaterThan(1_000);
    expect(e.message).toBe(
      `${path}: the gzip data ends early (the file is truncated or still being written) after line ${e.lastLine}`,
    );
  });

  it('replay views on a truncated log stops before recording anything, naming the file and line', async () => {
    const path = truncatedMind(20_000);
    // the log is read whole before the first view is sent, so the stores are never reached
    const noStores = {} as ReplayDeps;
    const run = replayViews(noStores, {
      logPath: path,
      columns: MIND_COLUMNS,
      mapping: 'direct',
      progress: false,
      out: () => undefined,
    });
    await expect(run).rejects.toThrow(
      new RegExp(
        `^replay views stopped: ${path.replace(/[.]/g, '\\.')}: the gzip data ends early \\(the file is truncated or still being written\\) after line \\d+\\. nothing was committed\\. The log is read whole before the first view is sent: fix the file and run the same command again$`,
      ),
    );
  });
});
