/**
 * Config parsing helpers: the pieces every settings parser uses to read environment variables — a
 * bounded integer or number with a default, the parse that lists every invalid variable at once, and
 * the one error shape a bad setting throws. The variables themselves and their ranges are listed in
 * src/compose/config.ts (the app owns the configuration; the kernel only knows how to read it).
 */
import { z } from 'zod';

/** An integer variable in [min, max] (inclusive), `def` when unset; text is coerced (`"20"` → 20). */
export function intVar(min: number, max: number, def: number) {
  return z.coerce.number().int().min(min).max(max).default(def);
}

/** A number variable in [min, max] (inclusive), `def` when unset; text is coerced (`"0.5"` → 0.5). */
export function numVar(min: number, max: number, def: number) {
  return z.coerce.number().min(min).max(max).default(def);
}

/**
 * The error of an invalid configuration: `invalid configuration: <what>` (one line), or
 * `invalid configuration:` followed by one indented line per variable.
 */
export function configError(what: string | readonly string[]): Error {
  return new Error(
    typeof what === 'string'
      ? `invalid configuration: ${what}`
      : `invalid configuration:\n${what.map((l) => `  ${l}`).join('\n')}`,
  );
}

/**
 * Parses `env` with `schema`.
 * @throws Error ({@link configError}) listing every invalid variable as `NAME: problem`.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) throw configError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  return parsed.data;
}
