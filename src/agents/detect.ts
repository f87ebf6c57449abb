/**
 * Which agent tools this machine can run, and whether each is logged in:
 * `maestro doctor`, `maestro project add` and the board's settings
 * (GET /api/agents) all ask here. Installed means the executable is on PATH.
 * Logged in is read, cheapest first, from a credential variable, then the
 * file a login writes, then the tool's own status command (codex `login
 * status`, `cursor-agent status`), which is given a few seconds at most.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CLI_TOOLS, CLI_TOOL_KINDS, type CliToolSpec } from './cli/tools.js';
import { locateTool } from './cli/which.js';
import { claudeConfigDir } from '../config/env.js';

export interface AgentToolStatus {
  kind: 'claude' | (typeof CLI_TOOL_KINDS)[number];
  name: string;
  executable: string;
  /** Where the executable is, or null when it is not on PATH. */
  path: string | null;
  installed: boolean;
  /** null when it could not be told (no variable, no file, no status command). */
  loggedIn: boolean | null;
  /** How that was told, or what to do: "OPENAI_API_KEY is set", "run `codex login`". */
  detail: string;
}

const STATUS_TIMEOUT_MS = 5000;
/** Credential variables that are themselves a credential (not a path or a switch). */
const SECRET_NAME = /(KEY|TOKEN)(_ID)?$/;

function runStatus(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ ok: boolean; line: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env, timeout: STATUS_TIMEOUT_MS, encoding: 'utf8' }, (err, stdout, stderr) => {
      const line = `${stdout}\n${stderr}`.split('\n').map((l) => l.trim()).find(Boolean) ?? '';
      // Some status commands exit 0 and say so in words.
      resolve({ ok: !err && !/not (logged|signed|authenticated)/i.test(line), line });
    });
  });
}

async function detectCli(spec: CliToolSpec, env: NodeJS.ProcessEnv): Promise<AgentToolStatus> {
  const { name: executable, path } = locateTool(spec, env);
  const base = { kind: spec.kind, name: spec.name, executable, path, installed: path !== null };
  const variable = spec.credentialEnv.find((v) => SECRET_NAME.test(v) && env[v]);
  if (variable) return { ...base, loggedIn: true, detail: `${variable} is set` };
  const file = spec.credentialFiles(env).find((f) => existsSync(f));
  if (file) return { ...base, loggedIn: true, detail: `login found in ${file}` };
  if (path && spec.statusArgs) {
    const status = await runStatus(path, spec.statusArgs, env);
    return { ...base, loggedIn: status.ok, detail: status.ok ? `\`${executable} ${spec.statusArgs.join(' ')}\`: ${status.line}` : `not logged in${status.line ? ` (${status.line})` : ''}: ${spec.loginHint}` };
  }
  const names = [spec.executable, ...(spec.alternativeExecutables ?? [])].join(' or ');
  return { ...base, loggedIn: path ? false : null, detail: path ? `no login found: ${spec.loginHint}` : `not installed (no ${names} on PATH)` };
}

/** Claude runs through the Agent SDK's bundled Claude Code: always installed; logged in by key or by a Claude Code login. */
function detectClaude(env: NodeJS.ProcessEnv): AgentToolStatus {
  const base = { kind: 'claude' as const, name: 'Claude Code', executable: 'claude (bundled with the Agent SDK)', path: null, installed: true };
  // Only Anthropic's own keys: an AWS key alone does not make Claude Code use Bedrock.
  const variable = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'].find((v) => env[v]);
  if (variable) return { ...base, loggedIn: true, detail: `${variable} is set` };
  const file = join(claudeConfigDir(env), '.credentials.json');
  if (existsSync(file)) return { ...base, loggedIn: true, detail: `login found in ${file}` };
  return { ...base, loggedIn: false, detail: 'no ANTHROPIC_API_KEY and no Claude Code login: run `claude` and log in, or set ANTHROPIC_API_KEY' };
}

export async function detectAgents(env: NodeJS.ProcessEnv): Promise<AgentToolStatus[]> {
  return [detectClaude(env), ...(await Promise.all(CLI_TOOL_KINDS.map((k) => detectCli(CLI_TOOLS[k], env))))];
}
