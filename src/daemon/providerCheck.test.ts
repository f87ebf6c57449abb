import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Project } from '../core/types.js';
import { providerFor } from './jobs.js';
import { providerFix, providerProblem } from './providerCheck.js';

let repo: string;
let outside: string;
beforeEach(() => {
  repo = mkdtempSync(join(tmpdir(), 'maestro-check-repo-'));
  outside = mkdtempSync(join(tmpdir(), 'maestro-check-outside-'));
});
afterEach(() => {
  for (const d of [repo, outside]) rmSync(d, { recursive: true, force: true });
});

const scripted = (script: string): Project => ({ id: 'p1', name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script } }, createdAt: 0, updatedAt: 0, archivedAt: null });

describe('a scripted project checked when a task is created', () => {
  it('opens only a script in the repository: a file elsewhere, or reached through a link out, is never parsed into the answer', () => {
    // What a token file looks like to the script parser: one line, a string where an object belongs.
    const token = join(outside, 'token');
    writeFileSync(token, 's3cr3t-token-value\n');
    symlinkSync(token, join(repo, 'agent.yaml'));
    for (const script of [token, join(repo, 'agent.yaml')]) {
      expect(providerProblem(scripted(script), {}), script).toBeNull();
    }
    // The same file in the repository is read, and its problem said with file, line and field.
    const inRepo = join(repo, 'bad.yaml');
    writeFileSync(inRepo, 's3cr3t-token-value\n');
    expect(providerProblem(scripted(inRepo), {})).toBe(`its agent script is invalid: ${inRepo}:1: (root): Invalid input: expected object, received string`);
    expect(providerProblem(scripted(join(outside, 'gone.yaml')), {})).toBe(`its agent script ${join(outside, 'gone.yaml')} does not exist`);
  });
});

describe('the refusal of a task in a project whose script is wrong', () => {
  it('says the script is invalid, where and why, and to fix it: not to give the project an agent', () => {
    const bad = join(repo, 'agent.yaml');
    writeFileSync(bad, 'steps:\n  - match: {}\n    actions: 7\n');
    const project = scripted(bad);
    const said = providerFix(project, providerProblem(project, {})!);
    expect(said).toMatch(new RegExp(`^Project p cannot run tasks: its agent script is invalid: ${bad}:\\d+: steps\\.0\\.actions: `));
    expect(said).toContain('Fix the script (its format is in docs/scripted-agent.md)');
    expect(said).not.toContain('Give it an agent first');
  });
});

/** The words bash reads in `command`, as a person pasting it gets them. */
function shellWords(command: string): string[] {
  return execFileSync('bash', ['-c', `printf '%s\\0' ${command}`], { encoding: 'utf8' }).split('\0').slice(0, -1);
}

describe('the commands a refusal prints', () => {
  it("name a project whose name holds a space or a quote as one shell word, so each pastes as it reads", () => {
    const project: Project = { id: 'p1', name: "my repo's", repoPath: repo, config: {}, createdAt: 0, updatedAt: 0, archivedAt: null };
    const commands = [...providerFix(project, 'it has no agent provider').matchAll(/`(maestro project [^`]+)`/g)].map((m) => m[1]!);
    expect(commands).toHaveLength(3);
    for (const command of commands) expect(shellWords(command).slice(-2), command).toEqual(['--project', "my repo's"]);
    let said = '';
    try {
      providerFor(project, {});
    } catch (err) {
      said = (err as Error).message;
    }
    const named = /\(maestro (.+) --project (.+), or PATCH/.exec(said);
    expect(named, said).not.toBeNull();
    expect(shellWords(named![2]!)).toEqual(["my repo's"]);
  });
});
