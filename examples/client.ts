import { FreshetClient, FreshetClientError } from 'freshet-engine/client';

// A running server (`npx freshet serve`) and its service key.
const serviceKey = process.env.FRESHET_SERVICE_KEY;
if (!serviceKey) {
  console.error("set FRESHET_SERVICE_KEY to the server's service key (serviceKey in .freshet/secrets.json)");
  process.exit(1);
}
const client = new FreshetClient({ baseUrl: process.env.FRESHET_URL ?? 'http://127.0.0.1:8080', serviceKey });

const now = Date.now();
await client.items.publish([
  {
    id: 'c1',
    author_id: 'ada',
    title: 'Rust in production',
    tags: ['rust'],
    published_at: Math.floor(now / 1000) - 60,
  },
  { id: 'c2', author_id: 'bob', title: 'Postgres tuning', tags: ['sql'], published_at: Math.floor(now / 1000) - 30 },
]);
await client.follows.follow('reader_1', 'ada');

// Act for one reader: X-Freshet-Reader on every feed request.
const reader = client.as('reader_1');
const first = await reader.forYou.refresh({ limit: 10 });
const timeline = [];
for await (const entry of reader.following.items({ limit: 50 })) timeline.push(entry.id);
await reader.views.record({ item_id: 'c2', visitor_id: 'reader_1' });
const hot = await client.hot.top({ range: '24h', limit: 5 });

try {
  await reader.forYou.refresh({ limit: 500 }); // out of 1..100
} catch (err) {
  if (!(err instanceof FreshetClientError)) throw err;
  console.log(
    'for you:',
    first.items.map((i) => i.id),
    '| following:',
    timeline,
    '| hot:',
    hot.items.map((i) => i.id),
    '| error:',
    err.status,
    err.code,
  );
}
