import { openFreshet } from 'freshet-engine';

// The embedded default in a data folder of its own: PGlite + in-process stores, nothing to install.
const freshet = await openFreshet({ dataDir: process.env.EXAMPLE_DATA_DIR ?? './.freshet-example' });
try {
  const now = Date.now();
  await freshet.useCases.publishItems(
    [
      {
        id: 'p1',
        authorId: 'ada',
        title: 'Rust in production',
        text: '',
        url: null,
        tags: ['rust'],
        publishedAt: now - 60_000,
        popularity: 12,
      },
      {
        id: 'p2',
        authorId: 'bob',
        title: 'Postgres tuning',
        text: '',
        url: null,
        tags: ['sql'],
        publishedAt: now - 30_000,
        popularity: 3,
      },
    ],
    now,
  );
  await freshet.useCases.follow('reader_1', 'ada', now);
  const forYou = await freshet.forYou.page('reader_1', 'refresh', 10, now);
  const following = await freshet.following.timeline.page('reader_1', { limit: 10 }, now);
  await freshet.useCases.recordViews([{ itemId: 'p2', visitorId: 'reader_1', nowMs: now }]);
  console.log(
    'for you:',
    forYou.items.map((i) => i.id),
    '| following:',
    following.items.map((e) => e.item.id),
  );
} finally {
  await freshet.close();
}
