/**
 * The input files of the CLI's importers and replays (`import hn`, `import graph`, `replay views`), read
 * one way: a plain or gzip file (by its `.gz` name) streamed with its compressed bytes counted for
 * progress, read and gunzip errors carried to the reader instead of crashing the process, and a file that
 * stops being readable (a truncated gzip, a read error) reported as an {@link ImportReadError} naming the
 * file and the last line read whole. A command that stops on one says what it had committed and how to
 * resume ({@link stoppedMessage}).
 */
import { createReadStream, statSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { createGunzip } from 'node:zlib';

/** An open input file. */
export interface InputFile {
  /** The file's text bytes (decompressed for `.gz`); iterating it throws the read or gunzip error. */
  source: Readable;
  /** Size of the file in bytes (compressed for `.gz`). */
  totalBytes: number;
  /** Bytes of the file (compressed for `.gz`) read so far. */
  bytesRead(): number;
  /** Stops reading (the file is closed). */
  close(): void;
}

/**
 * A file refused before anything was read from it or written: missing, unreadable, a folder, or not of
 * the format asked (its header). Its message is the whole story — what and what to do — so the CLI
 * prints it as one line, with no "stopped … resume" (there is nothing to resume).
 */
export class InputRefused extends Error {}

/** The file's size in bytes. @throws InputRefused when it cannot be read as a file. */
function sizeOf(file: string): number {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(file);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOENT')
      throw new InputRefused(
        `${file}: no such file — check the path (the data sets are in ../shared/data/, beside the repository)`,
      );
    throw new InputRefused(`${file}: cannot be read (${code ?? String(err)}) — check its permissions`);
  }
  if (!st.isFile()) throw new InputRefused(`${file} is not a file — pass the path of a data file`);
  return st.size;
}

/**
 * Opens `file` for streaming: gunzipped when its name ends in `.gz`. A read error of the file is
 * forwarded to `source` (pipe() does not forward errors), so whoever reads `source` sees it.
 * @param onBytes called with the bytes read so far and the size after each chunk (progress bars).
 * @throws Error when the file does not exist or cannot be opened.
 */
export function openInput(file: string, onBytes?: (bytesRead: number, totalBytes: number) => void): InputFile {
  const totalBytes = sizeOf(file);
  let read = 0;
  const raw = createReadStream(file);
  raw.on('data', (chunk) => {
    read += chunk.length;
    onBytes?.(read, totalBytes);
  });
  const source = file.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
  if (source !== raw) raw.on('error', (err: Error) => source.destroy(err));
  return {
    source,
    totalBytes,
    bytesRead: () => read,
    close: () => {
      raw.destroy();
      if (source !== raw) source.destroy();
    },
  };
}

/** Pipes an input into a parser (csv-parse), handing it the input's errors so its iteration throws them. */
export function pipeInto(input: InputFile, parser: Writable): void {
  input.source.on('error', (err: Error) => parser.destroy(err));
  input.source.pipe(parser);
}

/**
 * Splits an input into lines (`\n`, a trailing `\r` dropped), numbered from 1.
 * @throws ImportReadError when the input stops being readable, naming `file` and the last line read whole.
 */
export async function* inputLines(input: InputFile, file: string): AsyncGenerator<{ text: string; line: number }> {
  let rest = '';
  let line = 0;
  input.source.setEncoding('utf8');
  const chunks = readErrorsAs(file, input.source as AsyncIterable<string>, () => line);
  for await (const chunk of chunks) {
    rest += chunk;
    for (let i = rest.indexOf('\n'); i >= 0; i = rest.indexOf('\n')) {
      const text = rest.slice(0, i);
      rest = rest.slice(i + 1);
      yield { text: text.endsWith('\r') ? text.slice(0, -1) : text, line: ++line };
    }
  }
  if (rest.length > 0) yield { text: rest.endsWith('\r') ? rest.slice(0, -1) : rest, line: ++line };
}

/**
 * Re-yields `rows`, turning an error of the input under them (a read or gunzip error) into an
 * {@link ImportReadError} naming `file` and `lastLine()` (the last line read whole).
 */
export async function* readErrorsAs<T>(
  file: string,
  rows: AsyncIterable<T>,
  lastLine: () => number,
): AsyncGenerator<T> {
  try {
    yield* rows;
  } catch (err) {
    if (!(err instanceof Error) || err instanceof ImportReadError) throw err;
    throw new ImportReadError(file, lastLine(), err);
  }
}

/**
 * The file could not be read to its end (a truncated gzip, a read error): names the file and the last
 * line read whole. Rows up to `lastLine` were read; nothing after it.
 */
export class ImportReadError extends Error {
  override readonly name = 'ImportReadError';
  constructor(
    readonly file: string,
    readonly lastLine: number,
    cause: Error,
  ) {
    super(`${file}: ${describeReadError(cause)} ${lastLine > 0 ? `after line ${lastLine}` : 'before the header'}`, {
      cause,
    });
  }
}

/** A person's words for a stream error (zlib's "unexpected end of file" is a truncated file). */
function describeReadError(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'Z_BUF_ERROR' || /unexpected end of file/i.test(err.message))
    return 'the gzip data ends early (the file is truncated or still being written)';
  if (code === 'Z_DATA_ERROR') return `the gzip data is corrupt (${err.message})`;
  return err.message;
}

/** What a command that stopped had done. */
export interface StoppedWork {
  file: string;
  /** The file's last line whose rows were committed (1: only the header). */
  committedLine: number;
  /**
   * What was committed before it stopped (`null`: nothing was): how many (`"1200 edges"`) and the detail
   * after the lines (`"(1180 new, 0 across a block)"`).
   */
  committed: { what: string; detail: string } | null;
  /** How to go on, e.g. "the import is idempotent (…): fix the file and run the same command again to resume". */
  resume: string;
}

/**
 * What a command that stopped says, in one line: why (file and line: an {@link ImportReadError}'s own
 * words, otherwise the error after the committed line), exactly what was committed before, and how to go on.
 */
export function stoppedMessage(command: string, err: unknown, w: StoppedWork): string {
  if (err instanceof InputRefused) return err.message;
  const why =
    err instanceof ImportReadError
      ? err.message
      : `${w.file}: ${err instanceof Error ? err.message : String(err)} (after line ${w.committedLine})`;
  const c = w.committed;
  const committed =
    c === null
      ? 'nothing was committed'
      : `committed before it: ${c.what} of lines 2–${w.committedLine} ${c.detail}; nothing after line ${w.committedLine}`;
  return `${command} stopped: ${why}. ${committed}. ${w.resume}`;
}
