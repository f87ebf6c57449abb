/**
 * The scripted agent: deterministic, driven by a script file, and the only
 * fake in the system (it stands in for the model). Every pipeline test and the
 * offline demo use it. The format is documented in docs/scripted-agent.md.
 *
 * A call is answered by the first step whose match fits (role, title, prompt)
 * and whose `times` is not used up. Counts live in memory, one provider per run,
 * and also in the optional call log, so "fail N times" holds across runs and
 * worker restarts and a test can count the agent calls a run made.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { MaestroError } from '../core/errors.js';
import { holds, landing } from '../lib/paths.js';
import { renderPlan, renderVerdict } from './render.js';
import { loadScript, matchRegex, type Script, type ScriptStep } from './scriptFile.js';
import type { AgentProvider, AgentRequest, AgentResult, AgentRole } from './types.js';

export interface ScriptedOptions {
  script: string;
  callLog?: string;
}

export interface ScriptedCall {
  at: number;
  pid: number;
  role: AgentRole;
  title: string;
  model: string;
  step: number;
  allowedTools: string[];
  permissionMode: string;
}

export function readCallLog(path: string): ScriptedCall[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).flatMap((l) => {
    try {
      return [JSON.parse(l) as ScriptedCall];
    } catch {
      return []; // a torn last line from a killed worker
    }
  });
}

/**
 * Whether a write to `path` lands in `cwd`, links resolved (landing). A link in the worktree to a folder outside
 * took writes there ("a relative path inside the worktree" said nothing of links); a link that leads nowhere lands
 * nowhere known.
 */
function landsIn(cwd: string, path: string): boolean {
  const landed = landing(path);
  return 'real' in landed && holds(cwd, landed.real);
}

/**
 * Refuses a call log the worker should not append to. The worker runs outside the agent sandbox, and each line
 * carries a task's title, so the log is an `.ndjson` file in its script's folder (or below), links followed: never a
 * file something runs or reads as settings (a git hook, a shell profile, a project's script), never the token beside
 * a script somewhere else. The API does not take a call log at all (src/daemon/scriptedPaths.ts); this holds for
 * what reaches a worker anyway (settings stored before that rule, a hand-written job.json).
 */
function checkCallLog(script: string, callLog: string): void {
  const landed = landing(callLog);
  const folder = dirname(resolve(script));
  if (!callLog.endsWith('.ndjson') || !('real' in landed) || !holds(folder, landed.real)) {
    throw new MaestroError('CONFIG_INVALID', `scripted agent: its call log ${callLog} must be an .ndjson file in the folder of its script (${folder}), links followed; nothing was written`, {
      details: { field: 'provider.callLog', callLog, script },
    });
  }
}

function matches(pattern: string | undefined, value: string): boolean {
  if (pattern === undefined) return true;
  const rx = matchRegex(pattern);
  if (rx) return rx.test(value);
  return value.toLowerCase().includes(pattern.toLowerCase());
}

function roleMatches(want: ScriptStep['match']['role'], role: AgentRole): boolean {
  if (want === 'any' || want === role) return true;
  return want === 'review' && role.startsWith('review:');
}

function abortError(): Error {
  return new MaestroError('INTERRUPTED', 'the agent run was aborted');
}

export class ScriptedProvider implements AgentProvider {
  readonly kind = 'scripted' as const;
  private readonly script: Script;
  private readonly counts = new Map<number, number>();

  constructor(private readonly options: ScriptedOptions) {
    if (options.callLog !== undefined) checkCallLog(options.script, options.callLog);
    this.script = loadScript(options.script);
  }

  private used(step: number): number {
    if (this.options.callLog) return readCallLog(this.options.callLog).filter((c) => c.step === step).length;
    return this.counts.get(step) ?? 0;
  }

  private pick(req: AgentRequest): { index: number; step: ScriptStep } {
    const index = this.script.steps.findIndex((s, i) =>
      roleMatches(s.match.role, req.role) && matches(s.match.title, req.taskTitle) && matches(s.match.prompt, req.prompt) &&
      (s.times === undefined || this.used(i) < s.times));
    if (index < 0) {
      throw new MaestroError('SCRIPT_INVALID', `no step in agent script ${this.options.script} matches role "${req.role}" and task "${req.taskTitle}"`, {
        details: { script: this.options.script, role: req.role, title: req.taskTitle },
      });
    }
    return { index, step: this.script.steps[index]! };
  }

  async run(req: AgentRequest): Promise<AgentResult> {
    if (req.signal.aborted) throw abortError();
    const { index, step } = this.pick(req);
    const callNumber = this.used(index) + 1;
    // Count the call before acting, so a crash mid-call still counts it.
    this.counts.set(index, callNumber);
    if (this.options.callLog) {
      mkdirSync(dirname(this.options.callLog), { recursive: true });
      const call: ScriptedCall = { at: Date.now(), pid: process.pid, role: req.role, title: req.taskTitle, model: req.model, step: index, allowedTools: req.allowedTools, permissionMode: req.permissionMode };
      appendFileSync(this.options.callLog, JSON.stringify(call) + '\n');
    }
    const usage = step.usage ?? { inputTokens: Math.ceil(req.prompt.length / 4), outputTokens: 0, costUsd: 0 };
    if (callNumber <= step.failTimes) throw new MaestroError('AGENT_FAILED', `${step.failMessage} (scripted failure ${callNumber} of ${step.failTimes})`);

    const vars: Record<string, string> = { title: req.taskTitle, model: req.model, reply: '' };
    const fill = (s: string) => s.replace(/\{\{(\w+)\}\}/g, (_, k: string) => vars[k] ?? '');
    // Placeholders are filled in paths too; the result must still stay inside the working directory.
    const inside = (p: string) => {
      const full = resolve(req.cwd, fill(p));
      if (full !== req.cwd && !full.startsWith(req.cwd.endsWith(sep) ? req.cwd : req.cwd + sep)) {
        throw new MaestroError('SCRIPT_INVALID', `scripted agent: ${fill(p)} is outside the working directory`);
      }
      return full;
    };
    // Tool permissions hold for the fake too: a read-only call (reviews, plans) may not change files.
    const canWrite = req.permissionMode !== 'plan' && req.allowedTools.some((t) => t === 'Write' || t === 'Edit');
    const writable = (p: string) => {
      if (!canWrite) throw new MaestroError('AGENT_FAILED', `scripted agent: changing ${p} refused: this ${req.role} call has read-only tools`);
      const full = inside(p);
      if (!landsIn(req.cwd, full)) throw new MaestroError('SCRIPT_INVALID', `scripted agent: ${fill(p)} leads out of the working directory through a link`);
      return full;
    };
    const out: string[] = [];
    const say = (text: string) => {
      out.push(text);
      req.onToken(text);
    };
    for (const action of step.actions) {
      if (req.signal.aborted) throw abortError();
      if ('text' in action) say(fill(action.text));
      else if ('write' in action) {
        const p = writable(action.write.path);
        mkdirSync(dirname(p), { recursive: true });
        writeFileSync(p, fill(action.write.content));
      } else if ('append' in action) {
        const p = writable(action.append.path);
        mkdirSync(dirname(p), { recursive: true });
        appendFileSync(p, fill(action.append.content));
      } else if ('edit' in action) {
        const p = writable(action.edit.path);
        const before = existsSync(p) ? readFileSync(p, 'utf8') : null;
        if (before === null || !before.includes(action.edit.find)) {
          throw new MaestroError('AGENT_FAILED', `scripted edit: "${action.edit.find}" not found in ${action.edit.path}`);
        }
        writeFileSync(p, before.replace(action.edit.find, fill(action.edit.replace)));
      } else if ('delete' in action) rmSync(writable(action.delete), { force: true });
      else if ('ask' in action) vars.reply = await req.askUser(fill(action.ask));
      else if ('plan' in action) say(renderPlan(action.plan));
      else if ('verdict' in action) say(renderVerdict(action.verdict));
      else if ('answer' in action) say(fill(action.answer));
      else if ('wait' in action) await delay(action.wait, undefined, { signal: req.signal }).catch(() => { throw abortError(); });
      else if ('hang' in action) await new Promise((_, reject) => req.signal.addEventListener('abort', () => reject(abortError()), { once: true }));
      else if ('fail' in action) throw new MaestroError('AGENT_FAILED', fill(action.fail));
      else {
        const never: never = action;
        throw new Error(`unknown action ${JSON.stringify(never)}`);
      }
    }
    const text = out.join('\n');
    return { text, sessionId: `scripted-${index}-${callNumber}`, usage: { ...usage, outputTokens: step.usage?.outputTokens ?? Math.ceil(text.length / 4) } };
  }
}
