/**
 * The wire schemas of the use cases that span every room: the export document of a user
 * (`GET /v1/users/:id/export`, src/use-cases/personal-data.ts) and the explain API's answer
 * (`GET /v1/feeds/{feed}/explain`, src/use-cases/explain.ts). TypeBox, published in the OpenAPI document.
 * They live beside the use cases, not in the server's routes, so the typed client (src/client/types.ts)
 * takes their static types from here by `import type` and imports nothing from the server.
 */
import { Type } from 'typebox';
import { Envelope } from '../kernel/http/schemas.js';

const Stamp = Type.Union([Type.Integer({ description: 'epoch seconds' }), Type.Null()]);
const Since = Type.Object({ id: Type.String(), since: Type.Integer({ description: 'epoch seconds' }) });

/**
 * The export document (the `data` of `GET /v1/users/:id/export`): everything Freshet holds about a user.
 * Times in epoch seconds. Published in the OpenAPI document; test/app/erase.test.ts validates exports against it.
 */
export const UserExport = Type.Object(
  {
    user_id: Type.String(),
    exported_at: Type.Integer({ description: 'epoch seconds' }),
    profile: Type.Union([
      Type.Object({
        id: Type.String(),
        created_at: Stamp,
        last_active_at: Stamp,
        followers: Type.Integer(),
        following: Type.Integer(),
      }),
      Type.Null(),
    ]),
    following: Type.Array(Since, { description: 'users they follow, newest first' }),
    followers: Type.Array(Since, { description: 'ids of their followers, newest first' }),
    blocks: Type.Array(Since, { description: 'users they block' }),
    engagements: Type.Array(Type.Object({ item_id: Type.String(), kind: Type.String(), at: Stamp })),
    feedback: Type.Array(
      Type.Object({ item_id: Type.String(), kind: Type.String(), author_id: Type.String(), at: Stamp }),
    ),
    views: Type.Array(Type.Object({ item_id: Type.String(), at: Stamp, weight: Type.Number() }), {
      description: 'the views retained as discover signals (FRESHET_READER_SIGNALS_*), newest first',
    }),
    interactions: Type.Array(Type.Object({ item_id: Type.String(), kinds: Type.Array(Type.String()), at: Stamp }), {
      description:
        'what the learning room keeps of them: per item, the kinds of positive signal and the last one’s time',
    }),
    embedding: Type.Union([Type.Array(Type.Number()), Type.Null()], {
      description: 'the embedding the application gave them (PUT /v1/users/:id/embedding), unit length; null: none',
    }),
    recent_views: Type.Array(Type.String(), {
      description: 'the recent views the exclusions keep (docs/exclusions.md)',
    }),
    interests: Type.Array(Type.String()),
    preferences: Type.Unknown({ description: 'the preferences document as GET /v1/users/:id/preferences answers it' }),
    markers: Type.Object({
      following: Type.Object({ last_read_id: Type.String(), updated_at: Stamp }),
      notifications: Type.Object({ last_read_id: Type.String(), updated_at: Stamp }),
    }),
    notifications: Type.Array(
      Type.Object({
        id: Type.String(),
        type: Type.String(),
        actor_id: Type.String(),
        item_id: Type.Union([Type.String(), Type.Null()]),
        at: Stamp,
        data: Type.Unknown(),
      }),
      { description: 'notifications they received, newest first' },
    ),
    items: Type.Array(
      Type.Object({
        id: Type.String(),
        title: Type.String(),
        text: Type.String(),
        url: Type.Union([Type.String(), Type.Null()]),
        tags: Type.Array(Type.String()),
        published_at: Stamp,
        deleted: Type.Boolean(),
      }),
      { description: 'items they authored, live and deleted, newest first' },
    ),
  },
  { description: 'everything Freshet holds about a user (GET /v1/users/:id/export)' },
);

/** The feed names as a schema (spelled out: a mapped union loses its members in the static type). */
export const FeedName = Type.Union([
  Type.Literal('for-you'),
  Type.Literal('hot'),
  Type.Literal('discover'),
  Type.Literal('following'),
]);

const RuleOut = Type.Object({
  rule: Type.String({ description: 'the rule (docs/explain.md lists them)' }),
  reason: Type.String({ description: 'one plain English sentence' }),
  day: Type.Optional(Type.String({ description: 'seen, rolling filter: the UTC day (YYYY-MM-DD) that holds it' })),
  sub_filter: Type.Optional(Type.Integer({ description: "seen, the reader's own filter: the sub-filter holding it" })),
  fpr: Type.Optional(Type.Number({ description: "seen: that filter's current false-positive rate, from its fill" })),
  phrase: Type.Optional(Type.String({ description: 'muted_word: the phrase as the reader wrote it' })),
  action: Type.Optional(Type.Union([Type.Literal('hide'), Type.Literal('warn')])),
  lang: Type.Optional(Type.String({ description: "language: the item's primary language tag" })),
});

/** `data` of `GET /v1/feeds/{feed}/explain`. */
export const ExplainResult = Envelope(
  Type.Object({
    feed: FeedName,
    reader_id: Type.String(),
    item_id: Type.String(),
    eligible: Type.Boolean({ description: 'rules is empty: a refresh now could serve it' }),
    rules: Type.Array(RuleOut, { description: 'every rule that removes it, in the order the feed applies them' }),
    notes: Type.Array(RuleOut, { description: 'what marks it without removing it (a warn muted word)' }),
    score: Type.Union([
      Type.Object({
        value: Type.Number(),
        parts: Type.Record(Type.String(), Type.Union([Type.Number(), Type.String()]), {
          description: 'the factors the feed combines (docs/explain.md, per feed)',
        }),
      }),
      Type.Null(),
    ]),
    rank: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description: '1-based rank in a refresh now; null when not eligible or beyond one refresh',
    }),
    served: Type.Union(
      [
        Type.Object({
          day: Type.Union([Type.String(), Type.Null()], {
            description:
              'UTC day (YYYY-MM-DD) of the rolling filter holding it; null: the per-reader filter keeps no day',
          }),
          rank_if_unseen: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
            description:
              'its rank in a refresh now were it alone not served yet; null when another rule removes it too',
          }),
        }),
        Type.Null(),
      ],
      { description: 'for-you and discover: the seen filter says it was served (null: not served, or another feed)' },
    ),
    at_ms: Type.Integer({ description: 'the time explained, epoch ms' }),
  }),
);
