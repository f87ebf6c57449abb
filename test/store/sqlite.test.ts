import { freshSqlite } from '../helpers/db.js';
import { defineStoreContract } from './contract.js';
import { defineArchiveContract } from './contractArchive.js';

defineStoreContract('SQLite', freshSqlite);
defineArchiveContract('SQLite', freshSqlite);
