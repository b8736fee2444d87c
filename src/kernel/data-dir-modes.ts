/**
 * The data folder is private to the user running Freshet: folders 0700, files 0600 — the
 * embedded database's, and the in-process vector index's snapshots (src/discover/adapters/vector-snapshot.ts,
 * which creates its folders and files so itself, also beside a PostgreSQL server). PGlite (Emscripten's file system over Node's) creates its files 0666 whatever the process umask
 * (measured: 968 of 973 files of a fresh database), so after PGlite opens and again after it closes every
 * file and folder under the data folder is narrowed; the data folder itself is created 0700 first, so
 * a file PGlite adds while running (a new relation segment, a WAL file) is out of other users' reach
 * until then: they cannot enter the folder.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Mode of the data folder's folders. */
export const DIR_MODE = 0o700;
/** Mode of the data folder's files. */
export const FILE_MODE = 0o600;

/** Creates `dir` (and its parents) when missing, and makes it 0700. */
export function privateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  chmodSync(dir, DIR_MODE);
}

/**
 * Narrows every folder under `dir` (and `dir`) to 0700 and every file to 0600 — only those wider than
 * that (group or other bits set, or a folder missing its owner's bits); symbolic links are left alone.
 * A file that vanishes meanwhile (PostgreSQL removes WAL segments) is skipped.
 * @returns how many entries were changed.
 */
export function restrictModes(dir: string): number {
  let changed = 0;
  const visit = (path: string) => {
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(path);
    } catch {
      return;
    }
    if (st.isSymbolicLink()) return;
    const want = st.isDirectory() ? DIR_MODE : FILE_MODE;
    if ((st.mode & 0o777) !== want) {
      try {
        chmodSync(path, want);
        changed++;
      } catch {
        // gone meanwhile
      }
    }
    if (st.isDirectory()) for (const name of safeList(path)) visit(join(path, name));
  };
  visit(dir);
  return changed;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
