/**
 * Loggers of the `freshet` command: people read pretty lines, machines read JSON.
 *
 * - `LOG_FORMAT` = `pretty` | `json`; unset → `pretty` when the log's stream is a terminal, else `json`.
 *   Pretty lines are pino-pretty's, one line per entry (`[12:00:01.234] INFO: freshet listening {…}`),
 *   written synchronously on the main thread (no transport worker).
 * - `freshet serve` and `freshet worker fanout` log to stdout at `LOG_LEVEL` (default info).
 * - Every other command prints its report on stdout and logs to stderr at `warn` (or `LOG_LEVEL` when it
 *   is set), so no log line lands inside a report.
 */
import { pino, destination, levels, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from '../compose/config.js';

/** How log entries are written. */
export type LogFormat = 'pretty' | 'json';

/**
 * The format `LOG_FORMAT` asks for, or the default for a stream that is (or is not) a terminal.
 * @throws Error when `LOG_FORMAT` is set to anything else than pretty or json.
 */
export function logFormat(env: NodeJS.ProcessEnv, isTty: boolean): LogFormat {
  const v = env.LOG_FORMAT?.trim().toLowerCase();
  if (!v) return isTty ? 'pretty' : 'json';
  if (v === 'pretty' || v === 'json') return v;
  throw new Error(
    `invalid configuration:\n  LOG_FORMAT: must be pretty or json (got ${JSON.stringify(env.LOG_FORMAT)})`,
  );
}

function make(level: string, fd: 1 | 2, format: LogFormat, colorize: boolean): Logger {
  if (format === 'json') return pino({ level }, destination({ fd, sync: true }));
  const stream = pretty({
    destination: fd,
    sync: true,
    colorize,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
  });
  return pino({ level }, stream);
}

/** The logger of a long-running process (`serve`, `worker fanout`): stdout, `LOG_LEVEL`, `LOG_FORMAT`. */
export function serverLogger(config: Pick<Config, 'logLevel'>, env: NodeJS.ProcessEnv = process.env): Logger {
  const tty = Boolean(process.stdout.isTTY);
  return make(config.logLevel, 1, logFormat(env, tty), tty);
}

/** pino's numeric level of a level name (`silent` above every other). */
function severity(level: string): number {
  return level === 'silent' ? Infinity : (levels.values[level] ?? 30);
}

/**
 * The logger of a command that prints a report: stderr; at `warn`, or at the configured level when that
 * is stricter (`error`, `silent`) or when `LOG_LEVEL` is set in the environment; pretty unless
 * `LOG_FORMAT=json`.
 */
export function cliLogger(config: Pick<Config, 'logLevel'>, env: NodeJS.ProcessEnv = process.env): Logger {
  const tty = Boolean(process.stderr.isTTY);
  const format = env.LOG_FORMAT ? logFormat(env, tty) : 'pretty';
  const level = env.LOG_LEVEL || severity(config.logLevel) > severity('warn') ? config.logLevel : 'warn';
  return make(level, 2, format, tty);
}
