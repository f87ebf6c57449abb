/**
 * Every command group of the `maestro` CLI. Each module exports
 * `register(program)`; add one line here per module.
 */
import type { Command } from 'commander';
import { register as registerKnowledge } from './knowledge.js';
import { register as registerServe } from './serve.js';
import { register as registerObserver } from './observer.js';
import { register as registerInit } from './init.js';
import { register as registerProject } from './project.js';
import { register as registerTask } from './task.js';
import { register as registerRun } from './run.js';
import { register as registerStatus } from './status.js';
import { register as registerDoctor } from './doctor.js';
import { register as registerMcp } from './mcp.js';
import { register as registerHelp } from './help.js';
import { register as registerKnowledgeRuns } from './knowledgeRuns.js';

export const COMMAND_MODULES: ReadonlyArray<(program: Command) => void> = [
  registerServe,
  registerInit,
  registerProject,
  registerTask,
  registerRun,
  registerStatus,
  registerDoctor,
  registerMcp,
  registerObserver,
  registerHelp,
  registerKnowledge,
  registerKnowledgeRuns,
];
