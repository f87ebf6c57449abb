/**
 * Versioned, append-only migrations. Never edit one that has shipped: add the
 * next. `{{serial}}` becomes the engine's auto-increment primary key.
 */
import { initial } from './001_initial.js';
import { orchestrator } from './002_orchestrator.js';
import { multihost } from './003_multihost.js';
import { notify } from './004_notify.js';

export interface Migration {
  version: number;
  name: string;
  /** Statements for both engines. */
  statements: string[];
  /** Extra statements for one engine only. */
  sqlite?: string[];
  postgres?: string[];
}

export const MIGRATIONS: readonly Migration[] = [initial, orchestrator, multihost, notify];

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
