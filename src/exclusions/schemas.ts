/**
 * JSON schemas of the exclusion routes (docs/exclusions.md): engagements and "not interested" feedback.
 */
import { Type, type TLiteral } from 'typebox';
import { ENGAGEMENT_KINDS, FEEDBACK_KINDS } from './domain.js';
import { Envelope, Id } from '../kernel/http/schemas.js';
import { PREFERENCE_FEEDS } from '../kernel/exclusion-source.js';
import {
  MAX_LANGUAGES,
  MAX_MUTED_AUTHORS,
  MAX_MUTED_WORDS,
  MAX_PER_AUTHOR_LIMIT,
  MAX_EXPIRY_S,
  MAX_PHRASE_CHARS,
  MUTE_ACTIONS,
} from './preferences.js';

/**
 * A union of string literals whose static type is the union of `kinds` (TypeBox types a union over a
 * mapped array as `never`; the cast states the tuple it is, so clients typed from these schemas get
 * `'reply' | 'like' | 'share'`). The JSON schema is unchanged: `anyOf` of `const`s.
 */
function kindUnion<K extends string>(kinds: readonly K[], options: { description?: string; default?: K }) {
  return Type.Union(kinds.map((k) => Type.Literal(k)) as unknown as [TLiteral<K>], options);
}

/** `POST /v1/engagements` body. */
export const EngagementBody = Type.Object(
  {
    item_id: Id,
    kind: kindUnion(ENGAGEMENT_KINDS, { description: 'reply | like | share' }),
  },
  { additionalProperties: false },
);

/** Largest batch of `POST /v1/engagements`. */
export const MAX_ENGAGEMENTS_PER_REQUEST = 1000;

/** `POST /v1/engagements` body: one engagement, or a batch (array) of the request's reader's. */
export const EngagementsBody = Type.Union([
  EngagementBody,
  Type.Array(EngagementBody, { minItems: 1, maxItems: MAX_ENGAGEMENTS_PER_REQUEST }),
]);

const EngagementOut = Type.Object({
  reader_id: Type.String(),
  item_id: Type.String(),
  kind: Type.String(),
  created: Type.Boolean(),
});

export const EngagementResult = Envelope(EngagementOut);

/** The outcome of a batch: one result per element, in order, and how many were new. */
export const EngagementsResult = Envelope(
  Type.Object({
    results: Type.Array(EngagementOut),
    summary: Type.Object({ created: Type.Integer(), existing: Type.Integer() }),
  }),
);

/** `DELETE /v1/engagements/:item_id` path and query (`?kind=like`). */
export const EngagementParams = Type.Object({ item_id: Id });
export const EngagementQuery = Type.Object(
  { kind: kindUnion(ENGAGEMENT_KINDS, { description: 'reply | like | share' }) },
  { additionalProperties: false },
);

export const EngagementDeleteResult = Envelope(
  Type.Object({ reader_id: Type.String(), item_id: Type.String(), kind: Type.String(), removed: Type.Boolean() }),
);

/** `POST /v1/feedback` body. */
export const FeedbackBody = Type.Object(
  {
    item_id: Id,
    kind: kindUnion(FEEDBACK_KINDS, {
      description:
        'not_interested (the item leaves the feeds, its author weighs less) | show_less (its author and tags weigh less)',
    }),
  },
  { additionalProperties: false },
);

export const FeedbackResult = Envelope(
  Type.Object({
    reader_id: Type.String(),
    item_id: Type.String(),
    kind: Type.String(),
    created: Type.Boolean(),
    author_id: Type.String({
      description: "the item's author, down-weighted for the reader until author_penalty_until",
    }),
    author_penalty_until: Type.Integer({ description: 'epoch seconds' }),
  }),
);

/** `DELETE /v1/feedback/:item_id` path and query. */
export const FeedbackParams = Type.Object({ item_id: Id });
export const FeedbackQuery = Type.Object(
  {
    kind: Type.Optional(
      kindUnion(FEEDBACK_KINDS, { default: 'not_interested', description: 'not_interested | show_less' }),
    ),
  },
  { additionalProperties: false },
);

export const FeedbackDeleteResult = Envelope(
  Type.Object({ reader_id: Type.String(), item_id: Type.String(), kind: Type.String(), removed: Type.Boolean() }),
);

/** `GET /v1/exclusions`: what the reader is excluded from, for inspection and undo. */
export const ExclusionListResult = Envelope(
  Type.Object({
    reader_id: Type.String(),
    recently_viewed: Type.Array(Type.String(), {
      description: 'recent counted views, newest first (at most FRESHET_RECENT_VIEWS)',
    }),
    engaged: Type.Array(Type.String(), { description: 'items replied to, liked or shared, most recent first' }),
    not_interested: Type.Array(
      Type.Object({
        item_id: Type.String(),
        author_id: Type.String(),
        at: Type.Integer({ description: 'epoch seconds' }),
      }),
      { description: '"not interested" items, most recent first (undo: DELETE /v1/feedback/:item_id)' },
    ),
    blocked_authors: Type.Array(Type.String(), { description: 'authors the reader blocks or who block the reader' }),
  }),
);

/** What a muted word does: hide the item (default) or deliver it with `filtered` (Mastodon's `filter_action`). */
const MuteActionSchema = kindUnion(MUTE_ACTIONS, {
  default: 'hide',
  description: 'hide: the item never reaches the reader there | warn: it is delivered with filtered: [phrase, …]',
});

/** Epoch seconds or null (no expiry). */
const Expiry = Type.Union([
  Type.Number({ minimum: 0, maximum: MAX_EXPIRY_S, description: 'epoch seconds, in the future, at most 2100-01-01' }),
  Type.Null(),
]);

/** One muted word as a document or a patch gives it. */
const MutedWordIn = Type.Object(
  {
    phrase: Type.String({ minLength: 1, maxLength: MAX_PHRASE_CHARS }),
    whole_word: Type.Optional(Type.Boolean({ default: true, description: 'match on word boundaries' })),
    expires_at: Type.Optional(Expiry),
    feeds: Type.Optional(
      Type.Union(
        [
          Type.Array(kindUnion(PREFERENCE_FEEDS, {}), {
            minItems: 1,
            maxItems: PREFERENCE_FEEDS.length,
          }),
          Type.Null(),
        ],
        { description: 'the feeds it applies to (null or absent: all)' },
      ),
    ),
    action: Type.Optional(MuteActionSchema),
  },
  { additionalProperties: false },
);

/** One muted author as a document or a patch gives it. */
const MutedAuthorIn = Type.Object(
  { author_id: Id, expires_at: Type.Optional(Expiry) },
  { additionalProperties: false },
);

const Languages = Type.Union(
  [Type.Array(Type.String({ maxLength: 35 }), { minItems: 1, maxItems: MAX_LANGUAGES }), Type.Null()],
  { description: 'ISO 639-1 codes the ranked feeds keep (null: every language)' },
);
const LanguagesInFollowing = Type.Boolean({ description: 'apply the language list to the following timeline too' });
const MaxPerAuthor = Type.Integer({
  minimum: 0,
  maximum: MAX_PER_AUTHOR_LIMIT,
  description: 'most items of one author per 20 of a ranked page (0: no cap)',
});

/**
 * A reader's preferences (docs/preferences.md), as `GET /v1/users/:id/preferences` answers and `PUT`
 * takes them. The limits stated here are checked again, with the rules a schema cannot state (a phrase
 * with a letter or digit, an expiry in the future, a known language), by `parsePreferences`.
 */
export const PreferencesDoc = Type.Object(
  {
    muted_words: Type.Optional(Type.Array(MutedWordIn, { maxItems: MAX_MUTED_WORDS })),
    muted_authors: Type.Optional(Type.Array(MutedAuthorIn, { maxItems: MAX_MUTED_AUTHORS })),
    languages: Type.Optional(Languages),
    languages_in_following: Type.Optional(LanguagesInFollowing),
    max_per_author: Type.Optional(MaxPerAuthor),
  },
  { additionalProperties: false },
);

/**
 * `PATCH /v1/users/:id/preferences`: entry by entry, atomically (src/exclusions/preferences-patch.ts).
 * Removals apply before additions; the result must stay within the document's limits.
 */
export const PreferencesPatch = Type.Object(
  {
    add_muted_words: Type.Optional(
      Type.Array(MutedWordIn, {
        maxItems: MAX_MUTED_WORDS,
        description: 'added; one with the same phrase and whole_word as an existing entry replaces it',
      }),
    ),
    remove_muted_words: Type.Optional(
      Type.Array(Type.String({ maxLength: MAX_PHRASE_CHARS }), {
        maxItems: MAX_MUTED_WORDS,
        description: 'phrases to remove (compared folded: case and accents ignored)',
      }),
    ),
    add_muted_authors: Type.Optional(
      Type.Array(MutedAuthorIn, { maxItems: MAX_MUTED_AUTHORS, description: 'added, or their expiry replaced' }),
    ),
    remove_muted_authors: Type.Optional(Type.Array(Id, { maxItems: MAX_MUTED_AUTHORS })),
    languages: Type.Optional(Languages),
    languages_in_following: Type.Optional(LanguagesInFollowing),
    max_per_author: Type.Optional(Type.Union([MaxPerAuthor, Type.Null()])),
  },
  { additionalProperties: false },
);

export const PreferencesResult = Envelope(
  Type.Object({
    reader_id: Type.String(),
    muted_words: Type.Array(
      Type.Object({
        phrase: Type.String(),
        whole_word: Type.Boolean(),
        expires_at: Type.Union([Type.Integer(), Type.Null()]),
        feeds: Type.Union([Type.Array(Type.String()), Type.Null()]),
        action: MuteActionSchema,
      }),
    ),
    muted_authors: Type.Array(
      Type.Object({ author_id: Type.String(), expires_at: Type.Union([Type.Integer(), Type.Null()]) }),
    ),
    languages: Type.Union([Type.Array(Type.String()), Type.Null()]),
    languages_in_following: Type.Boolean(),
    max_per_author: Type.Union([Type.Integer(), Type.Null()]),
  }),
);
