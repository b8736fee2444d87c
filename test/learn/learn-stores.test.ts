/** The learning room's store contracts on both SQL engines (PGlite and the PostgreSQL server). */
import { PostgresInteractionStore } from '../../src/learn/adapters/postgres-interactions.js';
import { PostgresModelStore } from '../../src/learn/adapters/postgres-model-store.js';
import { interactionStoreContract } from '../contracts/interaction-store.contract.js';
import { modelStoreContract } from '../contracts/model-store.contract.js';
import { adopt, sqlEngines } from '../support/contract.js';

for (const engine of sqlEngines()) {
  adopt(interactionStoreContract, engine, ({ sql }) => new PostgresInteractionStore(sql));
  adopt(modelStoreContract, engine, ({ sql }) => new PostgresModelStore(sql));
}
