/**
 * Whether a project's agent can run at all, asked when a task is created so a
 * missing provider is refused at once (with the command that fixes it) rather
 * than found by the first run, which would leave the task needing attention.
 * Only what can be known without starting the agent: the provider settings
 * parse, claude has credentials, a command's program exists, a script's file reads as a script,
 * an agent CLI (codex, gemini, cursor, opencode) is on PATH.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { Project } from '../core/types.js';
import { CLI_TOOLS } from '../agents/cli/tools.js';
import { loadScript } from '../agents/scriptFile.js';
import { locateTool } from '../agents/cli/which.js';
import { hasClaudeCredentials, providerFor } from './jobs.js';
import { inRepository } from './scriptedPaths.js';
import { shellWord } from '../core/diffGateWays.js';

function onPath(program: string, env: NodeJS.ProcessEnv): boolean {
  return (env.PATH ?? '').split(delimiter).filter(Boolean).some((dir) => executable(join(dir, program)));
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * What is wrong with a scripted agent's script (file, line, field), or null: found at the task's creation, not by its
 * first run. Only a script in the project's repository is opened here, decided by its path first: one elsewhere was
 * set by Maestro's own callers (the demo, the tests: the API refuses it, scriptedPaths.ts), and a refusal that parsed
 * any file there would say its structure back (`token:1: (root): expected object`). Its run reads it.
 */
function scriptProblem(repoPath: string, file: string): string | null {
  if (!isAbsolute(file)) return null; // the API no longer takes one; the worker resolves it, not the daemon
  if (!existsSync(file)) return `its agent script ${file} does not exist`;
  if (!inRepository(repoPath, file)) return null;
  try {
    loadScript(file);
    return null;
  } catch (err) {
    return `its agent script is invalid: ${(err as Error).message.replace(/^invalid agent script: /, '')}`;
  }
}

/** Why the project's tasks could not run, or null when its provider looks usable. */
export function providerProblem(project: Project, env: NodeJS.ProcessEnv): string | null {
  // Said here without the project's name (providerFix names it once).
  if (project.config.provider === undefined && !hasClaudeCredentials(env)) return 'it has no agent provider, and the default one (claude) has no credentials here (no ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN or Claude Code login)';
  let provider;
  try {
    provider = providerFor(project, env);
  } catch (err) {
    return (err as Error).message;
  }
  switch (provider.kind) {
    case 'command': {
      const program = provider.command[0]!;
      // A relative path with a slash is resolved in the task's worktree, which does not exist yet.
      if (isAbsolute(program)) return executable(program) ? null : `its command agent ${program} does not exist or is not executable`;
      if (!program.includes('/') && !onPath(program, env)) return `its command agent "${program}" is not on the daemon's PATH`;
      return null;
    }
    case 'scripted':
      return scriptProblem(project.repoPath, provider.script);
    case 'claude':
      if (provider.executable && !existsSync(provider.executable)) return `its Claude Code executable ${provider.executable} does not exist`;
      return hasClaudeCredentials({ ...env, ...provider.env }) ? null : 'its agent is claude, but the daemon has no Claude credentials (no ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN or Claude Code login)';
    case 'codex':
    case 'gemini':
    case 'cursor':
    case 'opencode': {
      // Installed is what can be told without starting it; a lost login is the first run's clear error (AGENT_LOGIN_REQUIRED).
      const spec = CLI_TOOLS[provider.kind];
      if (provider.executable) return executable(provider.executable) ? null : `its ${spec.name} executable ${provider.executable} does not exist or is not executable`;
      return locateTool(spec, { ...env, ...provider.env }).path ? null : `its agent is ${provider.kind}, but ${spec.name} is not installed where the daemon runs (no ${[spec.executable, ...(spec.alternativeExecutables ?? [])].join(' or ')} on PATH)`;
    }
    default: {
      const never: never = provider;
      return `unknown agent provider ${String((never as { kind: string }).kind)}`;
    }
  }
}

/**
 * The refusal's text: the problem, then the way out. A scripted project has an agent: its script is what to fix
 * (advice to "give it an agent first" sent a person to replace a provider they had set on purpose).
 */
export function providerFix(project: Project, problem: string): string {
  const kind = (project.config.provider as { kind?: unknown } | undefined)?.kind;
  if (kind === 'scripted') {
    return `Project ${project.name} cannot run tasks: ${problem.replace(/\.+$/, '')}. Fix the script (its format is in docs/scripted-agent.md) and try again.`;
  }
  return [
    `Project ${project.name} cannot run tasks: ${problem.replace(/\.+$/, '')}.`,
    `Give it an agent first, e.g. \`maestro project config set provider.kind command provider.command '["/path/to/agent","{prompt}"]' --project ${shellWord(project.name)}\``,
    `(the agent contract is in docs/agents.md), or \`maestro project config set provider.kind claude --project ${shellWord(project.name)}\` with ANTHROPIC_API_KEY set for the daemon,`,
    `or one of codex, gemini, cursor, opencode that \`maestro doctor\` shows installed and logged in (\`maestro project config set provider.kind codex --project ${shellWord(project.name)}\`).`,
  ].join(' ');
}
