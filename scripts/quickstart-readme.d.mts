/** The README's quick start as scripts/quickstart-check.mjs replays it (scripts/quickstart-readme.mjs). */
export type QuickStartKind = 'install' | 'server' | 'skip' | 'import' | 'token' | 'key' | 'for-you' | 'shell';
export const REQUIRED_KINDS: QuickStartKind[];
export function sectionCodeBlocks(markdown: string, heading: string): string[];
export function stripComment(text: string): string;
export function classify(cmd: string): QuickStartKind;
export function assignedVariable(cmd: string): string | null;
export function quickStartCommands(
  markdown: string,
  heading?: string,
): { block: number; text: string; kind: QuickStartKind }[];
export function withPort(cmd: string, port: number): string;
