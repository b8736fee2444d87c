/**
 * The pure parts of the readers' preferences (docs/preferences.md): the muted-word matcher, the one check
 * of the document, the snapshot's rules (muted author, word, language; "show less" weights compounding
 * to a floor; expiry on the request's time) and the author-diversity pick.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MutedWordMatcher, phraseWords } from '../../src/exclusions/muted-words.js';
import { parsePreferences, preferencesToJson } from '../../src/exclusions/preferences.js';
import { buildReaderExclusions, NO_DURABLE } from '../../src/exclusions/domain.js';
import { compilePreferences } from '../../src/exclusions/compiled-preferences.js';
import { arrangePages, authorCap, pickPage, repeatMultiplier } from '../../src/kernel/author-diversity.js';
import type { Item } from '../../src/kernel/items/item.js';

const NOW = Date.UTC(2026, 2, 6, 12);
const it_ = (o: Partial<Item>): Item => ({
  id: 'i',
  authorId: 'a',
  title: '',
  text: '',
  url: null,
  tags: [],
  publishedAt: NOW,
  updateTime: NOW,
  popularity: 0,
  lang: 'en',
  ...o,
});
const PENALTY = { weight: 0.3, durationMs: 1000 };

describe('muted words', () => {
  const m = new MutedWordMatcher([
    { phrase: 'Bitcoin', wholeWord: true },
    { phrase: 'machine learning', wholeWord: true },
    { phrase: 'coin', wholeWord: false },
    { phrase: '养老金', wholeWord: true },
  ]);
  it('match case- and accent-insensitively on title, text and tags, on word boundaries', () => {
    expect(m.match(it_({ title: "BITCOIN's rally" }))).toBe('Bitcoin');
    expect(m.match(it_({ text: 'about bitcoin.' }))).toBe('Bitcoin');
    expect(m.match(it_({ tags: ['bitcoin'] }))).toBe('Bitcoin');
    expect(m.match(it_({ title: 'Machine   Learning!' }))).toBe('machine learning');
    expect(new MutedWordMatcher([{ phrase: 'café', wholeWord: true }]).match(it_({ title: 'CAFE open' }))).toBe('café');
  });
  it('a phrase matches its words in order and adjacent only; a whole word is not a part of one', () => {
    expect(m.match(it_({ title: 'Learning machines' }))).toBeNull();
    expect(m.match(it_({ title: 'machine and learning' }))).toBeNull();
    expect(
      new MutedWordMatcher([{ phrase: 'bitcoin', wholeWord: true }]).match(it_({ title: 'bitcoiners' })),
    ).toBeNull();
  });
  it('substring phrases and unspaced scripts match inside words', () => {
    expect(m.match(it_({ title: 'Altcoins' }))).toBe('coin');
    expect(m.match(it_({ title: '政府宣布新的养老金改革方案' }))).toBe('养老金');
  });
  it('finds exactly what a word-by-word reference finds, for any phrases and text (property)', () => {
    // the reference: whole word = the phrase's words in order and adjacent among the item's words;
    // substring = the words joined by one space contain them joined by one space
    const wordsOf = (s: string) => phraseWords(s);
    const holds = (ws: string[], pw: string[]) =>
      ws.some((_, i) => pw.every((w, j) => ws[i + j] === w) && i + pw.length <= ws.length);
    const token = fc.constantFrom('ab', 'Ab', 'ába', 'b', 'ba', 'c', 'abc', '1', 'a-b', "ab's", 'x.y');
    const text = fc.array(token, { maxLength: 12 }).map((t) => t.join(' '));
    const rule = fc.record({
      phrase: fc.array(token, { minLength: 1, maxLength: 3 }).map((t) => t.join(' ')),
      wholeWord: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(rule, { minLength: 1, maxLength: 6 }), text, (rules, title) => {
        const item = Object.freeze(it_({ title, tags: ['tag'] }));
        const ws = wordsOf(`${title} tag`);
        const expected = rules
          .filter((r) => wordsOf(r.phrase).length > 0)
          .filter((r) =>
            r.wholeWord ? holds(ws, wordsOf(r.phrase)) : ` ${ws.join(' ')} `.includes(wordsOf(r.phrase).join(' ')),
          )
          .map((r) => r.phrase);
        const m = new MutedWordMatcher(rules);
        expect(m.matchAll(item)).toEqual([...new Set(expected)]);
        expect(m.match(item) !== null).toBe(expected.length > 0);
        expect(m.match(item) !== null).toBe(expected.length > 0); // the remembered verdict agrees
      }),
      { numRuns: 300 },
    );
  });
  it('never matches a text without the phrase (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (s) => {
        const text = s.replace(/[bB]/g, 'x');
        expect(new MutedWordMatcher([{ phrase: 'bitcoin', wholeWord: false }]).match(it_({ title: text }))).toBeNull();
      }),
      { numRuns: 200 },
    );
  });
});

describe('the preferences document', () => {
  it('takes defaults, primary tags, de-duplicates, and leaves expired entries out of its JSON', () => {
    const p = parsePreferences(
      {
        muted_words: [
          { phrase: 'a', expires_at: NOW / 1000 + 10 },
          { phrase: 'b', whole_word: false, feeds: ['hot'] },
        ],
        muted_authors: [{ author_id: 'x' }, { author_id: 'x' }],
        languages: ['pt-BR', 'pt', 'de'],
      },
      NOW,
    );
    expect(p.languages).toEqual(['pt', 'de']);
    expect(p.mutedAuthors).toHaveLength(1);
    expect(p.maxPerAuthor).toBeNull();
    expect(preferencesToJson(p, NOW + 20_000).muted_words.map((w) => w.phrase)).toEqual(['b']);
  });
  it('refuses what it cannot apply, naming the field', () => {
    expect(() => parsePreferences({ muted_words: [{ phrase: '¿?' }] }, NOW)).toThrow(/muted_words\[0\]\.phrase/);
    expect(() => parsePreferences({ languages: ['zz'] }, NOW)).toThrow(/languages\[0\]/);
    expect(() => parsePreferences({ max_per_author: 21 }, NOW)).toThrow(/max_per_author/);
    expect(() => parsePreferences({ muted_words: [{ phrase: 'a', feeds: ['home'] }] }, NOW)).toThrow(/feeds\[0\]/);
    expect(() => parsePreferences({ colour: 'red' }, NOW)).toThrow(/colour/);
    // finite in seconds, Infinity in ms: refused, not stored as a mute that never ends
    expect(() => parsePreferences({ muted_words: [{ phrase: 'a', expires_at: 1e306 }] }, NOW)).toThrow(
      /muted_words\[0\]\.expires_at .*past 2100-01-01/,
    );
    expect(() => parsePreferences({ muted_authors: [{ author_id: 'm', expires_at: 4102444801 }] }, NOW)).toThrow(
      /muted_authors\[0\]\.expires_at/,
    );
    expect(
      parsePreferences({ muted_words: [{ phrase: 'a', expires_at: 4102444800 }] }, NOW).mutedWords[0],
    ).toMatchObject({
      expiresAtMs: Date.UTC(2100, 0, 1),
    });
  });
});

describe('the snapshot with preferences', () => {
  const prefs = parsePreferences(
    {
      muted_words: [{ phrase: 'rust', feeds: ['for-you'] }],
      muted_authors: [{ author_id: 'm', expires_at: NOW / 1000 + 60 }],
      languages: ['de'],
    },
    NOW,
  );
  const ex = (nowMs: number) =>
    buildReaderExclusions('r', [], { ...NO_DURABLE, preferences: prefs }, nowMs, PENALTY, undefined, 2);
  it('names each rule, per feed, and lets mutes expire on the request time', () => {
    const e = ex(NOW);
    expect(e.reason('x', 'm')).toBe('muted_author');
    expect(e.itemReason(it_({ title: 'Rust 2.0', lang: 'de' }), 'for-you')).toBe('muted_word');
    expect(e.itemReason(it_({ title: 'Rust 2.0', lang: 'de' }), 'discover')).toBeNull();
    expect(e.itemReason(it_({ lang: 'en' }), 'discover')).toBe('language');
    expect(e.itemReason(it_({ lang: 'und' }), 'discover')).toBeNull(); // unknown is not "another language"
    expect(e.itemReason(it_({ lang: 'en' }), 'following')).toBeNull(); // languages_in_following unset
    expect(e.maxPerAuthor).toBe(2);
    expect(ex(NOW + 61_000).reason('x', 'm')).toBeNull();
    // compiled once per document and stretch of time: virtual time going back applies the mute again
    expect(ex(NOW + 59_000).reason('x', 'm')).toBe('muted_author');
    expect(compilePreferences(prefs, NOW)).toBe(compilePreferences(prefs, NOW + 59_999));
    expect(compilePreferences(prefs, NOW + 60_000)).not.toBe(compilePreferences(prefs, NOW));
  });
  it('a warn phrase hides nothing: the item is served with filtered (each phrase once, per feed); hide wins', () => {
    const doc = parsePreferences(
      {
        muted_words: [
          { phrase: 'Spoiler', action: 'warn' },
          { phrase: 'season finale', action: 'warn', feeds: ['following'] },
          { phrase: 'leak', action: 'warn', whole_word: false },
          { phrase: 'gore' },
        ],
      },
      NOW,
    );
    expect(preferencesToJson(doc, NOW).muted_words.map((w) => w.action)).toEqual(['warn', 'warn', 'warn', 'hide']);
    const e = buildReaderExclusions('r', [], { ...NO_DURABLE, preferences: doc }, NOW, PENALTY);
    const plain = it_({ title: 'Weather today' });
    expect(e.serve(plain, 'for-you')).toBe(plain); // nothing to add: the same object, no copy
    const spoiler = it_({ title: 'SPOILER: the season finale leaked', tags: ['spoiler'] });
    expect(e.itemReason(spoiler, 'for-you')).toBeNull();
    const warnOnly = { ...doc, mutedWords: doc.mutedWords.filter((w) => w.action === 'warn') };
    const w = buildReaderExclusions('r', [], { ...NO_DURABLE, preferences: warnOnly }, NOW, PENALTY);
    expect(w.needsItems('for-you')).toBe(false); // warn alone never makes a feed hydrate its candidates
    expect(e.serve(spoiler, 'for-you').filtered).toEqual(['Spoiler', 'leak']);
    expect(e.serve(spoiler, 'following').filtered).toEqual(['Spoiler', 'season finale', 'leak']);
    expect(spoiler).not.toHaveProperty('filtered'); // the shared item is never changed
    expect(e.itemReason(it_({ title: 'Spoiler: gore ahead' }), 'discover')).toBe('muted_word');
    expect(() => parsePreferences({ muted_words: [{ phrase: 'x', action: 'blur' }] }, NOW)).toThrow(
      /muted_words\[0\]\.action/,
    );
    // a document stored before the action existed hides
    const old = { ...doc, mutedWords: [{ phrase: 'gore', wholeWord: true, expiresAtMs: null, feeds: null }] };
    const o = buildReaderExclusions('r', [], { ...NO_DURABLE, preferences: old }, NOW, PENALTY);
    expect(o.itemReason(it_({ title: 'gore' }), 'hot')).toBe('muted_word');
    expect(preferencesToJson(old, NOW).muted_words[0]!.action).toBe('hide');
  });
  it("findings names every rule that removes an item, in the guard clauses' order, and warn phrases as notes", () => {
    const doc = parsePreferences(
      {
        muted_words: [{ phrase: 'Rust' }, { phrase: 'Spoiler', action: 'warn' }],
        muted_authors: [{ author_id: 'm' }],
        languages: ['de'],
      },
      NOW,
    );
    const durable = {
      ...NO_DURABLE,
      engaged: ['e1', 'both'],
      notInterested: [{ itemId: 'both', authorId: 'x', atMs: NOW }],
      blockedAuthors: ['b'],
      preferences: doc,
    };
    const e = buildReaderExclusions('r', ['v1', 'both'], durable, NOW, PENALTY);
    const rules = (o: Partial<Item>, feed: 'for-you' | 'following' = 'for-you') =>
      e.findings(it_({ lang: 'de', ...o }), feed).rules;
    expect(rules({})).toEqual([]);
    expect(rules({ authorId: 'r' })).toEqual([{ rule: 'own' }]);
    expect(rules({ authorId: 'b' })).toEqual([{ rule: 'blocked_author' }]);
    expect(rules({ authorId: 'm' })).toEqual([{ rule: 'muted_author' }]);
    expect(rules({ id: 'e1' })).toEqual([{ rule: 'engaged' }]);
    expect(rules({ id: 'v1' })).toEqual([{ rule: 'recently_viewed' }]);
    expect(rules({ title: 'rust 2.0' })).toEqual([{ rule: 'muted_word', phrase: 'Rust', action: 'hide' }]);
    expect(rules({ lang: 'en' })).toEqual([{ rule: 'language', lang: 'en' }]);
    expect(rules({ lang: 'en' }, 'following')).toEqual([]); // languages_in_following unset
    // all of them at once, in order; `reason` still stops at the first
    const all = it_({ id: 'both', authorId: 'm', title: 'Rust', lang: 'en' });
    expect(e.findings(all, 'for-you').rules.map((f) => f.rule)).toEqual([
      'muted_author',
      'not_interested',
      'engaged',
      'recently_viewed',
      'muted_word',
      'language',
    ]);
    expect(e.reason(all.id, all.authorId)).toBe('muted_author');
    expect(e.findings(it_({ title: 'spoiler!', lang: 'de' }), 'for-you')).toEqual({
      rules: [],
      notes: [{ rule: 'muted_word', phrase: 'Spoiler', action: 'warn' }],
    });
  });
  it('"show less" compounds per signal down to its floor, and ends after its duration', () => {
    const signal = (i: number) => ({ itemId: `s${i}`, authorId: 'loud', tags: ['Crypto'], atMs: NOW - i });
    const showLess = { weight: 0.5, floor: 0.1, durationMs: 1000 };
    const at = (n: number, nowMs = NOW) =>
      buildReaderExclusions(
        'r',
        [],
        { ...NO_DURABLE, showLess: Array.from({ length: n }, (_, i) => signal(i)) },
        nowMs,
        PENALTY,
        showLess,
      );
    expect(at(1).authorWeight('loud')).toBe(0.5);
    expect(at(2).authorWeight('loud')).toBe(0.25);
    expect(at(9).authorWeight('loud')).toBe(0.1);
    expect(at(1).itemWeight({ authorId: 'other', tags: ['crypto'] })).toBe(0.5);
    expect(at(2).itemWeight({ authorId: 'loud', tags: ['crypto'] })).toBeCloseTo(0.25 * 0.25);
    expect(at(2, NOW + 5000).authorWeight('loud')).toBe(1);
  });
});

describe('author diversity', () => {
  const ranked = (authors: string) => [...authors].map((a, i) => ({ id: `${a}${i}`, authorId: a }));
  it('caps an author per page while others remain, and discounts repeats (home-mixer 0.5 / 0.25)', () => {
    expect(repeatMultiplier(0)).toBe(1);
    expect(repeatMultiplier(1)).toBe(0.625);
    expect(authorCap(2, 20)).toBe(2);
    expect(authorCap(2, 10)).toBe(1);
    expect(authorCap(0, 20)).toBe(Number.POSITIVE_INFINITY);
    const p = pickPage(ranked('aaaaabbc'), 4, 2);
    expect(p.page.map((c) => c.authorId)).toEqual(['a', 'a', 'b', 'c']); // a1: ½ × 0.625 beats b5's ⅙; a third a is capped
    expect(p.relaxed).toBe(false);
    expect(pickPage(ranked('aaaa'), 3, 2).relaxed).toBe(true);
  });
  it('arranges every candidate once into pages that respect the cap until only one author is left', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'a', 'a', 'b', 'c', 'd'), { maxLength: 80 }), (authors) => {
        const list = authors.map((a, i) => ({ id: `${i}`, authorId: a }));
        const { ordered } = arrangePages(list, 10, 1, false);
        expect(ordered.map((c) => c.id).sort()).toEqual(list.map((c) => c.id).sort());
      }),
      { numRuns: 100 },
    );
  });
});
