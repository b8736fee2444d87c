/** The NotificationStore contract on PGlite (the embedded default) and on the PostgreSQL server. */
import { PostgresNotificationStore } from '../../src/notifications/adapters/postgres-notification-store.js';
import { adopt, pglite, postgres } from '../support/contract.js';
import { notificationStoreContract } from '../contracts/notification-store.contract.js';

adopt(notificationStoreContract, pglite(), async ({ sql }) => new PostgresNotificationStore(sql));
adopt(notificationStoreContract, postgres(), async ({ sql }) => new PostgresNotificationStore(sql));
