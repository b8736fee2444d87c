/**
 * Text work per item is bounded whatever the item's length (src/kernel/items/fold.ts): an item whose
 * text is 100,000 × U+FDFA (1.8 million characters once NFKD-normalised) is folded to at most
 * MAX_FOLDED_CHARS characters for the muted words (src/exclusions/muted-words.ts), once per item — not once
 * per explain or per page — while its title, tags and the start of its text still match; the text embedder
 * of a publish reads at most 4,000 folded characters of it (src/discover/embedding.ts). Over HTTP on both store pairs: publishing it, a feed page
 * and the explain API (for a reader with muted words) answer, and the explains after the first fold nothing
 * of it again. The time saved is a benchmark's figure (bench/preferences.ts), not asserted here.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FreshetClient } from '../../src/client/index.js';
import { HOUR_MS } from '../../src/kernel/clock.js';
import { MAX_FOLDED_CHARS, MutedWordMatcher, foldItem } from '../../src/exclusions/muted-words.js';
import { FOLD_SLICE } from '../../src/kernel/items/fold.js';
import { words } from '../../src/discover/embedding.js';
import type { Item } from '../../src/kernel/items/item.js';
import { item, startTestApp, type TestApp } from '../support/app.js';

/** U+FDFA ARABIC LIGATURE SALLALLAHOU ALAYHE WASALLAM: one character, 18 once NFKD-normalised. */
const LIGATURE = '\uFDFA';
const HUGE = LIGATURE.repeat(100_000);

const itemOf = (o: Partial<Item>): Item => ({
  id: 'i',
  authorId: 'a',
  title: '',
  text: '',
  url: null,
  tags: [],
  publishedAt: 0,
  updateTime: 0,
  popularity: 0,
  lang: 'und',
  ...o,
});

describe('the fold of one item', () => {
  it('is at most MAX_FOLDED_CHARS characters whatever the text, and reads title and tags first', () => {
    expect(LIGATURE.normalize('NFKD').length).toBe(18);
    const huge = Object.freeze(itemOf({ title: 'Cheap Tricks', tags: ['spam'], text: `Bitcoin ${HUGE} tail` }));
    const f = foldItem(huge);
    expect(f.joined.length).toBeLessThanOrEqual(MAX_FOLDED_CHARS + 2);
    expect(f.joined.startsWith(' cheap tricks spam bitcoin ')).toBe(true);
    expect(foldItem(huge)).toBe(f); // a shared (frozen) item is folded once
    const m = new MutedWordMatcher([
      { phrase: 'tricks', wholeWord: true },
      { phrase: 'SPAM', wholeWord: true },
      { phrase: 'bitcoin', wholeWord: true },
      { phrase: 'tail', wholeWord: true },
    ]);
    expect(m.matchAll(huge)).toEqual(['tricks', 'SPAM', 'bitcoin']); // "tail" is past the bound: not read
  });

  it("the text embedder's words of it are bounded too (the publish path)", () => {
    const ws = words(`${HUGE} tail`);
    expect(ws.length).toBeGreaterThan(0);
    expect(ws.join(' ').length).toBeLessThanOrEqual(4000);
    expect(ws).not.toContain('tail');
    expect(words('Émigré cafés, 2 times')).toEqual(['emigre', 'cafes', 'times']); // as before below the bound
  });

  it('a word cut at the bound is left out, not matched as a shorter one', () => {
    const text = `${'a '.repeat(MAX_FOLDED_CHARS / 2 - 10)}bitcoiner and more`;
    const f = foldItem(itemOf({ text }));
    expect(f.joined.length).toBeLessThanOrEqual(MAX_FOLDED_CHARS + 2);
    expect(new MutedWordMatcher([{ phrase: 'bitcoin', wholeWord: true }]).match(itemOf({ text }))).toBeNull();
  });

  it('folds as before below the bound (accents, case, surrogate pairs across slices)', () => {
    // long enough to be folded slice by slice; 'x' puts a surrogate pair across every slice boundary
    const text = `x${'😀'.repeat(4 * FOLD_SLICE)} Café ÉMIGRÉ`;
    expect(foldItem(itemOf({ title: 'Ünïcödé', text })).joined).toBe(' unicode x cafe emigre ');
  });
});

describe.each([
  { name: 'PGlite + in-process', hot: 'memory', db: 'pglite' },
  { name: 'PostgreSQL + Redis', hot: 'redis', db: 'postgres' },
] as const)('an item of 100,000 × U+FDFA on $name', ({ hot, db }) => {
  let t: TestApp;
  let svc: FreshetClient;
  beforeAll(async () => {
    t = await startTestApp({ hot, db });
    svc = t.client();
    await svc.items.publish([
      item('huge', HOUR_MS, { author_id: 'a_huge', title: 'Ligatures', text: HUGE, lang: 'ar' }),
      item('small', 2 * HOUR_MS, { author_id: 'a_small', title: 'Kept small', lang: 'en' }),
    ]);
    await svc.users.setPreferences('tb_reader', { muted_words: [{ phrase: 'never there' }, { phrase: 'kept' }] });
  });
  afterAll(async () => t?.close());
  afterEach(() => vi.restoreAllMocks());

  it('is served and explained to a reader with muted words; explains after the first fold nothing of it', async () => {
    const as = svc.as('tb_reader');
    const page = await as.forYou.refresh({ limit: 20 });
    expect(page.items.map((i) => i.id)).toEqual(['huge']); // "small" holds a muted word
    // characters NFKD-normalised (the fold's work) while explaining
    let normalised = 0;
    const real = String.prototype.normalize;
    vi.spyOn(String.prototype, 'normalize').mockImplementation(function (this: string, form?: string) {
      const out = real.call(this, form);
      normalised += out.length;
      return out;
    });
    const first = await as.explain('discover', 'huge');
    expect(first.rules.map((r) => r.rule)).not.toContain('muted_word');
    // the first explain may fold the item once: at most the bound plus one slice's expansion (18 × a slice)
    expect(normalised).toBeLessThanOrEqual(MAX_FOLDED_CHARS + 18 * FOLD_SLICE + 1000);
    normalised = 0;
    for (let i = 0; i < 5; i++) await as.explain(i % 2 ? 'discover' : 'for-you', 'huge');
    expect(normalised).toBeLessThan(1000); // the item is not folded again
    expect((await as.explain('for-you', 'small')).rules.map((r) => r.rule)).toContain('muted_word');
  });
});
