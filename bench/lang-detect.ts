/**
 * Language detection of items published without `lang` (src/kernel/items/lang.ts): how often a title comes
 * back in the wrong language — which hides it from a reader whose language list says otherwise — and how
 * often it is `und` (which hides nothing), by the title's number of words. Prints figures; asserts nothing.
 * `npx tsx bench/lang-detect.ts`.
 *
 * Rules compared on the same titles in the same run:
 * - `reliable`: eld/small's answer when it calls it reliable (what Freshet did before issue 31);
 * - `shipped`: {@link detectLanguage} — at least MIN_DETECT_WORDS words (or a script of its own) and the best
 *   score ahead of the second by MIN_DETECT_MARGIN of itself;
 * - `words only` and `margin only`: each half of it alone.
 *
 * Titles: the 20,100 Hacker News titles and the 2,000 MIND news titles (all English), and 90 short titles in
 * nine other languages written for this benchmark (10 each of de, fr, es, ru, it, pt, nl, zh, ja: headlines of
 * 2–7 words).
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import {
  DETECT_CHARS,
  detectLanguage,
  MIN_DETECT_MARGIN,
  MIN_DETECT_WORDS,
  UNDETERMINED,
} from '../src/kernel/items/lang.js';
import { printTitle, runIfMain } from './support.js';

const HN = new URL('../../shared/data/hn/hn_posts_2015-09_to_2016-09_sample.csv.gz', import.meta.url);
const MIND = new URL('../../shared/data/mind/MINDsmall_train_sample_news.tsv.gz', import.meta.url);

/** Short headlines in other languages (written for this benchmark). */
const FOREIGN: Record<string, string[]> = {
  de: [
    'Die Bahn streikt wieder',
    'Neue Regeln für Mieter in Berlin',
    'Warum die Zinsen steigen',
    'Wetter: Sturm über Norddeutschland',
    'Der Bundestag beschließt das Gesetz',
    'Kinder lernen besser mit Pausen',
    'Ein Jahr nach der Wahl',
    'Schnelles Internet auf dem Land',
    'Preise für Strom sinken',
    'Die besten Bücher des Jahres',
  ],
  fr: [
    'La grève continue à Paris',
    'Le gouvernement annonce une réforme',
    'Pourquoi les prix augmentent',
    'Une nouvelle ligne de métro',
    'Les élections approchent',
    'Le climat change plus vite',
    'Un film sur la guerre',
    'La rentrée scolaire en septembre',
    'Les vacances coûtent cher',
    'Un musée rouvre ses portes',
  ],
  es: [
    'El gobierno aprueba la reforma',
    'La lluvia vuelve a Madrid',
    'Por qué suben los precios',
    'Nuevo récord de turistas',
    'Los jóvenes buscan vivienda',
    'El equipo gana la liga',
    'Una ley para proteger el agua',
    'La economía crece poco',
    'Cierra la fábrica de coches',
    'El verano más caluroso',
  ],
  ru: [
    'Новые правила для водителей',
    'Почему растут цены',
    'Выборы в городской совет',
    'Погода на выходные',
    'Открылся новый музей',
    'Школы переходят на новый график',
    'Курс рубля снова упал',
    'Зима будет холодной',
    'Метро закроют на ремонт',
    'Лучшие книги года',
  ],
  it: [
    'Il governo approva la legge',
    'Perché salgono i prezzi',
    'Nuovo record di turisti a Roma',
    'La scuola riapre a settembre',
    'Sciopero dei treni domani',
    'Il clima cambia in fretta',
    'Una mostra sul Rinascimento',
    'Le elezioni si avvicinano',
    'Il caffè costa di più',
    'La squadra vince il campionato',
  ],
  pt: [
    'O governo aprova a reforma',
    'Por que os preços sobem',
    'Chuva forte em São Paulo',
    'Nova linha de metrô',
    'As eleições estão chegando',
    'O time vence o campeonato',
    'Escolas voltam às aulas',
    'O verão mais quente',
    'Fábrica fecha as portas',
    'Um filme sobre a guerra',
  ],
  nl: [
    'Nieuwe regels voor huurders',
    'Waarom de prijzen stijgen',
    'De trein rijdt weer',
    'Het kabinet valt opnieuw',
    'Storm over het noorden',
    'Kinderen leren beter buiten',
    'De beste boeken van het jaar',
    'Een jaar na de verkiezingen',
    'Snel internet op het platteland',
    'De winkels gaan dicht',
  ],
  zh: [
    '政府发布新规定',
    '为什么物价上涨',
    '北京下雪了',
    '新地铁线路开通',
    '今年最好的书',
    '学校九月开学',
    '经济增长放缓',
    '春节假期安排',
    '电动车销量创新高',
    '天气预报',
  ],
  ja: [
    '新しい規則が発表された',
    'なぜ物価が上がるのか',
    '東京で大雪',
    '新しい地下鉄が開通',
    '今年のベスト本',
    '学校は九月に始まる',
    '経済成長が鈍化',
    '夏休みの予定',
    '電気自動車が人気',
    '天気予報',
  ],
};

interface Eld {
  detect(text: string): { language: string; isReliable(): boolean; getScores(): Record<string, number> };
}

type Rule = (text: string) => Promise<string>;

const wordCount = (s: string) => s.match(/[\p{L}\p{N}]+/gu)?.length ?? 0;

function rules(eld: Eld): [string, Rule][] {
  const reliable = (t: string) => {
    const r = eld.detect(t.slice(0, DETECT_CHARS).trim());
    return r.language && r.isReliable() ? r.language : UNDETERMINED;
  };
  const margin = (t: string) => {
    const r = eld.detect(t.slice(0, DETECT_CHARS).trim());
    if (!r.language || !r.isReliable()) return UNDETERMINED;
    const [best = 0, second = 0] = Object.values(r.getScores()).sort((a, b) => b - a);
    return best > 0 && (best - second) / best >= MIN_DETECT_MARGIN ? r.language : UNDETERMINED;
  };
  const ownScript = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}]/u;
  const fewWords = (t: string) => wordCount(t) < MIN_DETECT_WORDS && !ownScript.test(t);
  return [
    ['reliable', async (t) => reliable(t)],
    ['words only', async (t) => (fewWords(t) ? UNDETERMINED : reliable(t))],
    ['margin only', async (t) => margin(t)],
    ['shipped', detectLanguage],
  ];
}

const pct = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(1)} %`;

/** Right / und / wrong shares of `titles` (all in `lang`) under each rule, overall and by word count. */
async function englishTable(name: string, titles: string[], all: [string, Rule][]): Promise<void> {
  printTitle(`${name}: ${titles.length} English titles — right / und / wrong, by words in the title`);
  const buckets = ['1–3', '4–5', '6+', 'all'];
  const bucketOf = (t: string) => (wordCount(t) <= 3 ? '1–3' : wordCount(t) <= 5 ? '4–5' : '6+');
  console.log(
    ['rule', ...buckets.map((b) => `${b} (${titles.filter((t) => b === 'all' || bucketOf(t) === b).length})`)].join(
      ' | ',
    ),
  );
  for (const [label, rule] of all) {
    const counts = new Map(buckets.map((b) => [b, { right: 0, und: 0, wrong: 0, n: 0 }]));
    for (const t of titles) {
      const got = await rule(t);
      for (const b of [bucketOf(t), 'all']) {
        const c = counts.get(b)!;
        c.n++;
        if (got === 'en') c.right++;
        else if (got === UNDETERMINED) c.und++;
        else c.wrong++;
      }
    }
    const cells = buckets.map((b) => {
      const c = counts.get(b)!;
      return `${pct(c.right, c.n)} / ${pct(c.und, c.n)} / ${pct(c.wrong, c.n)}`;
    });
    console.log([label, ...cells].join(' | '));
  }
}

async function foreignTable(all: [string, Rule][]): Promise<void> {
  const n = Object.values(FOREIGN).flat().length;
  printTitle(`${n} short titles in nine other languages — right / und / wrong (of ${n})`);
  for (const [label, rule] of all) {
    let right = 0;
    let und = 0;
    let wrong = 0;
    for (const [lang, titles] of Object.entries(FOREIGN))
      for (const t of titles) {
        const got = await rule(t);
        if (got === lang) right++;
        else if (got === UNDETERMINED) und++;
        else wrong++;
      }
    console.log(`${label} | ${right} / ${und} / ${wrong}`);
  }
}

export async function run(): Promise<void> {
  const eld = (await import('eld/small')).eld as Eld;
  const hn = (parse(gunzipSync(readFileSync(HN)), { columns: true }) as { title: string }[]).map((r) => r.title);
  const mind = gunzipSync(readFileSync(MIND))
    .toString('utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => l.split('\t')[3] ?? '');
  console.log(`MIN_DETECT_WORDS = ${MIN_DETECT_WORDS}, MIN_DETECT_MARGIN = ${MIN_DETECT_MARGIN}`);
  const all = rules(eld);
  await englishTable('Hacker News', hn, all);
  await englishTable('MIND news', mind, all);
  await foreignTable(all);
  for (const t of ['Postgres tuning', 'Rust compilers'])
    console.log(`"${t}": reliable ${await all[0]![1](t)}, shipped ${await detectLanguage(t)}`);
}

runIfMain(import.meta.url, run);
