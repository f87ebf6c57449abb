import { freshSqlite } from '../helpers/db.js';
import { defineStoreContract } from './contract.js';
import { defineArchiveContract } from './contractArchive.js';
import { defineAutoApprovalContract } from './contractAutoApproval.js';
import { defineVersionDepsContract } from './contractVersionDeps.js';
import { defineRetryPlanContract } from './contractRetryPlan.js';
import { defineMergeCheckLostContract } from './contractMergeCheckLost.js';
import { defineMergeCheckAtWorkContract } from './contractMergeCheckAtWork.js';

defineStoreContract('SQLite', freshSqlite);
defineArchiveContract('SQLite', freshSqlite);
defineAutoApprovalContract('SQLite', freshSqlite);
defineVersionDepsContract('SQLite', freshSqlite);
defineRetryPlanContract('SQLite', freshSqlite);
defineMergeCheckLostContract('SQLite', freshSqlite);
defineMergeCheckAtWorkContract('SQLite', freshSqlite);
