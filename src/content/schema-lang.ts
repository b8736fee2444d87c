/**
 * Migration 12: items get a language (src/kernel/items/lang.ts) and the text search configuration of
 * their language. Listed by src/compose/migrations.ts; never edit it once released: append a new version.
 *
 * Items written before it keep `und` and the English vector they were given (re-publishing an item detects
 * its language and rebuilds its vector). `freshet_ts_config(lang)` maps a primary tag to a configuration
 * of stock PostgreSQL 15 (the same table as `TS_CONFIGS`), `und` to English (as before languages: see
 * `UNDETERMINED_CONFIG`), `simple` for every other tag.
 */
import type { Migration } from '../kernel/sql/migrations.js';
import { TS_CONFIGS, UNDETERMINED, UNDETERMINED_CONFIG } from '../kernel/items/lang.js';

const cases = Object.entries(TS_CONFIGS)
  .map(([lang, cfg]) => `WHEN '${lang}' THEN '${cfg}'::regconfig`)
  .join(' ');

/** Migration 12 (its own constant: the lead renumbers it with one line when branches merge). */
export const ITEMS_LANG_MIGRATION: Migration = {
  version: 12,
  name: 'items: language (BCP-47 primary tag) and its text search configuration',
  sql: `
    ALTER TABLE items ADD COLUMN lang text NOT NULL DEFAULT 'und' CHECK (lang ~ '^[a-z]{2,3}$');
    CREATE FUNCTION freshet_ts_config(lang text) RETURNS regconfig
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT CASE lang WHEN '${UNDETERMINED}' THEN '${UNDETERMINED_CONFIG}'::regconfig ${cases} ELSE 'simple'::regconfig END $$;
  `,
};
