/**
 * The SQL of migration 3 (following timeline, docs/following.md), listed by src/compose/migrations.ts.
 * Never edit it once released: append a new migration instead.
 *
 * - `users`: every known user, with its last-active time (the hot/cold split of the following design: fan-out pushes
 *   only to followers active within the window), exact follower / following counts (the celebrity
 *   threshold reads them) and `pull_tid`, the newest tid whose fan-out was skipped because the author
 *   was a celebrity (readers merge the outboxes of followed authors that have one).
 * - `follows` / `blocks`: the following design's 关注关系表, with the edge's creation time (epoch ms).
 * - `items.tid`: the timeline id of a published item (src/following/domain.ts), unique.
 * - `timeline_clock`: the one row whose lock orders tid assignment by commit.
 * - `fanout_pending`: published items whose fan-out is not done; its smallest tid (or, with none pending,
 *   `timeline_clock.last_tid + 1`) is the visibility watermark, and a sweep re-enqueues rows that a crash
 *   left behind (a transactional outbox).
 */
import type { Migration } from '../../kernel/sql/migrations.js';
export const FOLLOWING_TIMELINE_SQL = `
  CREATE TABLE users (
    id             text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_.-]{1,64}$'),
    created_at     bigint NOT NULL,                              -- epoch ms
    last_active_at bigint NULL,                                  -- epoch ms of the last timeline read
    followers      integer NOT NULL DEFAULT 0 CHECK (followers >= 0),
    following      integer NOT NULL DEFAULT 0 CHECK (following >= 0),
    pull_tid       bigint NULL                                   -- newest tid not pushed (celebrity)
  );
  CREATE INDEX users_followers_idx ON users (followers DESC, id);

  CREATE TABLE follows (
    follower_id text NOT NULL REFERENCES users (id),
    followee_id text NOT NULL REFERENCES users (id),
    created_at  bigint NOT NULL,                                 -- epoch ms
    PRIMARY KEY (follower_id, followee_id),
    CHECK (follower_id <> followee_id)
  );
  CREATE INDEX follows_followee_idx ON follows (followee_id, follower_id);
  CREATE INDEX follows_follower_time_idx ON follows (follower_id, created_at DESC, followee_id DESC);
  CREATE INDEX follows_followee_time_idx ON follows (followee_id, created_at DESC, follower_id DESC);

  CREATE TABLE blocks (
    blocker_id text NOT NULL REFERENCES users (id),
    blocked_id text NOT NULL REFERENCES users (id),
    created_at bigint NOT NULL,                                  -- epoch ms
    PRIMARY KEY (blocker_id, blocked_id),
    CHECK (blocker_id <> blocked_id)
  );
  CREATE INDEX blocks_time_idx ON blocks (blocker_id, created_at DESC, blocked_id DESC);

  ALTER TABLE items ADD COLUMN tid bigint NULL;
  CREATE UNIQUE INDEX items_tid_idx ON items (tid);
  CREATE INDEX items_author_tid_idx ON items (author_id, tid DESC) WHERE deleted_at IS NULL AND tid IS NOT NULL;

  CREATE TABLE timeline_clock (
    id       integer PRIMARY KEY CHECK (id = 1),
    last_tid bigint NOT NULL
  );
  INSERT INTO timeline_clock (id, last_tid) VALUES (1, 0);

  CREATE TABLE fanout_pending (
    tid         bigint PRIMARY KEY,
    item_id     text NOT NULL,
    author_id   text NOT NULL,
    now_ms      bigint NOT NULL,                                 -- publisher's (virtual) time, epoch ms
    recorded_at bigint NOT NULL                                  -- wall clock, epoch ms
  );
  CREATE INDEX fanout_pending_recorded_idx ON fanout_pending (recorded_at);
`;

/** Migration 3, as src/compose/migrations.ts lists it. */
export const FOLLOWING_MIGRATION: Migration = {
  version: 3,
  name: 'following timeline: users, follows, blocks, timeline ids, pending fan-outs',
  sql: FOLLOWING_TIMELINE_SQL,
};
