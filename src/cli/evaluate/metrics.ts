/**
 * Top-k ranking metrics of `freshet evaluate` (docs/evaluation.md "Metrics"): pure functions of a ranked
 * list (best first, items distinct, as the feeds and the baselines give them) and a reader's held-out items
 * (binary relevance: each held-out item has gain 1, anything else 0). The definitions are RecBole's
 * (recbole.evaluator.metrics: Precision, Recall, NDCG, Hit, ItemCoverage), which Recommenders'
 * `precision_at_k`, `recall_at_k`, `ndcg_at_k` share; a list shorter than k counts its empty places as misses.
 */

/** The metrics of one method, each the mean over the evaluated readers (coverage: over all of them). */
export interface Metrics {
  precision: number;
  recall: number;
  ndcg: number;
  hitRate: number;
  coverage: number;
}

/** Held-out items among the first `k` of `list`. */
function hits<T>(list: readonly T[], relevant: ReadonlySet<T>, k: number): number {
  let n = 0;
  for (let i = 0; i < Math.min(k, list.length); i++) if (relevant.has(list[i]!)) n++;
  return n;
}

/** P@k: held-out items in the first `k` / `k`. */
export function precisionAtK<T>(list: readonly T[], relevant: ReadonlySet<T>, k: number): number {
  return hits(list, relevant, k) / k;
}

/** R@k: held-out items in the first `k` / all held-out items (0 when there are none). */
export function recallAtK<T>(list: readonly T[], relevant: ReadonlySet<T>, k: number): number {
  return relevant.size === 0 ? 0 : hits(list, relevant, k) / relevant.size;
}

/**
 * nDCG@k (Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques", ACM TOIS 20(4), 2002)
 * with binary gains and the log2 discount: DCG = Σ_{i=1..k} rel_i / log2(i + 1), divided by the ideal DCG
 * of min(k, |held-out|) relevant items at the top (0 when there are none).
 */
export function ndcgAtK<T>(list: readonly T[], relevant: ReadonlySet<T>, k: number): number {
  const ideal = Math.min(k, relevant.size);
  if (ideal === 0) return 0;
  let dcg = 0;
  for (let i = 0; i < Math.min(k, list.length); i++) if (relevant.has(list[i]!)) dcg += 1 / Math.log2(i + 2);
  let idcg = 0;
  for (let i = 0; i < ideal; i++) idcg += 1 / Math.log2(i + 2);
  return dcg / idcg;
}

/** HR@k: 1 when a held-out item is in the first `k`, else 0. */
export function hitAtK<T>(list: readonly T[], relevant: ReadonlySet<T>, k: number): number {
  return hits(list, relevant, k) > 0 ? 1 : 0;
}

/**
 * Catalog coverage (RecBole's ItemCoverage; Ge, Delgado-Battenfeld & Jannach, "Beyond accuracy", RecSys
 * 2010): distinct items in the first `k` of any list / the catalog's size.
 */
export function catalogCoverage<T>(lists: readonly (readonly T[])[], k: number, catalogSize: number): number {
  const shown = new Set<T>();
  for (const list of lists) for (const item of list.slice(0, k)) shown.add(item);
  return catalogSize === 0 ? 0 : shown.size / catalogSize;
}

/**
 * Every metric of one method: `lists[i]` is the list served to the reader whose held-out items are
 * `relevant[i]`. @throws RangeError when the two are not aligned or there is no reader.
 */
export function scoreLists<T>(
  lists: readonly (readonly T[])[],
  relevant: readonly ReadonlySet<T>[],
  k: number,
  catalogSize: number,
): Metrics {
  if (lists.length !== relevant.length || lists.length === 0)
    throw new RangeError(`${lists.length} lists for ${relevant.length} readers: one list per evaluated reader`);
  const mean = (f: (list: readonly T[], rel: ReadonlySet<T>, k: number) => number) =>
    lists.reduce((sum, list, i) => sum + f(list, relevant[i]!, k), 0) / lists.length;
  return {
    precision: mean(precisionAtK),
    recall: mean(recallAtK),
    ndcg: mean(ndcgAtK),
    hitRate: mean(hitAtK),
    coverage: catalogCoverage(lists, k, catalogSize),
  };
}
