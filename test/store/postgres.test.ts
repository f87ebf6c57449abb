import { freshPostgres, pgAvailable } from '../helpers/db.js';
import { PG_MISSING } from '../helpers/postgres.js';
import { defineStoreContract } from './contract.js';

// Skips only on a developer machine without PostgreSQL, and says so; globalSetup fails CI instead.
if (!pgAvailable()) process.stderr.write(PG_MISSING);
defineStoreContract('PostgreSQL', freshPostgres, !pgAvailable());
