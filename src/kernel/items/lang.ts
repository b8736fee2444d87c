/**
 * Item languages: the `lang` of an item is a BCP-47 primary language subtag, lower-case (`en`, `de`,
 * `zh`), or `und` when unknown. An application may send it (`en-US` is stored as `en`: the readers'
 * language lists are primary tags); when it does not, it is detected from the title and text with `eld`
 * (Nito-ELD, the "small" n-gram database), and an unreliable guess is stored as `und`.
 *
 * Why eld/small (measured on the 20,100 HN titles and on short de/fr/es/ru/zh/ja titles): eld/small says
 * `en` for 96.2 % of the HN titles (1.6 % und, 2.2 % wrong); franc-min says `en` for 72.2 % (27.8 % wrong:
 * short titles read as French, Dutch, Portuguese); tinyld 79.1 %. eld/large gains 1.5 points on HN for 3×
 * the memory (139 MB of heap against 46 MB, 1.2 s to load against 0.4 s). The database is loaded on the
 * first item published without a `lang`, so a deployment whose application always sends one never pays for it.
 *
 * **A guess on a few words is no answer.** eld calls "Postgres tuning" reliably Danish (Danish and Swedish
 * tie at 0.609, English 0.601): 17 % of the HN titles of 1–3 words come back in another language, and a
 * reader whose list says `en` never saw them. A wrong language hides an item; `und` hides nothing (it passes
 * every language list, docs/preferences.md). So a text is `und` unless it has at least
 * {@link MIN_DETECT_WORDS} words (or is in a script of its own: Han, kana, Hangul, Thai) and eld's best
 * score leads the next by {@link MIN_DETECT_MARGIN} of itself. Measured by `bench/lang-detect.ts` (HN
 * titles, MIND news titles, 90 short titles in nine other languages): wrong languages on HN 2.2 % → 0.3 %
 * (1–3 words: 17.2 % → 0), MIND 0.8 % → 0.2 %; und on HN 1.6 % → 9.3 %; the other languages 88 → 75 of 90
 * right, 1 wrong either way (the rest und).
 *
 * Full-text search: each item's vector is built with the PostgreSQL text search configuration of its
 * language where stock PostgreSQL 15 has one ({@link TS_CONFIGS}), else `simple` (no stemming, no stop
 * words): a Russian item is stemmed as Russian, a Chinese one is kept as whole space-separated tokens.
 */
import { fail } from '../errors.js';

/** The language of an item nothing is known about. */
export const UNDETERMINED = 'und';

/**
 * BCP-47 primary tag → the text search configuration of stock PostgreSQL 15 (and PGlite) for it; every
 * other language uses `simple`. Baked into migration 12's `freshet_ts_config`: change it with a migration.
 */
export const TS_CONFIGS: Readonly<Record<string, string>> = {
  ar: 'arabic',
  hy: 'armenian',
  eu: 'basque',
  ca: 'catalan',
  da: 'danish',
  nl: 'dutch',
  en: 'english',
  fi: 'finnish',
  fr: 'french',
  de: 'german',
  el: 'greek',
  hi: 'hindi',
  hu: 'hungarian',
  id: 'indonesian',
  ga: 'irish',
  it: 'italian',
  lt: 'lithuanian',
  ne: 'nepali',
  no: 'norwegian',
  nb: 'norwegian',
  nn: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sr: 'serbian',
  es: 'spanish',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
  yi: 'yiddish',
};

/** The text search configuration of a language (`simple` when PostgreSQL has none for it). */
export function tsConfigOf(lang: string): string {
  return lang === UNDETERMINED ? UNDETERMINED_CONFIG : (TS_CONFIGS[lang] ?? 'simple');
}

/**
 * The configuration of an item of unknown language: English, as every item was read before items had a
 * language — so items written without a language (by older writers, or too short to tell) keep matching
 * the interests of readers who list no language, which are read in English too.
 */
export const UNDETERMINED_CONFIG = 'english';

/** A BCP-47 tag as accepted: a primary subtag of 2–3 letters (or `und`), then optional subtags. */
const BCP47 = /^([A-Za-z]{2,3})(-[A-Za-z0-9]{1,8})*$/;

/** Longest tag accepted, characters. */
export const MAX_LANG_CHARS = 35;

/** The primary subtag of a BCP-47 tag, lower-case (`pt-BR` → `pt`), or null when `tag` is not one. */
export function primaryTag(tag: unknown): string | null {
  if (typeof tag !== 'string' || tag.length > MAX_LANG_CHARS) return null;
  const m = BCP47.exec(tag);
  return m ? m[1]!.toLowerCase() : null;
}

/**
 * The primary subtag of `tag`. @throws FreshetError INVALID_INPUT naming `field` when `tag` is not a
 * BCP-47 tag (`en`, `pt-BR`, `und`).
 */
export function assertLang(tag: unknown, field: string): string {
  const p = primaryTag(tag);
  if (p === null)
    throw fail(
      'INVALID_INPUT',
      `${field} ${JSON.stringify(tag)?.slice(0, 40)} is not a BCP-47 language tag (e.g. "en", "pt-BR", "und")`,
    );
  return p;
}

/** Characters of title + text read by the detector (the start of a long text says enough). */
export const DETECT_CHARS = 2000;

interface Detector {
  detect(text: string): { language: string; isReliable(): boolean; getScores(): Record<string, number> };
}

let detector: Promise<Detector> | undefined;

/** Loads the detector once (dynamic import: its n-gram database is ~46 MB of heap). */
function loadDetector(): Promise<Detector> {
  detector ??= import('eld/small').then((m) => m.eld as Detector);
  return detector;
}

/** Fewest words (runs of letters and digits) a text needs before its language is guessed (see the module doc). */
export const MIN_DETECT_WORDS = 4;
/** How far eld's best score must lead the second, as a fraction of the best (see the module doc). */
export const MIN_DETECT_MARGIN = 0.05;
/** Scripts that name their language, or are written without spaces: a few characters say enough. */
const OWN_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}]/u;

/**
 * The language of a text: eld's answer when it calls it reliable, the text has {@link MIN_DETECT_WORDS} words
 * or more (or is in a script of its own) and the answer leads the next by {@link MIN_DETECT_MARGIN}; else
 * `und` (also for an empty text). Reads the first {@link DETECT_CHARS} characters.
 */
export async function detectLanguage(text: string): Promise<string> {
  const sample = text.slice(0, DETECT_CHARS).trim();
  if (sample === '') return UNDETERMINED;
  const words = sample.match(/[\p{L}\p{N}]+/gu)?.length ?? 0;
  if (words < MIN_DETECT_WORDS && !OWN_SCRIPT.test(sample)) return UNDETERMINED;
  const r = (await loadDetector()).detect(sample);
  if (!r.language || !r.isReliable()) return UNDETERMINED;
  const [best = 0, second = 0] = Object.values(r.getScores()).sort((a, b) => b - a);
  return best > 0 && (best - second) / best >= MIN_DETECT_MARGIN ? r.language : UNDETERMINED;
}

/**
 * The languages of items to publish: each item's `lang` as its primary tag, or detected from its title
 * and text when absent. The input must have passed the item check (its `lang` is a valid tag or absent).
 */
export async function languagesOf(items: readonly { title: string; text: string; lang?: string }[]): Promise<string[]> {
  return Promise.all(
    items.map((i) => (i.lang === undefined ? detectLanguage(`${i.title}\n${i.text}`) : assertLang(i.lang, 'lang'))),
  );
}

/** ISO 639-1 codes: the languages a reader may list (BCP-47 primary tags of two letters). */
export const ISO_639_1: ReadonlySet<string> = new Set(
  (
    'aa ab ae af ak am an ar as av ay az ba be bg bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el ' +
    'en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it ' +
    'iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt ' +
    'my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl ' +
    'sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo ' +
    'za zh zu'
  ).split(' '),
);
