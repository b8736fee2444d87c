/**
 * Reads the README's "Quick start" as scripts/quickstart-check.mjs replays it: the shell code blocks of the
 * section, split into commands (a line ending in `\` continues on the next; blank and comment-only lines
 * dropped; `a && b` at the top level is two commands, run in turn), each classified by what the check does
 * with it and which promise of the README it checks:
 *
 * - `install`  `npm install` — exits 0 and leaves dist/ built (the README: "npm install builds dist/");
 * - `server`   `npm start` (or `freshet serve`) — started in the background; answers `/healthz` and writes
 *              the generated service key into `.freshet/secrets.json`, logging that path;
 * - `skip`     `npm test` — the whole suite, which CI runs itself;
 * - `import`   `freshet import hn …` — reports `imported 20100 items from hn`;
 * - `token`    an assignment from `freshet token …` — a signed token (three base64url parts);
 * - `key`      an assignment of FRESHET_SERVICE_KEY — the key of the server's secrets.json;
 * - `for-you`  a request to `/v1/feeds/for-you` — an envelope with code 0 and a non-empty page;
 * - `shell`    anything else — exits 0.
 *
 * Kept apart from the check so a fast test (test/app/quickstart-readme.test.ts) can hold the README and
 * the check together without installing anything.
 */

/** The kinds the check cannot do without: a README that loses one fails the check. */
export const REQUIRED_KINDS = ['install', 'server', 'import', 'token', 'for-you'];

/**
 * The shell code blocks of the section whose heading is `heading` (up to the next heading of the same or
 * a higher level).
 * @param {string} markdown
 * @param {string} heading e.g. `## Quick start`
 * @returns {string[]} each block's text
 */
export function sectionCodeBlocks(markdown, heading) {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) return [];
  const level = heading.indexOf(' ');
  const blocks = [];
  let block = null;
  for (const line of lines.slice(start + 1)) {
    if (block === null && /^#+ /.test(line) && line.indexOf(' ') <= level) break;
    if (block === null && /^```(sh|bash|shell)\s*$/.test(line.trim())) block = [];
    else if (block !== null && line.trim() === '```') {
      blocks.push(block.join('\n'));
      block = null;
    } else if (block !== null) block.push(line);
  }
  return blocks;
}

/**
 * `text` without a trailing shell comment (a `#` after whitespace, outside quotes).
 * @param {string} text
 */
export function stripComment(text) {
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = '';
      else if (c === '\\' && quote === '"') i++;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '\\') i++;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]))) return text.slice(0, i).trimEnd();
  }
  return text.trimEnd();
}

/**
 * Splits `text` on `&&` outside quotes and `$( … )`.
 * @param {string} text
 */
function splitAnd(text) {
  const parts = [];
  let quote = '';
  let depth = 0;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = '';
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '&' && text[i + 1] === '&' && depth === 0) {
      parts.push(text.slice(from, i).trim());
      from = i + 2;
      i++;
    }
  }
  parts.push(text.slice(from).trim());
  return parts.filter((p) => p.length > 0);
}

/**
 * What the check does with a command (see the module doc).
 * @param {string} cmd a command without its comment
 * @returns {'install'|'server'|'skip'|'import'|'token'|'key'|'for-you'|'shell'}
 */
export function classify(cmd) {
  if (/^npm (install|i|ci)\b/.test(cmd)) return 'install';
  if (/^npm (start|run start)\s*$/.test(cmd) || /\bfreshet(\.js)? serve\b/.test(cmd)) return 'server';
  if (/^npm (test|run test)\b/.test(cmd)) return 'skip';
  if (/\bfreshet(\.js)? import hn\b/.test(cmd)) return 'import';
  if (/^(export\s+)?[A-Za-z_]\w*=.*\bfreshet(\.js)? token\b/.test(cmd)) return 'token';
  if (/^(export\s+)?FRESHET_SERVICE_KEY=/.test(cmd)) return 'key';
  if (/\/v1\/feeds\/for-you\b/.test(cmd) && /\bcurl\b/.test(cmd)) return 'for-you';
  return 'shell';
}

/**
 * The variable a command assigns (`X=…` or `export X=…`), or null.
 * @param {string} cmd
 */
export function assignedVariable(cmd) {
  return /^(?:export\s+)?([A-Za-z_]\w*)=/.exec(cmd)?.[1] ?? null;
}

/**
 * The quick start's commands, in order.
 * @param {string} markdown the README
 * @param {string} [heading]
 * @returns {{ block: number, text: string, kind: ReturnType<typeof classify> }[]}
 */
export function quickStartCommands(markdown, heading = '## Quick start') {
  const out = [];
  sectionCodeBlocks(markdown, heading).forEach((block, b) => {
    const logical = [];
    let pending = '';
    for (const raw of block.split('\n')) {
      const line = pending ? `${pending} ${raw.trim()}` : raw;
      if (line.trimEnd().endsWith('\\')) {
        pending = line.trimEnd().slice(0, -1).trimEnd();
        continue;
      }
      pending = '';
      logical.push(line);
    }
    if (pending) logical.push(pending);
    for (const line of logical) {
      const text = stripComment(line.trim());
      if (text.length === 0) continue;
      for (const part of splitAnd(text)) out.push({ block: b + 1, text: part, kind: classify(part) });
    }
  });
  return out;
}

/**
 * `cmd` with the README's port (8080, on localhost or 127.0.0.1) replaced by `port`.
 * @param {string} cmd
 * @param {number} port
 */
export function withPort(cmd, port) {
  return cmd.replace(/\b(localhost|127\.0\.0\.1):8080\b/g, `$1:${port}`);
}
