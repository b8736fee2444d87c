/** The CandidateRecall contract (fill, older, matches, interestLexemes, pooled) on PGlite and the PostgreSQL server. */
import { PostgresContentStore } from '../../src/content/postgres-content-store.js';
import { PostgresRecall } from '../../src/for-you/adapters/postgres-recall.js';
import { candidateRecallContract } from '../contracts/candidate-recall.contract.js';
import { adopt, sqlEngines } from '../support/contract.js';

for (const engine of sqlEngines()) {
  adopt(candidateRecallContract, engine, ({ sql }) => {
    const content = new PostgresContentStore(sql, { ownsSql: false });
    return { content, recall: new PostgresRecall(sql), close: () => content.close() };
  });
}
