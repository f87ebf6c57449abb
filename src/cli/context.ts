import type { Env } from '../config/env.js';

/** What every command gets from the CLI's entry (main.ts): the environment, read there once. */
export interface CliContext {
  readonly env: Env;
}
