/**
 * Versioned, append-only migrations. Never edit one that has shipped: add the
 * next. `{{serial}}` becomes the engine's auto-increment primary key.
 */
import { initial } from './001_initial.js';
import { orchestrator } from './002_orchestrator.js';
import { multihost } from './003_multihost.js';
import { notify } from './004_notify.js';
import { readyOrder } from './005_ready_order.js';
import { notifyAfterCommit } from './006_notify_after_commit.js';
import { projectArchive } from './007_project_archive.js';
import { autoApproveFrom } from './008_auto_approve_from.js';
import { feedbackSource } from './009_feedback_source.js';
import { parentVersion } from './010_parent_version.js';
import { daemonSettings } from './011_daemon_settings.js';
import { runKnowledge } from './012_run_knowledge.js';

import type { Migration } from './migration.js';
export type { Migration } from './migration.js';

export const MIGRATIONS: readonly Migration[] = [initial, orchestrator, multihost, notify, readyOrder, notifyAfterCommit, projectArchive, autoApproveFrom, feedbackSource, parentVersion, daemonSettings, runKnowledge];

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
