/**
 * The real `freshet` command in a child process, for tests of what only processes show: locks,
 * `kill -9`, workers, shutdown. One way to start it and one way to read its JSON log lines (stdout is
 * a pipe, so pino writes JSON), instead of a copy in every test file.
 *
 * The child runs the compiled CLI in dist/ (what `bin/freshet.js` runs; `npm install` builds it) when
 * every compiled file there is at least as new as its source under src/, and the sources through tsx
 * otherwise, so an edit not yet built is still what is tested. The compiled start costs about half the
 * CPU of tsx's (1.4 s against 2.9 s for `--help` on the 2-core test machine), and the suite starts a few
 * dozen children.
 */
import { distIsCurrent } from '../../scripts/dist-current.mjs';
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';

/** The repository's root folder. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The CLI entry in the sources. */
export const MAIN = join(ROOT, 'src/cli/main.ts');
/** The compiled CLI entry (`npm run build`). */
const BUILT_MAIN = join(ROOT, 'dist/cli/main.js');

let argvCache: string[] | undefined;
/** Node's arguments before the CLI's own: the built entry when dist/ is current, else tsx on the sources. */
export function cliArgv(): string[] {
  argvCache ??= distIsCurrent(ROOT, { ui: false }) ? [BUILT_MAIN] : ['--import', 'tsx', MAIN];
  return argvCache;
}

/** Starts `freshet <args>` with `env` (stdout piped; stderr piped unless `stdio` says otherwise). */
export function spawnCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  stdio: StdioOptions = ['ignore', 'pipe', 'pipe'],
): ChildProcess {
  return spawn(process.execPath, [...cliArgv(), ...args], { cwd: ROOT, env, stdio });
}

/**
 * Calls `onEntry` with each JSON line of `stream` as it arrives (split on newlines across chunks);
 * a line that is not JSON goes to `onOther` (ignored by default).
 */
export function onJsonLines<T = Record<string, unknown>>(
  stream: Readable,
  onEntry: (entry: T, line: string) => void,
  onOther: (line: string) => void = () => {},
): void {
  let buffered = '';
  stream.on('data', (b: Buffer) => {
    buffered += b.toString();
    for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      let entry: T;
      try {
        entry = JSON.parse(line) as T;
      } catch {
        onOther(line);
        continue;
      }
      onEntry(entry, line);
    }
  });
}

/**
 * Starts `freshet serve <extra>` with `env` and resolves once it logs that it listens, with the child,
 * its URL and every stdout line so far (and after). Rejects with its stderr when it exits first.
 */
export async function serveCli(
  env: NodeJS.ProcessEnv,
  extra: readonly string[] = [],
): Promise<{ child: ChildProcess; url: string; lines: string[] }> {
  const child = spawnCli(['serve', ...extra], env);
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    onJsonLines<{ msg?: string; url?: string }>(
      child.stdout!,
      (entry, line) => {
        lines.push(line);
        if (entry.msg === 'freshet listening') resolve(entry.url!);
      },
      (line) => lines.push(line),
    );
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  return { child, url, lines };
}
