import { freshSqlite } from '../helpers/db.js';
import { defineStoreContract } from './contract.js';

defineStoreContract('SQLite', freshSqlite);
