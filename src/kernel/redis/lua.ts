/**
 * Lua scripts as `.lua` files, in BullMQ's layout (its `src/commands/*.lua`: one script per file, the key count in the name),
 * and the one runner every Redis adapter calls them through.
 *
 * Files:
 * - One script per file, `<name>-<keys>.lua`, in a `lua/` folder of the capability that owns it
 *   (`src/hot/lua/hotView-9.lua`; the kernel's seen filters: `src/seen/lua/`). `<keys>` is the
 *   number of KEYS (`seenMark-4`) or, for a script that takes a batch, a formula in N (items) or D
 *   (days): `hotCounters-1+4N` = 1 key, then 4 per item; `seenCheck-1+2D` = 1 key, then 2 per day. Every call's key
 *   count is checked against it before anything is sent.
 * - A `--[[ ... ]]` header lists KEYS, ARGV and the return values and codes.
 * - Shared pieces live in `includes/<name>.lua` beside the scripts and are pulled in by a line
 *   `--- @include "includes/<name>"` (BullMQ's convention; the path is relative to the file holding
 *   the line, `.lua` optional). The line is replaced by the include's text, includes resolved in turn;
 *   an include reached again through another path is dropped (each include once per script, so a
 *   `local function` is defined once). A missing file, a cycle, or one file naming the same include
 *   twice throws {@link LuaLoadError} at load, naming the file and line.
 * - Files are read once per process, synchronously, the first time a script set is used, from the
 *   folder its owner names relative to its own module (`new URL('../lua/', import.meta.url)`): the
 *   same path under `src/` (tsx, vitest) and `dist/` (the build copies `.lua` files beside the
 *   compiled modules: scripts/copy-assets.mjs).
 *
 * Running: {@link LuaScripts.on} registers each script on a client with ioredis `defineCommand` (once
 * per client and script). ioredis then sends `EVAL` the first time on each connection and `EVALSHA`
 * after that, re-sends after a `NOSCRIPT` (a flushed or failed-over node), and on a Cluster routes the
 * call by its keys (every script's keys share one hash tag, hence one slot). One call = one command.
 *
 * Failures (one place): a Redis error from a script run goes through {@link redisFailure}: a store
 * outage (OOM, LOADING, a refused or closed connection, …) becomes `STORE_UNAVAILABLE` naming Redis;
 * anything else is a bug of ours (a Lua runtime error, WRONGTYPE on our own keys) and becomes a
 * {@link LuaScriptError} naming the script. Both are NEW errors with the original as `cause`: ioredis
 * rejects every command queued on a dropped connection with ONE shared error object, so renaming it
 * in place would stack every script's name onto it (`seenMark-2: feedReplace-1: …`).
 * Replies that break the header's promise (a wrong shape, a code the header does not list) are
 * reported through {@link LuaScripts.unexpected} and {@link LuaScripts.decode}, also as LuaScriptError.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, normalize, relative } from 'node:path';
import type { RedisClient } from './client.js';
import { LuaScriptError, redisFailure } from './errors.js';

export { LuaScriptError };

/** How many KEYS a script takes: `fixed + perItem × N` for some N ≥ 0 (`perItem` 0: exactly `fixed`). */
export interface KeyCount {
  readonly fixed: number;
  readonly perItem: number;
}

/** One loaded script. */
export interface LuaScript {
  /** Command name, `hotView`. */
  readonly name: string;
  /** The file name without `.lua`, `hotView-9`: how messages name the script. */
  readonly id: string;
  readonly keys: KeyCount;
  /** The Lua source with every include resolved (what Redis runs). */
  readonly source: string;
  /** SHA-1 of {@link source} (hex): the `EVALSHA` handle. */
  readonly sha: string;
}

/** An argument to a script: Buffers travel as raw bytes (packed hash pairs, HLL strings). */
export type ScriptArg = string | number | Buffer;

/** A script file that cannot be loaded (missing, bad name, bad include). */
export class LuaLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LuaLoadError';
  }
}

const INCLUDE_LINE = /^-{2,3}[ \t]*@include[ \t]+(["'])(.+?)\1[; \t]*$/;

/**
 * Parses the key part of a file name: `9`, `N`, `2D`, `1+4N`.
 * @throws LuaLoadError for anything else.
 */
export function parseKeyCount(spec: string, file = spec): KeyCount {
  const fixed = /^(\d+)$/.exec(spec);
  if (fixed) return { fixed: Number(fixed[1]), perItem: 0 };
  const formula = /^(?:(\d+)\+)?(\d*)[ND]$/.exec(spec);
  if (formula) return { fixed: Number(formula[1] ?? 0), perItem: formula[2] ? Number(formula[2]) : 1 };
  throw new LuaLoadError(`${file}: the key count '${spec}' is not a number or a formula like 1+4N`);
}

/** Whether `n` keys fit `count`. */
export function fitsKeyCount(count: KeyCount, n: number): boolean {
  if (count.perItem === 0) return n === count.fixed;
  return n >= count.fixed && (n - count.fixed) % count.perItem === 0;
}

/**
 * Reads `<dir>/<id>.lua` and resolves its includes.
 * @throws LuaLoadError when the file or an include is missing, an include cycles, or the name does
 *   not follow `<name>-<keys>`.
 */
export function loadLuaScript(dir: URL, id: string): LuaScript {
  const m = /^([A-Za-z][A-Za-z0-9]*)-([0-9ND+]+)$/.exec(id);
  if (!m)
    throw new LuaLoadError(`${id}.lua: a script file is named <name>-<keys>.lua (hotView-9.lua, hotCounters-1+4N.lua)`);
  const root = fileURLToPath(dir);
  const file = join(root, `${id}.lua`);
  const source = resolveIncludes(file, root, new Set([file]), []);
  return {
    name: m[1]!,
    id,
    keys: parseKeyCount(m[2]!, `${id}.lua`),
    source,
    sha: createHash('sha1').update(source).digest('hex'),
  };
}

/** The text of `file` with its include lines replaced (see the module doc). */
function resolveIncludes(
  file: string,
  root: string,
  included: Set<string>,
  chain: readonly { file: string; at: string }[],
): string {
  const where = relative(root, file) || file;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const from = chain.length > 0 ? ` (included from ${chain[chain.length - 1]!.at})` : '';
    throw new LuaLoadError(`cannot read ${where}${from}: ${(err as Error).message}`);
  }
  const named = new Set<string>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = INCLUDE_LINE.exec(lines[i]!.trimEnd());
    if (!m) continue;
    const ref = m[2]!.endsWith('.lua') ? m[2]! : `${m[2]!}.lua`;
    const target = normalize(join(dirname(file), ref));
    const at = `${where}:${i + 1}`;
    if (named.has(target)) throw new LuaLoadError(`${at}: "${m[2]}" is included twice`);
    named.add(target);
    if (target === file || chain.some((c) => c.file === target))
      throw new LuaLoadError(`${at}: include cycle through "${m[2]}"`);
    if (included.has(target)) {
      lines[i] = `-- (${m[2]} already included)`;
      continue;
    }
    included.add(target);
    lines[i] = resolveIncludes(target, root, included, [...chain, { file, at }]).trimEnd();
  }
  return lines.join('\n');
}

/** A script bound to one client: `cmd(keys, args)`, and `cmd.buffer(keys, args)` for binary replies. */
export interface LuaCommand {
  (keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown>;
  /**
   * The same call with bulk strings returned as `Buffer`s, bytes as Redis sent them (bitmaps, HLLs).
   * The Buffers may share memory the reply parser reuses later: copy what you keep.
   */
  buffer(keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown>;
}

/** The name part of a file id: `'hotView-9'` → `'hotView'`. */
export type ScriptName<Id extends string> = Id extends `${infer Name}-${string}` ? Name : never;

/** Which scripts each client has registered (and their SHA: a name is never bound to two sources). */
const registered = new WeakMap<object, Map<string, string>>();

/**
 * A capability's scripts: a folder and the file ids in it. Loaded at first use, then shared by every
 * client. Adapters bind it once per client (`const lua = SCRIPTS.on(redis)`) and call commands by
 * name (`await lua.hotView(keys, args)`).
 */
export class LuaScripts<Id extends string> {
  private loaded: Map<string, LuaScript> | undefined;

  constructor(
    private readonly dir: URL,
    private readonly ids: readonly Id[],
  ) {}

  /** The loaded script `name` (tests and benches read its source and SHA). */
  script(name: ScriptName<Id>): LuaScript {
    const s = this.load().get(name);
    if (!s) throw new LuaLoadError(`no script named ${name} in ${fileURLToPath(this.dir)}`);
    return s;
  }

  /** Every script of the set (loading them all: a missing file fails here, at start, not mid-request). */
  all(): LuaScript[] {
    return [...this.load().values()];
  }

  /**
   * Registers the scripts on `client` (ioredis `defineCommand`; idempotent per client) and returns
   * one {@link LuaCommand} per script.
   * @throws LuaLoadError when a file cannot be loaded, or the client already has a command of that
   *   name that is not this script (a built-in command, or another source under the same name).
   */
  on(client: RedisClient): { readonly [N in ScriptName<Id>]: LuaCommand } {
    const out: Record<string, LuaCommand> = {};
    for (const s of this.load().values()) out[s.name] = bind(client, s);
    return out as { [N in ScriptName<Id>]: LuaCommand };
  }

  /**
   * The error for a reply that breaks the script's header (wrong shape or type): a bug, never the
   * store's fault.
   */
  unexpected(name: ScriptName<Id>, reply: unknown): LuaScriptError {
    return new LuaScriptError(this.script(name).id, `unexpected reply (${describe(reply)})`);
  }

  /**
   * Maps a numeric return code through the script's table (the header lists the same codes).
   * @throws LuaScriptError for a code the table does not hold.
   */
  decode<T>(name: ScriptName<Id>, code: unknown, table: ReadonlyMap<number, T>): T {
    const value = typeof code === 'number' ? table.get(code) : undefined;
    if (value === undefined) throw new LuaScriptError(this.script(name).id, `returned an unknown code ${String(code)}`);
    return value;
  }

  private load(): Map<string, LuaScript> {
    if (!this.loaded) {
      const map = new Map<string, LuaScript>();
      for (const id of this.ids) {
        const s = loadLuaScript(this.dir, id);
        if (map.has(s.name)) throw new LuaLoadError(`${id}.lua: two scripts named ${s.name}`);
        map.set(s.name, s);
      }
      this.loaded = map;
    }
    return this.loaded;
  }
}

type DefinedCommand = (...args: (string | number | Buffer)[]) => Promise<unknown>;

/** Registers `s` on `client` once and returns the bound command. */
function bind(client: RedisClient, s: LuaScript): LuaCommand {
  let names = registered.get(client);
  if (!names) registered.set(client, (names = new Map()));
  const known = names.get(s.name);
  if (known === undefined) {
    if (s.name in client) throw new LuaLoadError(`${s.id}.lua: the client already has a command named ${s.name}`);
    client.defineCommand(s.name, { lua: s.source, ...(s.keys.perItem === 0 ? { numberOfKeys: s.keys.fixed } : {}) });
    names.set(s.name, s.sha);
  } else if (known !== s.sha) {
    throw new LuaLoadError(`${s.id}.lua: another script named ${s.name} is already defined on this client`);
  }
  const target = client as unknown as Record<string, DefinedCommand>;
  const run = (method: string, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> => {
    if (!fitsKeyCount(s.keys, keys.length)) {
      return Promise.reject(new LuaScriptError(s.id, `called with ${keys.length} keys`));
    }
    const head: (string | number)[] = s.keys.perItem === 0 ? [] : [keys.length];
    return target[method]!(...head, ...keys, ...args).catch((err: unknown) => {
      throw redisFailure(err, s.id);
    });
  };
  const cmd = ((keys, args) => run(s.name, keys, args)) as LuaCommand;
  cmd.buffer = (keys, args) => run(`${s.name}Buffer`, keys, args);
  return cmd;
}

function describe(reply: unknown): string {
  if (Array.isArray(reply)) return `array of ${reply.length}`;
  if (Buffer.isBuffer(reply)) return `${reply.length} bytes`;
  return typeof reply;
}
