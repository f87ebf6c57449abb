/**
 * Every command group of the `maestro` CLI, loaded on demand. Each module
 * exports `register(program, ctx)`; add one entry here per module, naming the
 * top-level commands (and aliases) it registers.
 *
 * Why lazy: loading every command module eagerly (and through them zod and
 * the agent CLIs' parsers, about 170 modules) cost a cold `maestro search`
 * more CPU than the search itself. When the first argument names a command,
 * only the module that owns it is loaded; help, version, an unknown command
 * or options before the command load them all, so commander prints exactly
 * what it always did. `commands.test.ts` checks this table against what the
 * modules register.
 */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';

export interface CommandModule {
  /** Top-level command names and aliases the module registers. */
  readonly commands: readonly string[];
  load(): Promise<{ register(program: Command, ctx: CliContext): void }>;
}

/** In registration order: `maestro --help` lists the commands in this order. */
export const COMMAND_MODULES: readonly CommandModule[] = [
  { commands: ['serve', 'start'], load: () => import('./serve.js') },
  { commands: ['stop'], load: () => import('./stop.js') },
  { commands: ['init'], load: () => import('./init.js') },
  { commands: ['project'], load: () => import('./project.js') },
  { commands: ['task'], load: () => import('./task.js') },
  { commands: ['run'], load: () => import('./run.js') },
  { commands: ['status'], load: () => import('./status.js') },
  { commands: ['daemons'], load: () => import('./daemons.js') },
  { commands: ['doctor'], load: () => import('./doctor.js') },
  { commands: ['mcp'], load: () => import('./mcp.js') },
  { commands: ['observe', 'wiki'], load: () => import('./observer.js') },
  { commands: [], load: () => import('./help.js') },
  { commands: ['search', 'load', 'spec', 'knowhow'], load: () => import('./knowledge.js') },
  { commands: ['session', 'knowledge'], load: () => import('./knowledgeRuns.js') },
];

/**
 * The modules a command line needs: the one owning its first argument when
 * that names a command, else all of them (help, version, an unknown command,
 * an option first).
 */
export function modulesFor(args: readonly string[]): readonly CommandModule[] {
  const first = args[0];
  const owner = first === undefined ? undefined : COMMAND_MODULES.find((m) => m.commands.includes(first));
  return owner ? [owner] : COMMAND_MODULES;
}
