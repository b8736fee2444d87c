/**
 * An OS-level lock on the embedded data folder, so that only one process at a time opens the
 * single-process PGlite database in it (a CLI command beside a running server destroyed it).
 *
 * How: `<dataDir>/freshet.lock` is opened and locked with an exclusive, non-blocking record lock
 * (`fs-native-extensions`: `fcntl(F_OFD_SETLK)` on Linux, `flock` on macOS, `LockFileEx` on Windows;
 * prebuilt binaries ship inside the npm package). The kernel owns the lock, so:
 * - a second opener fails at once (no waiting, no polling), also a second open in the same process
 *   (open-file-description locks conflict between two descriptors of one process);
 * - a holder that dies in any way (`kill -9`, OOM, power loss of a container) releases it with its last
 *   descriptor: there is no stale lock to detect, no mtime to refresh and no pid that could be reused.
 *   (proper-lockfile, the usual alternative, detects staleness by an mtime it refreshes from a timer: a
 *   restart after `kill -9` waits out the stale period, and PGlite's WebAssembly work blocking the event
 *   loop past that period would mark a held lock as compromised.)
 * The holder writes `{pid, command, since}` into the file after taking the lock, so a refused opener can
 * say who holds the folder. The file is never deleted (deleting a lock file races with a new opener).
 */
import { closeSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';

/** The lock's file name inside the data folder. */
export const DATA_DIR_LOCK_FILE = 'freshet.lock';

/** The native lock calls used here (fs-native-extensions ships no types). */
interface NativeLocks {
  /** Takes an exclusive lock on the whole file without waiting; false when another holder has it. */
  tryLock(fd: number): boolean;
  unlock(fd: number): void;
}
const native = createRequire(import.meta.url)('fs-native-extensions') as NativeLocks;

/** Who holds a data folder, as its holder wrote it. */
export interface LockHolder {
  pid: number;
  /** The holder's command line, e.g. `freshet serve`. */
  command: string;
  /** When the holder took the lock (ISO 8601). */
  since: string;
}

/** Thrown by {@link lockDataDir} when another process (or another open in this one) holds the folder. */
export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
  constructor(
    readonly dataDir: string,
    /** The holder, or null when its record is unreadable (it crashed between locking and writing). */
    readonly holder: LockHolder | null,
  ) {
    const who =
      holder === null
        ? 'another process'
        : holder.pid === process.pid
          ? `this process (an earlier open, since ${holder.since})`
          : `pid ${holder.pid} (${holder.command}, since ${holder.since})`;
    super(
      `the data folder ${dataDir} is in use by ${who}: the embedded database (PGlite) is single-process, ` +
        `so only one process may open it. Stop that process first, send the work through its HTTP API, ` +
        `or use a PostgreSQL server (FRESHET_DATABASE_URL)`,
    );
  }
}

/** A held lock. */
export interface DataDirLock {
  /** The lock file. */
  readonly path: string;
  /** Releases the lock (idempotent). */
  release(): void;
}

/** The command line this process shows as a holder: `freshet serve`, `node script.js`. */
function ownCommand(): string {
  const [, script, ...args] = process.argv;
  const name = script ? basename(script).replace(/\.(c|m)?(j|t)s$/, '') : 'node';
  const cmd = [name === 'main' || name === 'freshet' ? 'freshet' : name, ...args].join(' ');
  return cmd.length > 200 ? `${cmd.slice(0, 197)}...` : cmd;
}

function readHolder(path: string): LockHolder | null {
  try {
    const h = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockHolder>;
    if (typeof h.pid !== 'number' || typeof h.command !== 'string' || typeof h.since !== 'string') return null;
    return { pid: h.pid, command: h.command, since: h.since };
  } catch {
    return null;
  }
}

/**
 * Takes the data folder's lock or fails at once. The folder must exist.
 * @param opts.command how the holder is named to a refused opener (default: this process's command line).
 * @throws DataDirLockedError when another holder has the lock; an Error from the file system when the
 *   lock file cannot be opened or written.
 */
export function lockDataDir(dataDir: string, opts: { command?: string } = {}): DataDirLock {
  const path = join(dataDir, DATA_DIR_LOCK_FILE);
  const fd = openSync(path, 'a+'); // creates the file, keeps a holder's record until we hold the lock
  let locked: boolean;
  try {
    locked = native.tryLock(fd);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  if (!locked) {
    closeSync(fd);
    throw new DataDirLockedError(dataDir, readHolder(path));
  }
  const holder: LockHolder = {
    pid: process.pid,
    command: opts.command ?? ownCommand(),
    since: new Date().toISOString(),
  };
  ftruncateSync(fd, 0);
  writeSync(fd, `${JSON.stringify(holder)}\n`);
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      try {
        native.unlock(fd);
      } finally {
        closeSync(fd); // closing the descriptor releases the lock even if unlock failed
      }
    },
  };
}
