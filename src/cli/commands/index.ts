/**
 * Every command group of the `maestro` CLI. Each module exports
 * `register(program)`; add one line here per module.
 */
import type { Command } from 'commander';
import { register as registerKnowledge } from './knowledge.js';
import { register as registerServe } from './serve.js';

export const COMMAND_MODULES: ReadonlyArray<(program: Command) => void> = [
  registerServe,
  registerKnowledge,
];
