import { openFreshet, type RecallSource, type ReRank } from 'freshet-engine';

// An extra recall source: the application's editors' picks, each with a score (compared within the source).
const picks: RecallSource = {
  name: 'editors_picks',
  async candidates() {
    return [{ itemId: 'p3', score: 1 }];
  },
};

// A re-rank hook: the feed's clean candidates in, their order out — here, items by "ada" first.
// It may drop candidates; an id it was not given is ignored (it cannot bring back a seen item).
const adaFirst: ReRank = (_query, candidates) => [
  ...candidates.filter((c) => c.authorId === 'ada').map((c) => c.itemId),
  ...candidates.filter((c) => c.authorId !== 'ada').map((c) => c.itemId),
];

const freshet = await openFreshet(
  { dataDir: process.env.EXAMPLE_DATA_DIR ?? './.freshet-example' },
  { ranking: { forYou: { sources: [picks], rerank: adaFirst }, discover: { rerank: adaFirst } } },
);
try {
  const now = Date.now();
  const item = (id: string, authorId: string, title: string, popularity: number) => ({
    id,
    authorId,
    title,
    text: '',
    url: null,
    tags: [],
    publishedAt: now - 60_000,
    popularity,
  });
  await freshet.useCases.publishItems(
    [
      item('p1', 'bob', 'Postgres tuning', 50),
      item('p2', 'ada', 'Rust in production', 1),
      item('p3', 'cy', 'Picked', 0),
    ],
    now,
  );
  const page = await freshet.forYou.page('reader_1', 'refresh', 3, now);
  console.log(
    'for you:',
    page.items.map((i) => i.id),
  );
} finally {
  await freshet.close();
}
